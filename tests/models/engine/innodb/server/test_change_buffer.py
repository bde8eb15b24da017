"""The change buffer (``server/ibuf.py``): changes to non-unique secondary leaves that
are not in the pool are buffered instead of read, merged when the leaf is read or by the
master thread's background merge; both ways for each rule."""
import itertools

import pytest

from models.engine.innodb.ops import Op, TableDef, Transaction
from models.engine.innodb.server import InnoDBServerConfig

from .stack import build, clients

ROWS = 300_000


def _table(unique=()):
    return TableDef("sbtest1", ROWS, 180, ("k",), unique=unique)


def _index_updates(rng, i):
    keys = rng.integers(1, ROWS + 1, 4)
    return Transaction(tuple(Op("update_index", "sbtest1", int(k)) for k in keys))


def _run(make=_index_updates, seconds=0.2, unique=(), **kw):
    kw.setdefault("innodb_buffer_pool_size", "5M")
    sim, srv, fs, q = build(tables=(_table(unique),), **kw)
    clients(sim, srv, 8, make, seconds)
    return srv.status(), srv


def test_changes_to_secondary_leaves_not_in_the_pool_are_buffered_not_read():
    on, srv = _run()
    off, _ = _run(innodb_change_buffering="none")
    assert on["Innodb_ibuf_buffered_inserts"] > 100
    assert on["Innodb_ibuf_buffered_delete_marks"] > 100
    assert off["Innodb_ibuf_buffered_inserts"] == off["Innodb_ibuf_buffered_delete_marks"] == 0
    # the k leaves are not read: far fewer reads per update
    per_on = on["Innodb_buffer_pool_reads"] / on["Innodb_rows_updated"]
    per_off = off["Innodb_buffer_pool_reads"] / off["Innodb_rows_updated"]
    assert per_on < 0.75 * per_off, (per_on, per_off)
    assert on["Innodb_ibuf_size"] >= 1 and srv.ibuf.pending


def test_a_unique_index_is_never_buffered():
    st, _ = _run(unique=("k",))
    assert st["Innodb_ibuf_buffered_inserts"] == st["Innodb_ibuf_buffered_delete_marks"] == 0


def _inserts_and_deletes():
    keys = itertools.count(ROWS + 1)

    def make(rng, i):
        if i % 2:
            return Transaction((Op("insert", "sbtest1", next(keys)),))
        return Transaction((Op("delete", "sbtest1", int(rng.integers(1, ROWS + 1))),))
    return make


def test_inserts_mode_buffers_only_inserts_and_deletes_mode_only_delete_marks():
    st, _ = _run(_inserts_and_deletes(), innodb_change_buffering="inserts")
    assert st["Innodb_ibuf_buffered_inserts"] > 100
    assert st["Innodb_ibuf_buffered_delete_marks"] == 0
    st, _ = _run(_inserts_and_deletes(), innodb_change_buffering="deletes")
    assert st["Innodb_ibuf_buffered_delete_marks"] > 100
    assert st["Innodb_ibuf_buffered_inserts"] == 0
    # an update of k in one leaf: the delete-mark reads the leaf, the insert then
    # finds it in the pool - nothing is buffered
    st, _ = _run(innodb_change_buffering="inserts")
    assert st["Innodb_ibuf_buffered_inserts"] < 0.05 * st["Innodb_rows_updated"]


def test_a_full_change_buffer_buffers_nothing():
    st, _ = _run(innodb_change_buffer_max_size=0)
    assert st["Innodb_ibuf_buffered_inserts"] == 0 and st["Innodb_ibuf_full"] > 0


def test_reading_a_leaf_merges_its_entries():
    """Updates, then reads through k: each leaf read that has entries merges them."""
    phase = {"n": 0}

    def make(rng, i):
        phase["n"] += 1
        if phase["n"] < 400:
            return _index_updates(rng, i)
        k = int(rng.integers(1, ROWS + 1))
        return Transaction((Op("range_select", "sbtest1", k, rows=50, index="k"),))
    st, srv = _run(make, seconds=0.3)
    assert st["Innodb_ibuf_merges"] > 10
    assert st["Innodb_ibuf_merged_inserts"] + st["Innodb_ibuf_merged_delete_marks"] > 10
    assert st["Innodb_ibuf_background_reads"] == 0          # all merged by the reads
    buffered = st["Innodb_ibuf_buffered_inserts"] + st["Innodb_ibuf_buffered_delete_marks"]
    merged = st["Innodb_ibuf_merged_inserts"] + st["Innodb_ibuf_merged_delete_marks"]
    assert buffered == merged + st["Innodb_ibuf_entries"]


def _updates_then_idle(n_trx=150, until_ns=1_050_000_000, **kw):
    """8 clients run ``n_trx`` index-update transactions between them, then the server
    idles until ``until_ns`` (1.05 s: the master thread's first background merge)."""
    import numpy as np

    kw.setdefault("innodb_buffer_pool_size", "5M")
    sim, srv, fs, q = build(tables=(_table(),), **kw)
    left = [n_trx]

    def client(i):
        rng = np.random.default_rng([1, i])
        while left[0] > 0:
            left[0] -= 1
            yield from srv.run(i, _index_updates(rng, i))

    srv.start()
    for i in range(8):
        sim.spawn(client(i), f"client{i}")
    sim.run(until_ns=until_ns)
    srv.stop()
    return srv.status()


def test_the_master_thread_merges_in_the_background():
    """Updates only (nothing reads k): after a second the master thread reads leaves
    with entries - PCT_IO(5) of innodb_io_capacity, in batches of up to 8."""
    low = _updates_then_idle(innodb_io_capacity=200)
    high = _updates_then_idle(innodb_io_capacity=2000)
    assert low["Innodb_ibuf_merges"] > 0
    assert 10 <= low["Innodb_ibuf_background_reads"] <= 10 + 7
    assert 100 <= high["Innodb_ibuf_background_reads"] <= 100 + 7
    # more leaves asked for than have entries: each read once, every entry merged
    # (the reads are async: a leaf picked again before its read starts is not re-read)
    all_ = _updates_then_idle(innodb_io_capacity=20000, innodb_io_capacity_max=20000)
    assert all_["Innodb_ibuf_entries"] == 0
    assert all_["Innodb_ibuf_background_reads"] == all_["Innodb_ibuf_merges"] > 100
    # 5.6: the second after the updates had no user activity - the idle tasks merge
    # PCT_IO(100) leaves (srv_master_do_idle_tasks)
    idle = _updates_then_idle(innodb_io_capacity=200, until_ns=2_050_000_000)
    assert idle["Innodb_ibuf_entries"] > 0                  # more left than it merged
    assert 10 + 200 <= idle["Innodb_ibuf_background_reads"] <= 10 + 7 + 200 + 7
    # 5.5: no idle rule here (its background loop is not modelled): the 1-second loop's
    # PCT_IO(5) of a quiet second
    idle55 = _updates_then_idle(version="5.5", innodb_io_capacity=200,
                                until_ns=2_050_000_000)
    assert idle55["Innodb_ibuf_background_reads"] <= 10 + 7 + 10 + 7
    off = _updates_then_idle(innodb_change_buffering="none")
    assert off["Innodb_ibuf_background_reads"] == 0 and off["Innodb_ibuf_merges"] == 0


@pytest.mark.parametrize("kw,match", [
    ({"innodb_change_buffering": "most"}, "innodb_change_buffering: must be one of"),
    ({"version": "5.1", "innodb_change_buffering": "all"}, "innodb_change_buffering: must be one of none, inserts"),
    ({"innodb_change_buffer_max_size": 60}, r"innodb_change_buffer_max_size: must be in 0\.\.50"),
    ({"version": "5.5", "innodb_change_buffer_max_size": 30}, "innodb_change_buffer_max_size: a MySQL 5.6"),
    ({"version": "5.5", "innodb_ibuf_accel_rate": 200}, "innodb_ibuf_accel_rate: a Percona Server variable"),
    ({"version": "percona_5.5", "innodb_ibuf_accel_rate": 50}, r"innodb_ibuf_accel_rate: must be in 100\.\.999999"),
])
def test_bad_change_buffer_settings_name_the_key(kw, match):
    with pytest.raises(ValueError, match="^" + match):
        InnoDBServerConfig(**kw)


def test_the_defaults_follow_the_version():
    assert InnoDBServerConfig(version="5.1").change_buffering == "inserts"
    assert InnoDBServerConfig(version="5.5").change_buffering == "all"
    c = InnoDBServerConfig(innodb_buffer_pool_size="160M")
    assert c.change_buffer_max_pages == 10240 * 25 // 100
    assert InnoDBServerConfig(version="5.5", innodb_buffer_pool_size="160M").change_buffer_max_pages == 5120
    with pytest.raises(ValueError, match="unique index"):
        TableDef("t", 10, 10, ("k",), unique=("x",))


def _paced_updates(version, until_s, **kw):
    """One client commits an index-update transaction every 50 ms (20 commits, well
    over PCT_IO(5) = 10 I/Os a second: the server is never idle) until ``until_s``;
    the background reads at each whole second + 0.5."""
    import numpy as np

    kw.setdefault("innodb_buffer_pool_size", "5M")
    sim, srv, fs, q = build(tables=(_table(),), version=version, innodb_io_capacity=200,
                            **kw)
    end = int(until_s * 1e9)

    def client():
        rng = np.random.default_rng([2, 0])
        while sim.now_ns < end:
            yield from srv.run(0, _index_updates(rng, 0))
            yield 50_000_000

    reads = []

    def sampler():
        yield 500_000_000
        while sim.now_ns < end:
            reads.append(srv.ibuf.background_reads)
            yield 1_000_000_000

    srv.start()
    sim.spawn(client(), "client")
    sim.spawn(sampler(), "sampler")
    sim.run(until_ns=end)
    srv.stop()
    return reads


def test_5_5_merges_only_in_the_ten_second_part_while_busy_and_5_6_every_second():
    """srv0srv.c: 5.5's master thread merges PCT_IO(5) in its 1-second loop only when
    fewer than PCT_IO(5) I/Os happened during the sleep, and PCT_IO(5) every ten
    seconds regardless; 5.6 merges PCT_IO(5) every second."""
    r55 = _paced_updates("5.5", 10.6)
    assert r55[:10] == [0] * 10                     # 0.5 .. 9.5 s: busy, no merge
    assert 10 <= r55[10] <= 10 + 7                  # 10.5 s: the 10-second part's batch
    r56 = _paced_updates("5.6", 3.6)
    assert r56[0] == 0
    for a, b in zip(r56[1:], r56[2:]):
        assert 10 <= b - a <= 10 + 7                # PCT_IO(5) leaves each second


def test_background_merge_sizes_follow_the_version():
    """PCT_IO(5) when idle (5.1: of 100 - no innodb_io_capacity), nothing when busy or
    with PCT_IO(3) I/Os pending, + PCT_IO(5) in the 10-second part; 5.6 adds
    PCT_IO(100 * (size - max/2) / (max + 1)) above half the maximum size."""
    from models.engine.innodb.server.ibuf import IBUF_FILL, PAGE_USABLE_BYTES

    def srv_of(version, **kw):
        sim, srv, fs, q = build(tables=(_table(),), version=version,
                                innodb_buffer_pool_size="16M", **kw)
        return srv

    s = srv_of("5.5", innodb_io_capacity=200)
    ib, pol = s.ibuf, s.cleaner.policy
    assert [ib.background_pages(pol, r, t) for r, t in
            ((9, False), (10, False), (9, True), (10, True))] == [10, 0, 20, 10]
    pol.n_pending_ios = lambda: 5
    assert ib.background_pages(pol, 0, False) == 10
    pol.n_pending_ios = lambda: 6                   # PCT_IO(3) = 6 pending: busy
    assert ib.background_pages(pol, 0, False) == 0
    s = srv_of("5.1", innodb_io_capacity=2000)
    assert s.ibuf.background_pages(s.cleaner.policy, 4, True) == 10
    assert s.ibuf.background_pages(s.cleaner.policy, 5, False) == 0
    # XtraDB: PCT_IBUF_IO(5) = innodb_io_capacity x innodb_ibuf_accel_rate % x 5 %; the
    # idle thresholds stay PCT_IO
    s = srv_of("percona_5.5", innodb_io_capacity=200, innodb_ibuf_accel_rate=250)
    assert s.ibuf.background_pages(s.cleaner.policy, 9, True) == 25 + 25
    assert s.ibuf.background_pages(s.cleaner.policy, 10, False) == 0
    s = srv_of("percona_5.1", innodb_io_capacity=200)
    assert s.ibuf.background_pages(s.cleaner.policy, 0, True) == 20
    s = srv_of("5.6", innodb_io_capacity=200)
    ib, pol = s.ibuf, s.cleaner.policy
    assert ib.max_pages == 1024 * 25 // 100
    assert ib.background_pages(pol, 10**6, False) == 10
    per_page = int(PAGE_USABLE_BYTES * IBUF_FILL)
    ib.bytes = 200 * per_page                       # 200 pages of 256: 72 above half
    assert ib.size_pages() == 200
    assert ib.background_pages(pol, 10**6, False) == 10 + 200 * (72 * 100 // 257) // 100
