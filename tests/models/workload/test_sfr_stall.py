"""E6 sync_file_range stalls: each appears under its condition, vanishes under its remedy."""
import pytest

from models.workload.sfr_stall import SfrStall, SfrStallConfig
from tests.models.workload.fs_stack import hdd_fs, run_workload


def _run(fs_type="ext4", nr_requests=128, fs_kw=None, **kw):
    sim, fs = hdd_fs(fs_type, nr_requests=nr_requests, **(fs_kw or {}))
    return run_workload(sim, SfrStall(sim, SfrStallConfig(**kw), fs))


def test_stall1_unaligned_small_writes_wait_for_writeback_of_the_shared_page():
    r = _run(pattern="unaligned_small", write_bytes=1000, count=200)
    assert r["sfr_lat_p50_ms"] > 2.0          # one HDD write per call (15k rpm, WCE off)
    assert r["sfr_lat_over_1ms"] >= 190


@pytest.mark.parametrize("remedy", [dict(write_bytes=4096), dict(fs_kw=dict(sfr_write_waits=False))])
def test_stall1_disappears_with_aligned_writes_or_wb_sync_none(remedy):
    kw = dict(pattern="unaligned_small", write_bytes=1000, count=200)
    kw.update(remedy)
    r = _run(**kw)
    assert r["sfr_lat_max_ms"] < 0.1 and r["sfr_lat_over_1ms"] == 0


def test_stall2_bulk_ranges_wait_on_xfs_not_on_ext4():
    xfs = _run("xfs", pattern="bulk", write_bytes=21000, count=100)
    ext4 = _run("ext4", pattern="bulk", write_bytes=21000, count=100)
    assert xfs["sfr_lat_p99_ms"] > 2.0 and xfs["sfr_lat_over_1ms"] > 50
    assert ext4["sfr_lat_max_ms"] < 0.1
    # xfs wrote the clustered neighbour page early: more pages written for the same data
    assert xfs["fs_pages_written"] > ext4["fs_pages_written"]


def test_stall3_full_request_queue_blocks_submission_until_nr_requests_is_raised():
    # 3000 calls (3 s, six bursts): since cfq idles as 2.6.18's, 1500 calls see 4 stalls
    kw = dict(pattern="aligned_busy", write_bytes=4096, count=3000, think_us=1000,
              busy_burst=384, busy_interval_ms=500, reader=True)
    small = _run(nr_requests=128, **kw)
    big = _run(nr_requests=1024, **kw)
    # Only writeback bios that cannot merge into a queued request sleep for one (Linux
    # tries the merge before get_request), so a handful of calls stall, not all.
    assert small["sfr_lat_max_ms"] > 1.0 and small["sfr_lat_over_1ms"] >= 5
    assert small["fs_blocked_submits"] > 0
    assert big["sfr_lat_max_ms"] < 0.1 and big["fs_blocked_submits"] == 0
    assert big["read_lat_p99_ms"] > small["read_lat_p99_ms"]   # reads wait behind more writes
