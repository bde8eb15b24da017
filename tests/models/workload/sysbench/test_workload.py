"""The sysbench client threads against a fake server: limits, rates, reports."""
import numpy as np
import pytest

from models.sim import Simulator
from models.workload.sysbench import Sysbench, SysbenchConfig
from models.workload.sysbench.report import hist_percentile, HIST_SIZE, _DEDUCT, _MULT

from .fake_server import FakeServer


def _run(scale=1.0, seed=0, server_kw=None, **kw):
    sim = Simulator()
    srv = FakeServer(sim, **(server_kw or {}))
    kw.setdefault("table_size", 1000)
    sb = Sysbench(sim, SysbenchConfig(**kw), srv, np.random.default_rng(seed), scale)
    sb.start()
    sim.run()
    return sb.results(), sb, srv, sim


def test_tables_created_before_start_and_server_stopped_at_the_end():
    r, sb, srv, sim = _run(test="oltp_point_select", time=0.1, tables=3)
    assert [t.name for t in srv.tables] == ["sbtest1", "sbtest2", "sbtest3"]
    assert srv.started and srv.stopped
    assert srv.interval_ended_ns == sb.deadline_ns + 1      # the series ends with it


def test_closed_loop_throughput_is_threads_over_event_time():
    # oltp_point_select: one 20 us op + a 50 us commit per event, no contention
    for threads in (1, 4):
        r, sb, srv, sim = _run(test="oltp_point_select", time=0.2, threads=threads,
                               server_kw=dict(op_ns=20_000, row_ns=0, commit_ns=50_000))
        assert r["tps"] == pytest.approx(threads / 70e-6, rel=0.01)
        assert r["latency_avg_ms"] == pytest.approx(0.07)
        assert r["latency_min_ms"] == r["latency_max_ms"] == pytest.approx(0.07)
        assert r["qps"] == r["tps"] and r["reads"] == r["transactions"]
        assert r["other"] == 0 and r["writes"] == 0


def test_cpu_bound_throughput_saturates_at_the_cores():
    kw = dict(test="oltp_read_only", time=0.5, server_kw=dict(cores=2, commit_ns=0))
    tps = {t: _run(threads=t, **kw)[0]["tps"] for t in (1, 2, 8)}
    assert tps[2] == pytest.approx(2 * tps[1], rel=0.02)
    assert tps[8] == pytest.approx(tps[2], rel=0.02)


def test_no_event_starts_after_time_and_in_flight_ones_finish():
    r, sb, srv, sim = _run(test="oltp_read_write", time=0.2, threads=8)
    starts = [t for _, _, t in srv.trx]
    assert max(starts) < 0.2e9
    assert r["total_time_s"] >= 0.2 and sim.now_ns == sb.finished_ns
    assert r["transactions"] == len(srv.trx)          # every started event completed
    assert r["queries"] == 20 * r["transactions"]
    assert (r["reads"], r["writes"], r["other"]) == tuple(
        n * r["transactions"] for n in (14, 4, 2))


def test_events_limit_is_exact():
    r, sb, srv, sim = _run(test="oltp_update_index", time=0, events=1234, threads=7)
    assert r["transactions"] == 1234 == len(srv.trx)
    assert r["fairness_events_avg"] == pytest.approx(1234 / 7)
    assert r["fairness_events_stddev"] < 2


def test_scale_shrinks_time_and_events():
    r, *_ = _run(test="oltp_point_select", time=10, scale=0.01,
                 server_kw=dict(op_ns=1_000_000, row_ns=0, commit_ns=0))
    assert r["transactions"] == 100
    r, *_ = _run(test="oltp_point_select", time=0, events=5000, scale=0.1)
    assert r["transactions"] == 500


def test_rate_mode_runs_at_the_rate_and_counts_queue_time():
    kw = dict(test="oltp_point_select", time=2, server_kw=dict(op_ns=1_000_000, row_ns=0,
                                                                commit_ns=0))
    r, *_ = _run(rate=200, threads=4, **kw)        # capacity 4000/s: no queueing
    assert r["tps"] == pytest.approx(200, rel=0.1)
    assert r["latency_min_ms"] == pytest.approx(1.0)
    assert r["event_queue_full"] == 0


def test_rate_mode_one_thread_is_an_md1_queue():
    """Poisson arrivals at 500/s, 1 ms of service, one thread: M/D/1 at rho = 0.5, mean
    wait rho / (2 mu (1 - rho)) = 0.5 ms, so latency (queue time included) 1.5 ms."""
    r, *_ = _run(test="oltp_point_select", time=20, rate=500, threads=1,
                 server_kw=dict(op_ns=1_000_000, row_ns=0, commit_ns=0))
    assert r["tps"] == pytest.approx(500, rel=0.05)
    assert r["latency_avg_ms"] == pytest.approx(1.5, rel=0.1)
    assert r["latency_min_ms"] == pytest.approx(1.0)


def test_rate_beyond_capacity_fills_sysbenchs_queue():
    r, sb, srv, sim = _run(test="oltp_point_select", time=50, rate=1_000_000, threads=1,
                           server_kw=dict(op_ns=1_000_000, row_ns=0, commit_ns=0))
    assert r["event_queue_full"] == 1 and sim.now_ns < 50e9


def test_warmup_events_are_not_counted():
    kw = dict(test="oltp_point_select", server_kw=dict(op_ns=1_000_000, row_ns=0, commit_ns=0))
    r, sb, srv, sim = _run(time=1, warmup_time=0.5, **kw)
    assert r["transactions"] == pytest.approx(1000, abs=1)
    assert len(srv.trx) == pytest.approx(1500, abs=2)
    assert r["total_time_s"] == pytest.approx(1.0, abs=0.002)
    # no events limit in the warm-up; intermediate reports start after it
    r, sb, srv, sim = _run(time=0, events=300, warmup_time=0.5, report_interval=0.1, **kw)
    assert sum(t >= 0.5e9 for _, _, t in srv.trx) == 300      # started after the warm-up
    assert len(srv.trx) == pytest.approx(800, abs=2)
    assert r["transactions"] in (300, 301)     # + the event in flight at the boundary
    assert [round(row["t_s"], 6) for row in sb.detail()] == [0.1, 0.2, 0.3]
    assert sb.detail()[0]["tps"] == pytest.approx(1000, rel=0.02)


def test_intervals_report_tps_latency_and_server_status():
    r, sb, srv, sim = _run(test="oltp_read_write", time=3, threads=2, report_interval=1,
                           server_kw=dict(op_ns=300_000))
    rows = sb.detail()
    assert [row["t_s"] for row in rows] == [1.0, 2.0, 3.0]
    total = sum(row["tps"] for row in rows)
    assert total == pytest.approx(r["transactions"], rel=0.01)
    for row in rows:
        assert row["qps"] == pytest.approx(20 * row["tps"])
        assert row["thds"] == 2 and row["latency_pct_ms"] > 0
        assert "Innodb_buffer_pool_pages_dirty" in row              # a gauge, as sampled
        assert row["Com_commit_s"] == pytest.approx(row["tps"], rel=0.01)   # counter/s
        assert "version_comment" not in row and "version_comment_s" not in row
    assert rows[0]["Innodb_buffer_pool_pages_dirty"] < rows[-1]["Innodb_buffer_pool_pages_dirty"]
    assert r["Com_commit"] == r["transactions"]
    assert _run(test="oltp_point_select", time=1)[1].detail() == []    # report_interval=0


def test_same_seed_same_run_and_threads_draw_their_own_ids():
    a = _run(test="oltp_read_write", time=0.2, threads=4, seed=3)
    b = _run(test="oltp_read_write", time=0.2, threads=4, seed=3)
    assert a[0] == b[0]
    slow = _run(test="oltp_read_write", time=0.2, threads=4, seed=3,
                server_kw=dict(op_ns=40_000))
    first = [t for thd, t, _ in a[2].trx if thd == 2][:20]
    assert first == [t for thd, t, _ in slow[2].trx if thd == 2][:20]


def test_percentile_is_sysbenchs_histogram_bucket():
    ms = np.full(1000, 10.0)
    p = hist_percentile(ms, 95)
    i = round((np.log(p) - _DEDUCT) * _MULT)
    assert p == pytest.approx(np.exp(i / _MULT + _DEDUCT))           # a bucket's value
    assert p == pytest.approx(10.0, rel=0.01)                         # the nearest one
    rng = np.random.default_rng(0)
    x = rng.lognormal(1.0, 0.8, 100_000)
    assert hist_percentile(x, 95) == pytest.approx(np.percentile(x, 95), rel=0.012)
    assert hist_percentile(x, 99) > hist_percentile(x, 95)
    assert hist_percentile(np.array([]), 95) == 0.0
    assert hist_percentile(np.array([1e9]), 95) == pytest.approx(1e5)   # clamped at the top
    assert HIST_SIZE == 1024


def test_report_text_reads_like_sysbench():
    r, sb, *_ = _run(test="oltp_read_write", time=0.2)
    text = sb.report_text()
    assert "transactions:" in text and "95th percentile:" in text
    assert f"({r['tps']:.2f} per sec.)" in text


def test_exact_trace_of_a_small_closed_loop_run():
    """Two threads, 5 events, 70 us each: each thread starts its next event the moment
    its last one commits; the fifth goes to the thread that asked first."""
    r, sb, srv, sim = _run(test="oltp_point_select", time=0, events=5, threads=2,
                           server_kw=dict(op_ns=20_000, row_ns=0, commit_ns=50_000))
    assert [(thd, t) for thd, _, t in srv.trx] == [
        (0, 0), (1, 0), (0, 70_000), (1, 70_000), (0, 140_000)]
    assert list(sb.lat) == [70_000] * 5
    assert list(sb.end) == [70_000, 70_000, 140_000, 140_000, 210_000]
    assert sim.now_ns == sb.finished_ns == 210_000
    assert r["total_time_s"] == pytest.approx(210e-6) and r["tps"] == pytest.approx(5 / 210e-6)


def test_server_deadlocks_are_sysbenchs_ignored_errors():
    sim = Simulator()
    srv = FakeServer(sim, op_ns=100_000, row_ns=0, commit_ns=0)
    srv.deadlock_every = 10
    sb = Sysbench(sim, SysbenchConfig(test="oltp_update_index", time=0, events=200,
                                      report_interval=0.005), srv, np.random.default_rng(0))
    sb.start()
    sim.run()
    r = sb.results()
    assert r["ignored_errors"] == srv.deadlocks == 20
    # the intervals cover 20 of the run's ~22 ms (no partial last interval)
    assert 16 <= sum(row["errors_s"] for row in sb.detail()) * 0.005 <= 20
    assert "ignored errors:                      20" in sb.report_text()


def test_an_engine_without_tables_is_refused_in_one_line():
    class CommitPathLike:
        def execute(self, thd, stmt):
            yield 1

    with pytest.raises(ValueError, match=r"^sysbench runs on the InnoDB server .*"
                       r"CommitPathLike \(no create_tables, run, status\)$"):
        Sysbench(Simulator(), SysbenchConfig(), CommitPathLike())
