"""fio's ``ramp_time`` is lead-in time on top of ``runtime``: a job with ramp_time=R and
runtime=T runs R + T and reports T (fio: time.c ``ramp_period_over`` calls
``reset_all_stats``, which resets ``td->epoch`` and ``td->start``; backend.c
``runtime_exceeded`` is false during the ramp and then counts ``timeout`` from the
epoch; ``__check_min_rate``'s 2 s settle counts from ``td->start``)."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.fakes import FixedDevice

MS = 1_000_000
S = 1_000_000_000


def _run(cfg, service_ns=MS, dev=None, seed=1):
    """Run fio job ``cfg`` through noop on ``dev(sim)`` (a 1 ms-per-I/O fake by default)."""
    sim = Simulator()
    dev = dev(sim) if dev else FixedDevice(sim, service_ns=service_ns, queue_depth=32)
    job = FioJob(sim, cfg, BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                 np.random.default_rng(seed))
    job.start()
    sim.run()
    return sim, job, dev


def test_a_job_with_ramp_1_and_runtime_2_runs_3_s_and_reports_2_s():
    sim, job, dev = _run(FioConfig(rw="randread", iodepth=1, runtime_s=2.0, ramp_time_s=1.0))
    res = job.results()
    assert sim.now_ns == job.finished_ns == 3 * S
    assert job.measure_from_ns == 1 * S
    assert len(dev.served) == 3000               # 1 ms each, back to back, for 3 s
    assert res["runtime_s"] == 2.0
    # I/Os submitted from 1 s on: the one submitted at 2.999 s was in flight when the
    # runtime ended and is reaped (at 3 s) and counted, as fio's do_io does
    assert res["read_clat_count"] == 2000
    assert res["read_iops"] == 1000.0


def test_the_ramp_may_be_longer_than_the_runtime():
    # fio has no such limit: the ramp is lead-in time whatever the runtime
    sim, job, _ = _run(FioConfig(rw="read", runtime_s=0.01, ramp_time_s=0.05))
    assert sim.now_ns == 60 * MS
    assert job.results()["runtime_s"] == pytest.approx(0.01)
    # submitted at 50 .. 59 ms, 1 ms each: the last, in flight at the runtime's end,
    # completes at 60 ms and counts
    assert job.results()["read_clat_count"] == 10


@pytest.mark.parametrize("ramp, msg", [(-0.5, r"^ramp_time_s: must be >= 0, got -0\.5$"),
                                       (float("inf"), r"^ramp_time_s: must be <= 1e\+09"),
                                       (float("nan"), r"^ramp_time_s: must be <= 1e\+09")])
def test_a_bad_ramp_names_the_key(ramp, msg):
    with pytest.raises(ValueError, match=msg):
        FioConfig(ramp_time_s=ramp)


def _hdd_case(cfg):
    return _run(cfg, dev=lambda sim: HDD(sim, "sda", default_15k_sas(write_cache=True)), seed=7)


def test_the_ramp_changes_what_is_counted_not_the_io_the_job_does():
    # ramp 0.1 + runtime 0.2 issues exactly what runtime 0.3 without a ramp issues
    # (a drive whose times vary: an HDD, random mixed I/O at depth 8)
    kw = dict(rw="randrw", rwmixread=70, iodepth=8, size="2g")
    sim_a, ramped, dev_a = _hdd_case(FioConfig(runtime_s=0.2, ramp_time_s=0.1, **kw))
    sim_b, plain, dev_b = _hdd_case(FioConfig(runtime_s=0.3, **kw))
    # both end when the I/Os in flight at 300 ms are reaped
    assert sim_a.now_ns == sim_b.now_ns > 300 * MS
    assert sim_a.events_processed == sim_b.events_processed + 1      # the ramp's end
    assert dev_a.stats() == dev_b.stats()
    assert dev_a.S.tobytes() == dev_b.S.tobytes()
    assert [(j.issued, j.in_flight) for j in ramped.jobs] == [(j.issued, j.in_flight)
                                                              for j in plain.jobs]
    a, b = ramped.results(), plain.results()
    assert a["runtime_s"] == pytest.approx(b["runtime_s"] - 0.1)
    assert b["runtime_s"] == (sim_b.now_ns - 0) / 1e9
    # the ramped job counts the I/Os submitted from 100 ms on: fewer, none of the first
    assert 0 < a["read_clat_count"] < b["read_clat_count"]
    assert 0 < a["write_clat_count"] < b["write_clat_count"]
    assert ramped.iostat()["r_s"] == pytest.approx(a["read_iops"], rel=0.05)


def test_a_buffered_job_runs_ramp_plus_runtime_too():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=2**34)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop"))
    fs = Filesystem(sim, FsConfig(type="ext4"), q, PageCache(sim, PageCacheConfig(
        memory_bytes="16m")))
    job = FioBufferedJob(sim, FioConfig(rw="randread", direct=False, size="4m",
                                        runtime_s=0.2, ramp_time_s=0.1), fs,
                         np.random.default_rng(3))
    job.start()
    sim.run()
    assert sim.now_ns == job.finished_ns == 300 * MS
    assert job.measure_from_ns == 100 * MS
    assert job.results()["runtime_s"] == pytest.approx(0.2)


@pytest.mark.parametrize("ramp_s, stop_s", [(0.0, 2.1), (0.5, 2.6), (3.0, 5.1)])
def test_rate_min_settles_2_s_after_the_ramp(ramp_s, stop_s):
    # a 1000-IOPS device below rate_iops_min=2000: the first check 2 s after the ramp
    # records, the next one a rate_cycle (100 ms) later ends the job with EIO
    sim, job, _ = _run(FioConfig(rw="randread", iodepth=1, runtime_s=10, ramp_time_s=ramp_s,
                                 rate_cycle_ms=100, rate_iops_min="2000"))
    res = job.results()
    assert res["error"] == 5
    assert job.finished_ns == pytest.approx(stop_s * S, abs=MS)
    assert res["runtime_s"] == pytest.approx(stop_s - ramp_s, abs=0.001)


class _SlowThenFast(FixedDevice):
    """10 ms an I/O until 1 s, then 0.1 ms: a job capped at 500 IOPS falls behind its
    cap during a 1 s ramp and could catch up afterwards."""

    def service_ns(self, req):
        super().service_ns(req)
        return 10 * MS if self.sim.now_ns < S else MS // 10


@pytest.mark.parametrize("buffered", [False, True])
def test_the_rate_cap_starts_over_at_the_ramps_end(buffered):
    """fio's ``reset_all_stats`` zeroes the rate accounting (``rate_io_issue_bytes``,
    ``rate_next_io_time``) and ``td->start`` at the ramp's end: the 400 I/Os the job
    fell behind during the ramp are not issued in a burst after it - 500 in the
    measured second, not ~900."""
    cfg = FioConfig(rw="randread", iodepth=1, runtime_s=1.0, ramp_time_s=1.0,
                    rate_iops="500", direct=not buffered, size="1g")
    if buffered:
        sim = Simulator()
        dev = _SlowThenFast(sim, queue_depth=32, capacity_bytes=2**34)
        q = BlockQueue(sim, dev, BlockConfig(scheduler="noop"))
        fs = Filesystem(sim, FsConfig(type="ext4"), q, PageCache(sim, PageCacheConfig(
            memory_bytes="1m")))
        job = FioBufferedJob(sim, cfg, fs, np.random.default_rng(1))
        job.start()
        sim.run()
    else:
        sim, job, dev = _run(cfg, dev=lambda s: _SlowThenFast(s, queue_depth=32))
    during_ramp = sum(1 for t, *_ in dev.served if t < S)
    assert 95 <= during_ramp <= 101                   # 100 IOPS, 500 due
    measured = sum(1 for t, *_ in dev.served if S <= t < 2 * S)
    assert 499 <= measured <= 502
