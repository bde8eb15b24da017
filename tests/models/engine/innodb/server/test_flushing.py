"""Flushing mechanisms: neighbours in the extent, the background flush rate of each
version (5.1 master thread 100 pages/s, 5.5 innodb_io_capacity above the dirty limit,
5.6 page cleaner flushing PCT_IO(100) when idle), 5.6 adaptive flushing's pct_for_lsn."""
import math

import pytest

from models.engine.innodb.buffer.cleaner import LSN_MAX
from models.engine.innodb.ops import TableDef
from tests.models.engine.innodb.server.stack import build


def _dirty(srv, pages):
    lsn = srv.redo.lsn
    for p in pages:
        srv.pool.modify(p, lsn)


@pytest.mark.parametrize("neighbors,expected", [(0, 1), (1, 3), (2, 4)])
def test_flush_neighbors_contiguous_or_whole_area(neighbors, expected):
    sim, srv, fs, q = build(innodb_buffer_pool_size="16M", innodb_flush_neighbors=neighbors)
    srv.files.open()
    srv.preload()
    leaf0 = srv.tables["sbtest1"].primary.path(0)[-1]
    base = leaf0 - leaf0 % 64 + 8
    _dirty(srv, [base, base + 1, base + 2, base + 5])   # a gap after base + 2
    box = {}

    def go():
        box["n"] = yield from srv.flusher.flush_list_batch(1, LSN_MAX)
    sim.spawn(go())
    sim.run(until_ns=10**9)
    assert box["n"] == expected
    assert len(srv.pool.flush_list) == 4 - expected


def _background(version, seconds=3.5, **kw):
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="32M", version=version,
                            commit_protocol="mysql51_builtin" if version != "5.6"
                            else "mysql56_binlog_group_commit", **kw)
    srv.preload()
    leaves = (list(srv.pool.old) + list(srv.pool.young))[:1200]
    _dirty(srv, leaves)
    srv.start()
    sim.run(until_ns=int(seconds * 1e9) + 1000)
    srv.stop()
    return srv.flusher.flushed_list


def test_background_flush_rate_per_version():
    # three seconds; a batch may overshoot by the neighbours of its last page (before
    # 5.6 the whole 64-page area)
    # above innodb_max_dirty_pages_pct: 5.1 flushes 100 pages a second (no io_capacity)
    assert 300 <= _background("5.1", innodb_max_dirty_pages_pct=0) < 3 * (100 + 64)
    # 5.5: PCT_IO(100) = innodb_io_capacity
    assert 600 <= _background("5.5", innodb_max_dirty_pages_pct=0, innodb_io_capacity=200) \
        < 3 * (200 + 64)
    # below the limit, adaptive off: 5.5 leaves the pages dirty
    assert _background("5.5", innodb_max_dirty_pages_pct=90, innodb_adaptive_flushing=False) == 0
    # 5.6: an idle server's page cleaner flushes PCT_IO(100) whatever the dirty share
    assert 600 <= _background("5.6", innodb_max_dirty_pages_pct=90, innodb_io_capacity=200) \
        < 3 * (200 + 64)


def test_pct_for_lsn_is_af_get_pct_for_lsn():
    sim, srv, fs, q = build(innodb_io_capacity=200, innodb_io_capacity_max=2000)
    bg, ck = srv.cleaner.policy, srv.ckpt
    lwm = 0.10 * ck.capacity
    assert bg.pct_for_lsn(int(lwm) - 1) == 0
    age = ck.max_modified_age_async
    assert bg.pct_for_lsn(age) == pytest.approx(10 * 100 * math.sqrt(100) / 7.5)
    half = bg.pct_for_lsn(age // 2)
    assert 0 < half < bg.pct_for_lsn(age)
    sim, srv, fs, q = build(innodb_adaptive_flushing=False)
    assert srv.cleaner.policy.pct_for_lsn(srv.ckpt.max_modified_age_async // 2) == 0
    assert srv.cleaner.policy.pct_for_lsn(srv.ckpt.max_modified_age_async) > 0
