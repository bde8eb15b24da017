"""The warm pool a long run leaves (``InnoDBServer.warm_replay``, ``server/warmup.py``):
the workload's page references replayed through the pool outside simulated time keep
the hot pages and leave the changed ones dirty - and only then do the measured run's
evictions need writes."""
import numpy as np
import pytest

from models.engine.innodb.ops import Op, TableDef, Transaction
from models.workload.tpcc import TpccConfig
from models.workload.tpcc.workload import Tpcc

from .stack import build, clients

ROWS = 200_000
HOT = (190_001, ROWS)          # the last leaves: not in a table-order preload of 5 MB


def _stream(kind="point_select", hot_pct=90, seed=3):
    """Transactions of 4 ops: ``hot_pct`` % on the hot key range, the rest uniform."""
    rng = np.random.default_rng(seed)
    while True:
        keys = [int(rng.integers(*HOT)) if rng.integers(100) < hot_pct
                else int(rng.integers(1, ROWS + 1)) for _ in range(4)]
        yield Transaction(tuple(Op(kind, "sbtest1", k) for k in keys))


def _server(**kw):
    sim, srv, _, _ = build(tables=(TableDef("sbtest1", ROWS, 180, ("k",)),),
                           innodb_buffer_pool_size="5M", **kw)
    srv.preload()
    return sim, srv


def _hot_leaves(srv):
    tbl = srv.tables["sbtest1"]
    return {tbl.primary_path(k)[-1] for k in range(HOT[0], HOT[1] + 1)}


def test_the_replay_keeps_the_hot_pages_a_table_order_preload_does_not():
    sim, srv = _server()
    pool, hot = srv.pool, _hot_leaves(srv)
    assert sum(pool.resident(p) for p in hot) == 0            # preloaded: the first leaves
    before = {k: getattr(pool, k) for k in ("read_requests", "reads", "write_requests")}
    out = srv.warm_replay(_stream(), 2)
    assert out["misses"] >= 2 * pool.capacity
    assert sum(pool.resident(p) for p in hot) / len(hot) > 0.9
    # outside simulated time, and SHOW STATUS counts the measured server only
    assert sim.now_ns == 0 and pool.sim is sim
    assert {k: getattr(pool, k) for k in before} == before
    assert not pool.first_access


def test_changed_pages_are_left_dirty_and_dirty_tail_pages_counted_written():
    _, srv = _server()
    out = srv.warm_replay(_stream("update_non_index"), 2)
    pool = srv.pool
    assert out["written"] > 0 and out["dirty_pages"] == len(pool.flush_list) > 0
    assert all(pool.resident(p) for p in pool.flush_list)
    # read-only transactions dirty nothing and write nothing
    _, srv2 = _server()
    out2 = srv2.warm_replay(_stream(), 2)
    assert out2["written"] == 0 and not srv2.pool.flush_list


def test_dirty_pages_keep_the_lsn_of_their_first_change_and_the_log_moves_on():
    """The replay's changes write redo: a page joins the flush list at its first
    change's LSN, so the run starts with the oldest modifications spread over the
    replay's log (not one LSN for every page: the first age flush would then have to
    write them all before the checkpoint could move), and the log, written and
    flushed up to there, has a checkpoint at the oldest dirty page."""
    _, srv = _server()
    redo, ckpt, pool = srv.redo, srv.ckpt, srv.pool
    start, fresh_stats = redo.lsn, redo.stats()["lsn"]
    out = srv.warm_replay(_stream("update_non_index"), 2)
    lsns = list(pool.flush_list.values())
    assert lsns == sorted(lsns) and len(set(lsns)) == len(lsns) == out["dirty_pages"]
    assert all(pool.newest[p] >= lsn for p, lsn in pool.flush_list.items())
    # 4 changes of 150 + 150 bytes a transaction, framed in 512-byte blocks
    payload = 4 * 300 * out["transactions"]
    assert payload < redo.lsn - start < payload * 512 / 496 + 512
    assert redo.written_lsn == redo.flushed_lsn == redo.lsn
    assert ckpt.last_checkpoint_lsn == lsns[0]
    assert out["checkpoint_age"] == ckpt.checkpoint_age() == redo.lsn - lsns[0] > 0
    assert out["age_flushed"] == 0 and redo.stats()["lsn"] == fresh_stats


def test_the_replay_keeps_the_checkpoint_age_under_the_async_point():
    """A log smaller than the replay's redo: the oldest dirty pages are written as 5.5's
    preflush writes them, so the age ends under the async point, with fewer dirty
    pages than a large log leaves."""
    ages = {}
    for size in ("1M", "48M"):
        _, srv = _server(innodb_log_file_size=size)
        out = srv.warm_replay(_stream("update_non_index"), 2)
        assert out["checkpoint_age"] <= srv.ckpt.max_modified_age_async
        ages[size] = out
    assert ages["1M"]["age_flushed"] > 0 and ages["48M"]["age_flushed"] == 0
    assert ages["1M"]["dirty_pages"] < ages["48M"]["dirty_pages"]
    assert ages["1M"]["checkpoint_age"] < ages["48M"]["checkpoint_age"]


@pytest.mark.parametrize("method", ["estimate", "keep_average"])
def test_rate_policies_measure_the_log_from_the_start_not_from_before_the_replay(method):
    _, srv = _server(version="percona_5.1", innodb_adaptive_flushing=False,
                     innodb_adaptive_checkpoint=method, commit_protocol="mysql51_builtin")
    assert srv.cleaner.policy.name == method
    srv.warm_replay(_stream("update_non_index"), 2)
    srv.start()
    assert srv.cleaner.policy.lsn_old == srv.redo.lsn > srv.redo.START_LSN + 2**20


def test_the_replay_is_deterministic():
    orders = []
    for _ in range(2):
        _, srv = _server()
        srv.warm_replay(_stream("update_non_index"), 1)
        orders.append((list(srv.pool.old), list(srv.pool.young), list(srv.pool.flush_list)))
    assert orders[0] == orders[1]


def test_the_replay_needs_a_turnover():
    _, srv = _server()
    with pytest.raises(ValueError, match="turnovers"):
        srv.warm_replay(_stream(), 0)


def test_after_a_replay_the_measured_reads_evict_dirty_pages():
    """The mechanism the replay is for: once the pool has turned over, its LRU tail is
    dirty, so nearly every read's free frame costs a write, and the hot pages are
    resident (fewer reads); from the preloaded clean pool a read costs none (5 ms of
    four clients: the 320-frame pool has not turned over yet)."""
    out = {}
    for replay in (True, False):
        sim, srv = _server()
        if replay:
            srv.warm_replay(_stream("update_non_index"), 2)
        upd = _stream("update_non_index", seed=9)
        clients(sim, srv, 4, lambda rng, i: next(upd), 0.005)
        out[replay] = (srv.pool.reads, srv.flusher.pages_flushed)
    (r1, w1), (r0, w0) = out[True], out[False]
    assert r1 > 20 and r0 > 20
    assert w1 / r1 > 0.8 and w0 / r0 < 0.2
    assert r1 < r0 / 2


def _tpcc(turnovers):
    sim, srv, _, _ = build(tables=(), innodb_buffer_pool_size="5M")
    cfg = TpccConfig(warehouses=1, connections=2, duration=1, warm_pool_turnovers=turnovers)
    w = Tpcc(sim, cfg, srv, np.random.default_rng(11))
    assert w.preloaded == 0 and not srv.pool.lru_len()     # not at construction
    w.warm_up()
    return w, srv


def test_tpcc_replays_its_own_transactions_without_moving_the_measured_run():
    w1, srv1 = _tpcc(1)
    w0, srv0 = _tpcc(0)
    assert w1.warm["misses"] >= srv1.pool.capacity and srv1.pool.flush_list
    assert w0.warm == {} and not srv0.pool.flush_list
    # the replay is the run's past: the districts' orders go on from it; the
    # connections' streams are those of a run without it
    st0, st1 = w0.builder.state, w1.builder.state
    placed = sum(st1.next_o_id) - sum(st0.next_o_id)
    assert placed > 0 and sum(len(d) for d in st1.items) > 0
    assert w1.builder.counts == w0.builder.counts
    draws = [[w.rands[0].u01() for _ in range(5)] for w in (w0, w1)]
    assert draws[0] == draws[1]


def test_tpcc_turnovers_must_not_be_negative():
    with pytest.raises(ValueError, match="warm_pool_turnovers"):
        TpccConfig(warm_pool_turnovers=-1)



def test_a_warm_started_56_page_cleaner_flushes_by_age_from_its_first_loops():
    """5.6's page cleaner averages the LSN rate over ``innodb_flushing_avg_loops`` (30)
    loops and starts from zero, so after a restart its flush-list batches write nothing
    for 30 s (their LSN limit is the oldest page) - harmless when a restart's age is 0.
    A server started from a replay is a long run's: its age is high, and its averages
    are seeded at the first active loop (the loop's LSN progress, and the page rate that
    is its own fixed point), so it flushes by age at once; left cold it does not (3 s,
    one client, the age between the low water mark and the async point)."""
    out = {}
    for warm in (True, False):
        sim, srv, _, _ = build(tables=(TableDef("sbtest1", ROWS, 180, ("k",)),),
                               innodb_buffer_pool_size="16M", version="5.6",
                               innodb_log_file_size="32M", innodb_lru_scan_depth=100)
        srv.preload()
        srv.warm_replay(_stream("update_non_index"), 2)
        age = srv.ckpt.checkpoint_age()
        assert age > srv.cfg.innodb_adaptive_flushing_lwm * srv.ckpt.capacity / 100
        upd = _stream("update_non_index", seed=9)
        pol = srv.cleaner.policy
        assert pol.name == "page_cleaner"
        if not warm:
            pol.start = lambda: None            # the restart's zeros
        clients(sim, srv, 1, lambda rng, i: next(upd), 3.0)
        f = srv.flusher
        background = f.flushed_list - f.flushed_preflush - f.flushed_sync
        out[warm] = (background, pol.lsn_avg_rate, pol.avg_page_rate, f.flushed_sync)
    assert out[True][0] > 300 and out[True][1] > 0 and out[True][2] > 0    # 601 pages
    assert out[False][:3] == (0, 0, 0)
    assert out[True][3] == out[False][3] == 0             # neither reached the sync point
