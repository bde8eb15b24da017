"""Read-ahead policies: linear, random, physical warm-up, logical (LRA)."""
import numpy as np
import pytest

from models.engine.innodb.read_ahead import ReadAheadConfig
from models.engine.innodb.read_ahead.base import ScanContext
from models.engine.innodb.read_ahead.linear import LinearReadAhead
from models.engine.innodb.read_ahead.random import RandomReadAhead
from models.engine.innodb.scan import FullTableScan, ScanConfig
from models.engine.innodb.table import K_LEAF, TableConfig, TableLayout, build_table
from models.units import parse_size
from tests.models.engine.innodb.scan_stack import reads

PAGE = 16384


def _stack(layout, pool="64m", queue_depth=32, service_ns=50_000):
    sim, dev, blk, bp = reads(parse_size(pool, "pool"), queue_depth, service_ns, 0,
                              layout.page_kind)
    return sim, dev, blk, bp


def _scan(layout, pool="64m", **ra):
    sim, dev, blk, bp = _stack(layout, pool)
    scan = FullTableScan(sim, ScanConfig(cpu_ns_per_row=100, cpu_ns_per_page=1000),
                         ReadAheadConfig(**ra), layout, bp)
    scan.start()
    sim.run()
    assert scan.done
    return scan.results(), dev, bp


def _table(pattern="user_object", size="8m", **kw):
    return build_table(TableConfig(table_size=size, insert_pattern=pattern, **kw),
                       np.random.default_rng(3))


def _toy_layout(leaves, n_pages=256):
    """A layout whose clustered leaves are ``leaves`` in key order (one level-1 page)."""
    kind = np.zeros(n_pages, np.int8)
    leaves = np.asarray(leaves, np.int32)
    kind[leaves] = K_LEAF
    return TableLayout(TableConfig(), n_pages, kind, leaves, np.full(len(leaves), 10, np.int32),
                       np.array([3], np.int32), np.array([0]), np.array([len(leaves)]), [3],
                       10 * len(leaves), 1, 0, 80)


def _ctx(layout, **ra):
    sim, dev, blk, bp = _stack(layout)
    return sim, dev, bp, ScanContext(sim, bp, layout, ReadAheadConfig(**ra), 1.0)


def _touch(sim, bp, pages):
    for p in pages:
        ev = bp.fetch(p)
        if ev is not None:
            sim.run()
        sim.after(1000, lambda _a: None)
        sim.run()
        bp.access(p)


# -- linear ----------------------------------------------------------------------------
def test_linear_reads_the_next_leafs_area_at_the_border_page():
    lay = _toy_layout(range(64, 192))
    sim, dev, bp, ctx = _ctx(lay)
    lin = LinearReadAhead(ctx)
    _touch(sim, bp, range(64, 127))
    assert lin.on_first_access(126) is None            # not a border page
    _touch(sim, bp, [127])
    lin.on_first_access(127)
    sim.run()
    assert lin.pages_requested == 64 and all(bp.resident(p) for p in range(128, 192))


def test_linear_needs_innodb_read_ahead_threshold_pages_in_order():
    lay = _toy_layout(range(64, 192))
    sim, dev, bp, ctx = _ctx(lay, innodb_read_ahead_threshold=56)
    lin = LinearReadAhead(ctx)
    _touch(sim, bp, range(64, 118))          # with 127: 55 of the area accessed, 9 not
    _touch(sim, bp, [127])
    assert lin.on_first_access(127) is None and lin.pages_requested == 0
    sim, dev, bp, ctx = _ctx(lay, innodb_read_ahead_threshold=48)
    lin = LinearReadAhead(ctx)
    _touch(sim, bp, range(64, 118))
    _touch(sim, bp, [127])
    lin.on_first_access(127)
    assert lin.pages_requested == 64


def test_linear_does_nothing_when_the_next_leaf_is_not_an_area_border():
    # leaf 127 is followed in key order by page 200, in the middle of its area
    lay = _toy_layout(list(range(64, 128)) + [200, 201])
    sim, dev, bp, ctx = _ctx(lay)
    lin = LinearReadAhead(ctx)
    _touch(sim, bp, range(64, 128))
    assert lin.on_first_access(127) is None and lin.pages_requested == 0


def test_linear_helps_a_sequential_table_and_barely_a_fragmented_one():
    seq, _, _ = _scan(_table("sequential", "32m", secondary_indexes=0), read_ahead="linear")
    frag, _, _ = _scan(_table("random", "32m", secondary_indexes=0), read_ahead="linear")
    assert seq["bp_hit_rate"] > 0.9 and seq["ra_linear_triggers"] > 0.8 * seq["leaf_pages"] / 64
    assert frag["bp_hit_rate"] < 0.05


# -- random ----------------------------------------------------------------------------
def test_random_read_ahead_needs_13_recently_used_pages_of_the_area():
    lay = _toy_layout(range(64, 192))
    sim, dev, bp, ctx = _ctx(lay)
    ra = RandomReadAhead(ctx)
    _touch(sim, bp, range(64, 76))                      # 12 pages
    assert ra.after_miss(80) is None
    _touch(sim, bp, [76])                               # 13
    ra.after_miss(80)
    sim.run()
    assert ra.pages_requested == 64 - 13 and all(bp.resident(p) for p in range(64, 128))


# -- physical --------------------------------------------------------------------------
def test_physical_warmup_reads_the_whole_file_in_file_order():
    lay = _table(secondary_indexes=1)
    r, dev, bp = _scan(lay, read_ahead="physical", aio_pages_per_submit=64)
    assert r["warmup_pages"] == lay.n_pages and r["pages_read"] == lay.n_pages
    assert r["pages_read_secondary_leaf"] > 0 and r["pages_read_free"] > 0
    assert r["bp_sync_reads"] == 0
    offsets = [s[2] for s in dev.served]
    assert offsets == sorted(offsets)                   # one sequential pass
    assert np.mean([s[3] for s in dev.served]) > 256 * 1024


@pytest.mark.parametrize("mode", ["refuse", "partial", "full"])
def test_physical_warmup_when_the_table_exceeds_the_buffer_pool(mode):
    lay = _table(size="16m", secondary_indexes=1)
    r, dev, bp = _scan(lay, pool="8m", read_ahead="physical", warmup_oversize=mode)
    if mode == "refuse":
        assert r["warmup_refused"] == 1 and r["warmup_pages"] == 0
    elif mode == "partial":
        assert r["warmup_pages"] == 512 and r["bp_sync_reads"] > 0
    else:
        assert r["warmup_pages"] == lay.n_pages and r["bp_read_ahead_evicted"] > 0


# -- logical ---------------------------------------------------------------------------
def test_logical_read_ahead_reads_only_clustered_leaves_sorted_in_batches():
    lay = _table(size="16m", secondary_indexes=2, loaded_share=0.5)
    batch_mb = 4
    r, dev, bp = _scan(lay, read_ahead="logical", innodb_lra_size=batch_mb,
                       innodb_lra_sleep=1, innodb_lra_n_node_recs_before_sleep=100,
                       aio_pages_per_submit=64)
    n_leaves = len(lay.leaves)
    per_batch = batch_mb * 64
    assert r["lra_batches"] == -(-n_leaves // per_batch)
    assert r["pages_read_secondary_leaf"] == r["pages_read_free"] == 0
    assert r["pages_read_clustered_leaf"] == n_leaves
    assert r["ra_logical_pages"] >= n_leaves - 1         # (the first leaf: the descent)
    assert r["lra_sleeps"] == n_leaves // 100
    # the first batch reaches the device in ascending page order
    first = [s[2] // PAGE for s in dev.served[:20]]
    assert first == sorted(first)


def test_multi_page_aio_hands_the_device_merged_requests_at_once():
    lay = _table(size="16m", secondary_indexes=0, loaded_share=0.5)
    one, dev1, _ = _scan(lay, read_ahead="logical", innodb_lra_size=4, aio_pages_per_submit=1)
    many, dev64, _ = _scan(lay, read_ahead="logical", innodb_lra_size=4, aio_pages_per_submit=64)
    assert many["bp_io_submits"] < one["bp_io_submits"] / 10
    # one page per io_submit: each goes to the idle device's queue as it comes; 64 per
    # io_submit: neighbours merge under the plug before the device sees them
    first_batch = slice(1, 33)
    assert {s[3] for s in dev1.served[first_batch]} == {PAGE}
    assert max(s[3] for s in dev64.served[first_batch]) >= 8 * PAGE


@pytest.mark.parametrize("key, value", [("read_ahead", "sequential"),
                                        ("innodb_read_ahead_threshold", 65),
                                        ("innodb_lra_size", -1), ("innodb_lra_sleep", 5000),
                                        ("innodb_lra_n_node_recs_before_sleep", 0),
                                        ("aio_pages_per_submit", 0), ("warmup_oversize", "x")])
def test_config_errors_name_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        ReadAheadConfig(**{key: value})


def test_logical_needs_a_batch_size():
    with pytest.raises(ValueError, match="^innodb_lra_size:"):
        ReadAheadConfig(read_ahead="logical", innodb_lra_size=0)
