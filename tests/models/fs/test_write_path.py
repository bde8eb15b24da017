"""Buffered write(): read-modify-write, stable pages, allocation, dirty accounting."""
import pytest

from models.device.request import READ
from models.fs import SYNC_FILE_RANGE_WRITE
from models.fs.file import CACHED, DIRTY
from tests.models.fs.helpers import CacheDevice, run_thread, stack

KB = 1024


def _reads(dev):
    return [(e[2], e[3]) for e in dev.ops(READ)]


@pytest.mark.parametrize("fs_type", ["ext3", "ext4", "xfs", "zfs"])
def test_rmw_reads_only_for_partial_writes_to_uncached_written_pages(fs_type):
    sim, dev, q, fs = stack(fs_type)
    f = fs.create("data", 1024 * KB, "zero_fill")
    base = int(f.block[0]) * 4096

    def thread():
        yield fs.pwrite(f, 100, 1000)            # partial, uncached: read page 0
        yield fs.pwrite(f, 4096, 4096)           # whole page: no read
        yield fs.pwrite(f, 2000, 1000)           # page 0 now cached: no read
        yield fs.pwrite(f, 3 * 4096 + 10, 2 * 4096)   # pages 3..5, both ends partial
        yield fs.pwrite(f, 1024 * KB, 100)       # append into a new page: no read

    run_thread(sim, thread())
    assert _reads(dev) == [(base, 4096), (base + 3 * 4096, 4096), (base + 5 * 4096, 4096)]
    assert fs.stats()["rmw_reads"] == 3


def test_no_rmw_for_holes_unwritten_extents_or_after_drop_when_aligned():
    sim, dev, q, fs = stack("ext4")
    sparse = fs.create("sparse", 1024 * KB, "none")
    prealloc = fs.create("prealloc", 1024 * KB, "fallocate")

    def thread():
        yield fs.pwrite(sparse, 100, 1000)        # hole: zero-filled, no read
        yield fs.pwrite(prealloc, 100, 1000)      # unwritten extent: zeros, no read
        yield fs.pwrite(prealloc, 8192, 4096)

    run_thread(sim, thread())
    assert _reads(dev) == []


def test_unaligned_redo_log_blocks_read_uncached_pages_and_4k_blocks_do_not():
    """512-byte log blocks on 4 KB pages: a write of the uncached page reads it."""
    for block, expect in ((512, 8), (4096, 0)):
        sim, dev, q, fs = stack("ext4")
        f = fs.create("ib_logfile0", 1024 * KB, "zero_fill")

        def thread():
            for i in range(8):        # 8 log writes, each starting a new uncached page
                yield fs.pwrite(f, i * 8192, block)

        run_thread(sim, thread())
        assert len(_reads(dev)) == expect


@pytest.mark.parametrize("stable, waits", [(False, False), (True, True)])
def test_stable_pages_make_write_wait_for_writeback(stable, waits):
    sim, dev, q, fs = stack("ext4", device=lambda s: CacheDevice(s, service_ns=5_000_000),
                            stable_pages=stable)
    f = fs.create("f", 64 * KB, "zero_fill")
    lat = []

    def thread():
        yield fs.pwrite(f, 0, 4096)
        yield fs.sync_file_range(f, 0, 4096, SYNC_FILE_RANGE_WRITE)
        t0 = sim.now_ns
        yield fs.pwrite(f, 0, 4096)
        lat.append(sim.now_ns - t0)

    run_thread(sim, thread())
    assert (lat[0] > 4_000_000) == waits
    assert fs.stats()["stable_page_waits"] == (1 if waits else 0)


def test_ext3_allocates_in_write_ext4_and_xfs_at_writeback():
    for fs_type, allocated_after_write in (("ext3", True), ("ext4", False), ("xfs", False)):
        sim, dev, q, fs = stack(fs_type)
        f = fs.create("f")

        def thread():
            yield fs.pwrite(f, 0, 8192)

        run_thread(sim, thread())
        assert bool((f.block[:2] >= 0).all()) == allocated_after_write
        assert fs.cache.nr_dirty == 2 and f.size_bytes == 8192


def test_dirty_throttling_bounds_dirty_memory():
    sim, dev, q, fs = stack("ext4", memory="4m",
                            device=lambda s: CacheDevice(s, service_ns=100_000, mb_per_s=100))
    f = fs.create("big")
    peak = []

    def thread():
        for i in range(64):
            yield fs.pwrite(f, i * 64 * KB, 64 * KB)
            peak.append(fs.cache.nr_dirty + fs.cache.nr_writeback)

    run_thread(sim, thread())
    limit = fs.cache.dirty_limit_pages
    assert fs.cache.throttle_count > 0
    assert max(peak) <= limit + 16
    assert fs.cache.nr_cached <= fs.cache.limit_pages


def test_lru_evicts_oldest_clean_pages_first():
    sim, dev, q, fs = stack("ext4", memory="1m")
    f = fs.create("f", 4096 * KB, "zero_fill")

    def thread():
        yield fs.pread(f, 0, 512 * KB)
        yield fs.pread(f, 0, 4096)           # touch page 0 again
        yield fs.pread(f, 2048 * KB, 768 * KB)

    run_thread(sim, thread())
    assert fs.cache.nr_cached <= fs.cache.limit_pages
    cached = (f.state & 1) != 0
    assert cached[0], "recently used page 0 stays"
    # 384 read: each call's 128 / 192 pages and the 32-page read-ahead window past them
    # (the second call only touches page 0); 256 fit, +16 batch
    assert fs.writeback.pages_read == 160 + 224
    assert fs.cache.evicted_pages == 384 - 256 + 16
    # oldest first: pages 1..127 (read by the first call), then 17 of 128..159 (its
    # read-ahead, cached when its bio completed, after that call had returned)
    assert not cached[1:128].any() and cached[512:704].all()
    assert int(cached[128:160].sum()) == 32 - (144 - 127)


def test_pwrites_is_the_same_as_pwrite_calls_one_after_another():
    """``Filesystem.pwrites`` runs the calls back to back in one thread: the same
    times, the same page states and the same device requests as yielding each."""
    def run(batched):
        sim, dev, q, fs = stack("ext3")
        f = fs.create("a", 64 * 4096, "zero_fill")
        g = fs.create("b")
        calls = [(f, 5 * 4096 + 100, 1000), (g, 0, 300), (f, 9 * 4096, 4096), (g, 300, 5000)]
        done = []

        def thread():
            if batched:
                yield fs.pwrites(calls)
            else:
                for c in calls:
                    yield fs.pwrite(*c)
            done.append(sim.now_ns)
            yield fs.fsync(f)
            done.append(sim.now_ns)

        run_thread(sim, thread())
        return done, f.state[:64].tolist(), g.size_bytes, dev.log

    assert run(True) == run(False)


@pytest.mark.parametrize("pages", [1, 3])
def test_a_write_whose_file_grows_under_it_lands_in_the_grown_page_arrays(pages):
    """Two writers of one file: B's append grows the file's page arrays while A sleeps
    in its copy; A's pages must be dirty (and cached) in the arrays the file has now,
    not in the ones it had when A started (a write lost from the page cache)."""
    sim, dev, q, fs = stack("ext4")
    f = fs.create("data", 4 * 4096, "zero_fill")
    cap0 = f.cap
    fs.pwrite(f, 0, pages * 4096)                     # A (pwrite starts its own thread)
    fs.pwrite(f, 64 * cap0 * 4096, 100)               # B: far past the end
    sim.run(until_ns=10**6)
    assert f.cap > cap0                                           # B grew the arrays
    assert all(int(f.state[p]) & (DIRTY | CACHED) == DIRTY | CACHED for p in range(pages))
    assert f.nr_dirty == pages + 1
