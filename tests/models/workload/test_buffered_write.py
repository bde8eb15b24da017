"""E6 buffered write() stalls: read-modify-write, stable pages, ext4 journal checkpoint."""
import pytest

from models.workload.buffered_write import BufferedWrite, BufferedWriteConfig
from tests.models.workload.fs_stack import hdd_fs, run_workload


def _run(fs_type="ext4", fs_kw=None, **kw):
    sim, fs = hdd_fs(fs_type, **(fs_kw or {}))
    return run_workload(sim, BufferedWrite(sim, BufferedWriteConfig(**kw), fs))


def test_rmw_512_byte_log_blocks_on_uncached_file_read_each_page_once():
    r = _run(write_bytes=512, count=256)        # 128 KB = 32 pages
    assert r["fs_rmw_reads"] == 32 and r["fs_pages_read"] == 32
    # the first read waits for the disk; the drive's read-ahead serves the next ones
    assert r["write_lat_max_ms"] > 1.0 and r["write_lat_over_1ms"] >= 1


@pytest.mark.parametrize("remedy", [dict(align="pad"), dict(align="remember"), dict(cached=True),
                                    dict(pattern="append"), dict(write_bytes=4096)])
def test_rmw_remedies_cause_no_device_reads(remedy):
    kw = dict(write_bytes=512, count=256)
    kw.update(remedy)
    r = _run(**kw)
    assert r["fs_rmw_reads"] == 0
    assert r["write_lat_max_ms"] < 0.1


def test_stable_pages_make_write_wait_for_writeback_of_its_page():
    kw = dict(pattern="append", write_bytes=512, count=100, sync="sync_file_range")
    stable = _run(fs_kw=dict(stable_pages=True, sfr_write_waits=False), **kw)
    free = _run(fs_kw=dict(stable_pages=False, sfr_write_waits=False), **kw)
    assert stable["write_lat_p50_ms"] > 2.0
    assert free["write_lat_max_ms"] < 0.1


def test_ext4_journal_checkpoint_stalls_write_xfs_does_not():
    kw = dict(pattern="append", write_bytes=4096, count=500, think_us=6000,
              background="metadata")
    ext4 = _run("ext4", fs_kw=dict(journal_bytes="4m"), **kw)
    xfs = _run("xfs", fs_kw=dict(journal_bytes="4m"), **kw)
    assert ext4["fs_checkpoints"] > 0 and ext4["write_lat_p99_ms"] > 5.0
    assert xfs["fs_checkpoints"] == 0 and xfs["write_lat_max_ms"] < 0.1
    # a journal large enough for the load: no checkpoint inside the run, no stall
    big = _run("ext4", fs_kw=dict(journal_bytes="128m"), **kw)
    assert big["fs_checkpoints"] == 0 and big["write_lat_max_ms"] < 0.1
