"""Writeback, journals and filesystem differences: ordered data, clustering, expiry,
checkpoints, copy-on-write, O_DIRECT, preallocation."""
import numpy as np
import pytest

from models.device.request import READ, WRITE
from models.fs import SYNC_FILE_RANGE_WRITE, PageCacheConfig
from tests.models.fs.helpers import CacheDevice, run_thread, stack

KB = 1024
MB = 1024 * KB


def _bw_device(s):
    return CacheDevice(s, service_ns=100_000, mb_per_s=100, write_cache=False, queue_depth=4)


@pytest.mark.parametrize("fs_type, stalls", [("ext3", True), ("ext4", False), ("xfs", False)])
def test_ordered_mode_commit_forces_out_other_files_data_only_on_ext3(fs_type, stalls):
    """16 MB dirty in one file, then append + fdatasync of another: on ext3 the commit
    writes the whole filesystem's dirty data first (~160 ms at 100 MB/s)."""
    sim, dev, q, fs = stack(fs_type, device=_bw_device, memory="1g")
    big = fs.create("big", 16 * MB, "zero_fill")
    log = fs.create("log")
    lat = []

    def thread():
        yield fs.pwrite(big, 0, 16 * MB)
        t0 = sim.now_ns
        yield fs.pwrite(log, 0, 4096)
        yield fs.fdatasync(log)
        lat.append(sim.now_ns - t0)

    run_thread(sim, thread())
    assert (lat[0] > 150_000_000) == stalls
    assert (fs.cache.nr_dirty == 0) == stalls     # ext4/xfs leave big's pages dirty
    if not stalls:
        assert lat[0] < 2_000_000


def test_xfs_clusters_following_dirty_pages_ext4_writes_only_the_range():
    written = {}
    for fs_type in ("xfs", "ext4"):
        sim, dev, q, fs = stack(fs_type)
        f = fs.create("f")

        def thread():
            yield fs.pwrite(f, 0, 21000)                 # pages 0..5 dirty
            yield fs.sync_file_range(f, 0, 16 * KB, SYNC_FILE_RANGE_WRITE)

        run_thread(sim, thread())
        written[fs_type] = sum(e[3] for e in dev.ops(WRITE) if e[2] >= fs.layout.data_start * 4096)
    assert written == {"xfs": 6 * 4096, "ext4": 4 * 4096}


def test_xfs_cluster_is_at_most_64_pages():
    sim, dev, q, fs = stack("xfs")
    f = fs.create("f")

    def thread():
        yield fs.pwrite(f, 0, 200 * 4096)
        yield fs.sync_file_range(f, 0, 4096, SYNC_FILE_RANGE_WRITE)

    run_thread(sim, thread())
    assert fs.writeback.pages_written == 65


def test_flusher_writes_expired_dirty_data_after_dirty_expire_centisecs():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 64 * KB, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 4096)

    run_thread(sim, thread())
    data = lambda: [e for e in dev.ops(WRITE) if e[2] >= fs.layout.data_start * 4096]
    sim.run(until_ns=29 * 10**9)
    assert data() == [] and fs.cache.nr_dirty == 1
    sim.run(until_ns=36 * 10**9)     # expired at 30 s, flusher wakes every 5 s
    assert len(data()) == 1 and fs.cache.nr_dirty == 0
    assert 30e9 <= data()[0][0] <= 35.1e9


def test_background_writeback_starts_above_dirty_background_ratio():
    cfg = PageCacheConfig(memory_bytes="16m", dirty_background_ratio=10, dirty_ratio=50)
    sim, dev, q, fs = stack("ext4", cache_cfg=cfg)
    f = fs.create("f", 16 * MB, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 1 * MB)          # 256 pages < 409 (10 %)
        yield 1_000_000
        assert fs.writeback.pages_written == 0
        yield fs.pwrite(f, 1 * MB, 1 * MB)     # 512 pages > 409
        yield 1_000_000
        assert fs.writeback.pages_written > 0

    run_thread(sim, thread())


def test_jbd2_commit_interval_commits_timestamp_updates_every_5_s():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 64 * KB, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 4096)

    run_thread(sim, thread())
    sim.run(until_ns=4_900_000_000)
    assert fs.journal.commits == 0
    sim.run(until_ns=5_100_000_000)
    assert fs.journal.commits == 1


def test_checkpoint_writes_home_blocks_and_frees_journal_space():
    sim, dev, q, fs = stack("ext4", journal_bytes="1m")
    f = fs.create("sparse", 4 * 1024 * MB, "none")
    j = fs.journal

    def thread():
        for i in range(120):       # each append in a new 4 MB stretch: new extent blocks
            yield fs.pwrite(f, i * 4 * MB, 4096)
            yield fs.fsync(f)

    run_thread(sim, thread())
    assert j.checkpoints > 0 and j.home_blocks_written > 0
    homes = [e for e in dev.ops(WRITE) if e[2] < fs.layout.journal_start * 4096]
    assert len(homes) > 0


def test_zfs_overwrite_allocates_new_blocks_at_txg_sync():
    sim, dev, q, fs = stack("zfs")
    f = fs.create("f", 64 * KB, "zero_fill")
    old = f.block[:4].copy()

    def thread():
        yield fs.pwrite(f, 0, 4 * 4096)

    run_thread(sim, thread())
    sim.run(until_ns=6 * 10**9)      # zfs_txg_timeout = 5 s
    assert fs.journal.txg_syncs == 1
    assert (f.block[:4] != old).all() and (np.diff(f.block[:4]) == 1).all()
    assert (f.block[4:16] == old[0] + np.arange(4, 16)).all()   # untouched pages stay
    assert fs.crash_state()["f"].lost_bytes == 0


def test_direct_io_bypasses_the_cache_and_reads_unwritten_as_zeros():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("ibdata1", 1 * MB, "fallocate")

    def thread():
        n = yield fs.pread(f, 0, 16 * KB, direct=True)     # unwritten: no I/O
        assert n == 16 * KB
        yield fs.pwrite(f, 16 * KB, 16 * KB, direct=True)
        yield fs.pread(f, 16 * KB, 16 * KB, direct=True)
        yield fs.fdatasync(f)                               # the conversion is committed

    run_thread(sim, thread())
    base = int(f.block[0]) * 4096
    rw = [(e[1], e[2] - base, e[3]) for e in dev.log if e[1] in (READ, WRITE) and e[2] >= base]
    assert rw == [(WRITE, 16 * KB, 16 * KB), (READ, 16 * KB, 16 * KB)]
    assert fs.cache.nr_cached == 0 and fs.journal.commits == 1


def test_direct_write_flushes_dirty_cached_pages_of_the_range_first():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 1 * MB, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 8 * KB)
        yield fs.pwrite(f, 0, 8 * KB, direct=True)

    run_thread(sim, thread())
    writes = [e[3] for e in dev.ops(WRITE)]
    assert writes == [8 * KB, 8 * KB] and fs.cache.nr_cached == 0


def test_fallocate_unsupported_on_ext3_posix_fallocate_zero_fills():
    sim, dev, q, fs = stack("ext3")
    f = fs.create("f")
    with pytest.raises(OSError):
        fs.fallocate(f, 0, MB)

    def thread():
        yield fs.posix_fallocate(f, 0, MB)

    run_thread(sim, thread())
    assert f.size_bytes == MB and fs.cache.nr_dirty == 256
    assert (f.block[:256] >= 0).all()        # ext3 allocates in write()


def test_ext4_fallocate_allocates_unwritten_extents_without_dirty_pages():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f")

    def thread():
        yield fs.fallocate(f, 0, MB)

    run_thread(sim, thread())
    assert f.size_bytes == MB and fs.cache.nr_dirty == 0
    assert (f.block[:256] >= 0).all() and (f.state[:256] & 16).all()


def test_sync_file_range_blocks_when_nr_requests_are_in_use():
    sim, dev, q, fs = stack("ext4", nr_requests=4,
                            device=lambda s: CacheDevice(s, service_ns=1_000_000))
    a = fs.create("a", 16 * MB, "zero_fill")
    lat = []

    def thread():
        for i in range(8):           # 8 separate (non-contiguous) pages
            yield fs.pwrite(a, i * 8192, 4096)
        t0 = sim.now_ns
        yield fs.sync_file_range(a, 0, 16 * 8192, SYNC_FILE_RANGE_WRITE)
        lat.append(sim.now_ns - t0)

    run_thread(sim, thread())
    # 8 requests, 4 may be allocated - 6 by the thread that fills the list, a batcher
    # to 3/2 nr_requests -, the 7th sleeps until the list is below 4 again (3
    # completions, 1 ms each, one at a time), then the thread takes the last two
    assert 3_000_000 <= lat[0] < 3_100_000
    assert fs.stats()["blocked_submits"] == 1


def _ext3_cached_file(fs, pages):
    f = fs.create("ix", pages * 4096, "zero_fill")
    fs.mark_cached(f, np.arange(pages))
    return f


def test_ext3_timer_commit_submits_in_dirtying_order_and_merges_adjacent_buffers():
    """jbd's t_sync_datalist: the 5 s commit sends buffers in the order write() first
    filed them (10, 3, 7, 4, 5), not in file order; the elevator merges what it can."""
    sim, dev, q, fs = stack("ext3", device=lambda s: CacheDevice(s, write_cache=False),
                            memory="64m")
    f = _ext3_cached_file(fs, 16)
    base = int(f.block[0])

    def thread():
        for p in (10, 3, 7, 4, 5, 10):
            yield fs.pwrite(f, p * 4096 + 100, 1000)

    run_thread(sim, thread())
    sim.run(until_ns=sim.now_ns + 6 * 10**9)          # kjournald's 5 s commit
    data = [((off // 4096) - base, size) for _, _, off, size, _ in dev.ops(WRITE)
            if off >= base * 4096]
    # 10 goes first; 4 and 5 back-merge into 3's request, still queued behind it
    assert data == [(10, 4096), (3, 12288), (7, 4096)]
    assert fs.cache.nr_dirty == 0 and int(f.otid[:16].max()) == 0


def test_ext3_write_to_a_buffer_still_dirty_in_the_committing_transaction_waits_for_it():
    """With one request slot kjournald submits one buffer and sleeps; a write() to a
    buffer further down its list writes that buffer out itself and waits for the
    disk; a write() to the buffer already under I/O just refiles it (no wait)."""
    slow = lambda s: CacheDevice(s, service_ns=10_000_000, write_cache=False)
    sim, dev, q, fs = stack("ext3", device=slow, memory="64m", nr_requests=1)
    f = _ext3_cached_file(fs, 16)
    lat = {}

    def writer():
        for p in (1, 5, 9):
            yield fs.pwrite(f, p * 4096, 512)
        yield 5_005_000_000 - sim.now_ns                # the 5 s commit has started
        assert fs.journal.committing is not None
        for p in (1, 9):
            t0 = sim.now_ns
            yield fs.pwrite(f, p * 4096, 512)
            lat[p] = sim.now_ns - t0

    run_thread(sim, writer())
    assert lat[1] < 100_000                             # under I/O: refiled, no wait
    assert lat[9] > 10_000_000                          # dirty on the list: written, waited for
    assert fs.stats_ordered_sync_writes == 1
    sim.run(until_ns=sim.now_ns + 11 * 10**9)
    assert fs.cache.nr_dirty == 0                        # the next commit wrote 1 and 9 again


def test_background_writeback_backs_off_from_a_congested_queue():
    """The flusher is non-blocking (wbc->nonblocking): while 7/8 of nr_requests are in
    use it waits 100 ms (congestion_wait) rather than queueing behind them."""
    from models.device.request import IORequest
    slow = lambda s: CacheDevice(s, service_ns=5_000_000, write_cache=False)
    cfg = PageCacheConfig(memory_bytes="64m", dirty_expire_centisecs=100,
                          dirty_writeback_centisecs=100)
    sim, dev, q, fs = stack("ext4", device=slow, nr_requests=16, cache_cfg=cfg)
    assert q.nr_requests - q.nr_requests // 8 + 1 == 15
    f = fs.create("f", 8 * 4096, "zero_fill")

    def thread():
        yield fs.pwrite(f, 0, 8 * 4096)                 # dirty at t=0: written at the 2 s wake
        yield 1_900_000_000
        for i in range(100):                             # 100 scattered writes: 0.5 s congested
            q.submit(IORequest(WRITE, (1 << 30) + i * (1 << 20), 4096))
        assert q.congested()

    run_thread(sim, thread())
    sim.run(until_ns=3 * 10**9)
    order = [off for _, op, off, _, _ in dev.ops(WRITE)]
    first_f = next(i for i, off in enumerate(order) if off < (1 << 30))
    assert fs.writeback.congestion_waits >= 3             # 2.0, 2.1, 2.2 s ...
    assert first_f >= 100 - 15                           # only once the queue has drained
    assert fs.cache.nr_dirty == 0                        # and then written
