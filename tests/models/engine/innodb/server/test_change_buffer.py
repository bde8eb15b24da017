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


def _updates_then_idle(n_trx=150, **kw):
    """8 clients run ``n_trx`` index-update transactions between them, then the server
    idles until 1.05 s: the master thread's first background merge."""
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
    sim.run(until_ns=1_050_000_000)
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
    off = _updates_then_idle(innodb_change_buffering="none")
    assert off["Innodb_ibuf_background_reads"] == 0 and off["Innodb_ibuf_merges"] == 0


@pytest.mark.parametrize("kw,match", [
    ({"innodb_change_buffering": "most"}, "innodb_change_buffering: must be one of"),
    ({"version": "5.1", "innodb_change_buffering": "all"}, "innodb_change_buffering: must be one of none, inserts"),
    ({"innodb_change_buffer_max_size": 60}, r"innodb_change_buffer_max_size: must be in 0\.\.50"),
    ({"version": "5.5", "innodb_change_buffer_max_size": 30}, "innodb_change_buffer_max_size: a MySQL 5.6"),
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
