"""Random mixes of operations keep the page-cache counters equal to the page states,
and a final fsync of every file leaves nothing to lose."""
import numpy as np
import pytest

from models.fs import SYNC_FILE_RANGE_WAIT_AFTER, SYNC_FILE_RANGE_WRITE, PageCacheConfig
from models.fs.file import CACHED, DIRTY, WRITEBACK
from tests.models.fs.helpers import CacheDevice, run_thread, stack

KB = 1024


def _check(fs):
    cache = fs.cache
    tot = {CACHED: 0, DIRTY: 0, WRITEBACK: 0}
    for f in fs.files.values():
        st = f.state[:f.cap]
        for flag in tot:
            tot[flag] += int(np.count_nonzero(st & flag))
        assert f.nr_dirty == int(np.count_nonzero(st & DIRTY))
        assert f.nr_wb == int(np.count_nonzero(st & WRITEBACK))
        assert f.nr_cached == int(np.count_nonzero(st & CACHED))
        d = np.flatnonzero(st & DIRTY)
        if d.size:
            assert f.dirty_lo <= d[0] and d[-1] < f.dirty_hi
        w = np.flatnonzero(st & WRITEBACK)
        if w.size:
            assert f.wb_lo <= w[0] and w[-1] < f.wb_hi
    assert (cache.nr_cached, cache.nr_dirty, cache.nr_writeback) == \
        (tot[CACHED], tot[DIRTY], tot[WRITEBACK])


@pytest.mark.parametrize("fs_type", ["ext3", "ext4", "xfs", "zfs"])
def test_random_operations_keep_counters_consistent(fs_type):
    cfg = PageCacheConfig(memory_bytes="2m", dirty_background_ratio=20, dirty_ratio=50)
    sim, dev, q, fs = stack(fs_type, cache_cfg=cfg, nobarrier=False,
                            device=lambda s: CacheDevice(s, service_ns=200_000, queue_depth=4))
    files = [fs.create("a", 1024 * KB, "zero_fill"), fs.create("b"),
             fs.create("c", 512 * KB, "fallocate" if fs_type in ("ext4", "xfs") else "none")]

    def worker(seed):
        r = np.random.default_rng(seed)
        for _ in range(150):
            f = files[int(r.integers(0, 3))]
            off = int(r.integers(0, 1536 * KB))
            n = int(r.integers(1, 20 * KB))
            op = int(r.integers(0, 7))
            if op <= 2:
                yield fs.pwrite(f, off, n)
            elif op == 3:
                yield fs.pread(f, off, n)
            elif op == 4:
                yield fs.sync_file_range(f, off, n, SYNC_FILE_RANGE_WRITE)
            elif op == 5:
                yield fs.fdatasync(f)
            else:
                off, n = off // 512 * 512, max(512, n // 512 * 512)
                yield (fs.pwrite if r.integers(0, 2) else fs.pread)(f, off, n, direct=True)
            _check(fs)

    def main():
        procs = [sim.spawn(worker(s)) for s in (1, 2, 3)]
        for p in procs:
            yield p
        for f in files:
            yield fs.fsync(f)
            yield fs.sync_file_range(f, 0, 0, SYNC_FILE_RANGE_WAIT_AFTER)
        _check(fs)
        crash = fs.crash_state()
        for f in files:
            c = crash[f.name]
            assert c.lost_bytes == 0, (f.name, c.lost_ranges)
            assert c.recovered_size_bytes == f.size_bytes

    run_thread(sim, main())
    assert fs.cache.nr_cached <= fs.cache.limit_pages + 64
    assert fs.cache.evicted_pages > 0 and fs.writeback.pages_written > 0
    assert fs.stats()["rmw_reads"] > 0
