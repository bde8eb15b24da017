"""E8's buffer pool against data (experiment=bp_ratio: tpcc, 10 warehouses ~0.95 GB,
pools 130M / 520M - the published 13 / 52 GB of ~100 GB divided by 100 -, 30 simulated
s at run.scale 0.05): with a pool a tenth of the data nearly all the pages written
leave through the LRU list (the reads push each dirtied page to the tail within
seconds, long before its age matters to the redo log) and innodb_io_capacity and the
log size then do not change throughput; with half the data in the pool the hot pages
stay, are dirtied again and are written from the flush list - the LRU list writes next
to nothing. Each run costs ~15-30 s of one core."""
import pytest

from tests.experiments.helpers import run_point

pytestmark = pytest.mark.slow

SCALE = "run.scale=0.05"


def _run(pool: str, *overrides: str) -> dict:
    return run_point("bp_ratio", SCALE, f"engine.innodb_buffer_pool_size={pool}", *overrides)


def _lru_share(r: dict) -> float:
    return (r["innodb.Innodb_buffer_pool_pages_LRU_flushed"]
            / r["innodb.Innodb_buffer_pool_pages_flushed"])


def test_small_pool_flushes_from_the_lru_list_half_the_data_from_the_flush_list():
    small, half = _run("130M"), _run("520M")
    assert _lru_share(small) > 0.75
    assert _lru_share(half) < 0.05
    assert half["innodb.Innodb_buffer_pool_pages_flushed"] > 10_000     # it does flush


@pytest.mark.parametrize("ov", [
    ("engine.innodb_io_capacity=400", "engine.innodb_io_capacity_max=2000"),
    pytest.param(("engine.innodb_log_file_size=80M",), marks=pytest.mark.xfail(
        strict=True, raises=AssertionError,
        reason="with the change buffer the 130M pool's NOTPM rises 8.5 % with a 4x log: "
               "the scaled 2 x 20M log bounds it (README, bp_ratio)")),
], ids=["io_capacity", "log_size"])
def test_lru_bound_io_capacity_and_log_size_do_not_matter(ov):
    base = _run("130M")
    r = _run("130M", *ov)
    assert _lru_share(r) > 0.75, ov
    assert r["tpcc.notpm"] == pytest.approx(base["tpcc.notpm"], rel=0.05), ov
