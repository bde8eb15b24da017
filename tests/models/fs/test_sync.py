"""fsync / fdatasync / sync_file_range: the I/O each issues, and what a crash keeps."""
import pytest

from models.fs import (SYNC_FILE_RANGE_WAIT_AFTER, SYNC_FILE_RANGE_WAIT_BEFORE,
                       SYNC_FILE_RANGE_WRITE)
from tests.models.fs.helpers import CacheDevice, run_thread, stack
from tests.models.fs.helpers import trace as _trace

KB = 1024
SFR_ALL = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER


def _one(fs_type, prep, call, **kw):
    sim, dev, q, fs = stack(fs_type, **kw)
    f = fs.create("f", 1024 * KB if prep != "none" else 0, prep)

    def thread():
        yield fs.pwrite(f, 0, 8192)
        yield call(fs)(f)

    run_thread(sim, thread())
    return fs, dev, f


def test_ext4_fdatasync_overwrite_writes_data_then_flushes_no_journal():
    fs, dev, f = _one("ext4", "zero_fill", lambda fs: fs.fdatasync)
    assert _trace(fs, dev) == [("write", "data", 8192, False), ("flush",)]


def test_ext4_fdatasync_append_commits_journal_with_flush_and_fua():
    fs, dev, f = _one("ext4", "none", lambda fs: fs.fdatasync)
    # data (allocated at writeback), descriptor + 4 metadata blocks, preflush, commit block
    assert _trace(fs, dev) == [("write", "data", 8192, False),
                               ("write", "journal", 5 * 4096, False), ("flush",),
                               ("write", "journal", 4096, True)]


def test_ext4_fdatasync_after_fallocate_commits_the_unwritten_conversion():
    fs, dev, f = _one("ext4", "fallocate", lambda fs: fs.fdatasync)
    t = _trace(fs, dev)
    assert t[0] == ("write", "data", 8192, False)
    assert ("write", "journal", 4096, True) in t and fs.journal.commits == 1


def test_ext3_nobarrier_default_append_is_three_writes_no_flush():
    fs, dev, f = _one("ext3", "none", lambda fs: fs.fdatasync)
    # bitmap, group descriptor, inode, indirect block + descriptor; commit block
    assert _trace(fs, dev) == [("write", "data", 8192, False),
                               ("write", "journal", 5 * 4096, False),
                               ("write", "journal", 4096, False)]


def test_ext3_overwrite_is_one_data_write():
    fs, dev, f = _one("ext3", "zero_fill", lambda fs: fs.fdatasync)
    assert _trace(fs, dev) == [("write", "data", 8192, False)]


def test_ext3_with_barriers_flushes_an_overwrite_only_from_linux_2_6_32():
    # 2.6.18's ext3_sync_file: no commit needed, nothing sent - the data may sit in the
    # drive's cache; 2.6.32 added the flush (fs.fsync_flushes_cache, the kernel's default)
    fs, dev, f = _one("ext3", "zero_fill", lambda fs: fs.fdatasync, nobarrier=False)
    assert _trace(fs, dev) == [("write", "data", 8192, False)]
    fs, dev, f = _one("ext3", "zero_fill", lambda fs: fs.fdatasync, nobarrier=False,
                      fsync_flushes_cache=True)
    assert _trace(fs, dev) == [("write", "data", 8192, False), ("flush",)]


def test_fsync_commits_timestamp_change_fdatasync_does_not():
    fs, dev, f = _one("ext4", "zero_fill", lambda fs: fs.fsync)
    assert fs.journal.commits == 1
    fs, dev, f = _one("ext4", "zero_fill", lambda fs: fs.fdatasync)
    assert fs.journal.commits == 0


def test_xfs_fdatasync_append_is_data_then_one_small_log_write():
    fs, dev, f = _one("xfs", "none", lambda fs: fs.fdatasync)
    assert _trace(fs, dev) == [("write", "data", 8192, False), ("flush",),
                               ("write", "journal", 1536, True)]


def test_zfs_fsync_logs_data_to_the_intent_log_for_append_and_overwrite():
    for prep in ("none", "zero_fill"):
        fs, dev, f = _one("zfs", prep, lambda fs: fs.fdatasync)
        assert _trace(fs, dev) == [("write", "journal", 12288, False), ("flush",)]


def test_sync_file_range_rounds_to_pages_and_writes_no_metadata():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 1024 * KB, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 16 * KB)
        yield fs.sync_file_range(f, 4000, 200, SFR_ALL)      # pages 0 and 1

    run_thread(sim, thread())
    assert _trace(fs, dev) == [("write", "data", 8192, False)]
    assert f.block[0] * 4096 == dev.log[0][2]


def test_sync_file_range_write_returns_before_the_io_completes():
    sim, dev, q, fs = stack("ext4", device=lambda s: CacheDevice(s, service_ns=5_000_000))
    f = fs.create("f", 1024 * KB, "zero_fill")
    lat = {}

    def thread():
        yield fs.pwrite(f, 0, 8192)
        t0 = sim.now_ns
        yield fs.sync_file_range(f, 0, 8192, SYNC_FILE_RANGE_WRITE)
        lat["write"] = sim.now_ns - t0
        t0 = sim.now_ns
        yield fs.sync_file_range(f, 0, 8192, SYNC_FILE_RANGE_WAIT_AFTER)
        lat["wait"] = sim.now_ns - t0

    run_thread(sim, thread())
    assert lat["write"] < 100_000 and 4_000_000 < lat["wait"] < 5_100_000


@pytest.mark.parametrize("fs_type", ["ext4", "xfs", "ext3"])
def test_crash_after_sync_file_range_loses_appended_size_fdatasync_keeps_it(fs_type):
    """Write-through device (no volatile cache): only the journal decides."""
    for call, size in ((lambda fs, f: fs.sync_file_range(f, 0, 8192, SFR_ALL), 0),
                       (lambda fs, f: fs.fdatasync(f), 8192)):
        sim, dev, q, fs = stack(fs_type, device=lambda s: CacheDevice(s, write_cache=False))
        f = fs.create("log")
        state = {}

        def thread():
            yield fs.pwrite(f, 0, 8192)
            yield call(fs, f)
            state["crash"] = fs.crash_state()

        run_thread(sim, thread())
        c = state["crash"]["log"]
        assert c.size_bytes == 8192
        assert c.recovered_size_bytes == size
        assert c.lost_bytes == 8192 - size


def test_crash_nobarrier_with_volatile_device_cache_loses_fdatasynced_data():
    for nobarrier, lost in ((True, 8192), (False, 0)):
        sim, dev, q, fs = stack("ext4", nobarrier=nobarrier)
        f = fs.create("log")
        state = {}

        def thread():
            yield fs.pwrite(f, 0, 8192)
            yield fs.fdatasync(f)
            state["crash"] = fs.crash_state()

        run_thread(sim, thread())
        c = state["crash"]["log"]
        assert c.lost_bytes == lost
        assert c.recovered_size_bytes == 8192 - lost
        assert (dev.volatile_bytes() > 0) == nobarrier


def test_crash_overwrite_without_sync_is_lost_then_durable_after_fsync():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 64 * KB, "zero_fill")
    states = []

    def thread():
        yield fs.pwrite(f, 4096, 4096)
        states.append(fs.crash_state()["f"])
        yield fs.fsync(f)
        states.append(fs.crash_state()["f"])

    run_thread(sim, thread())
    assert states[0].lost_ranges == [(4096, 4096)]
    assert states[1].lost_ranges == [] and states[1].recovered_size_bytes == 64 * KB
