"""The flusher's range_cyclic sweeps (``writeback_index``) and the dirty thresholds
when dirty_background_ratio is not below dirty_ratio (``global_dirty_limits``)."""
import pytest

from models.device.request import WRITE
from models.fs import PageCache, PageCacheConfig
from models.sim import Simulator
from tests.models.fs.helpers import CacheDevice, run_thread, stack

KB, MB = 1024, 1 << 20


def _log_batches(fs):
    """Record each writeback batch (``write_pages`` call: one plug) as (first page,
    last page + 1, pages)."""
    wb, log = fs.writeback, []
    orig = wb.write_pages

    def write_pages(f, pages, sync, issuer=0):
        log.append((int(pages[0]), int(pages[-1]) + 1, int(pages.size)))
        return orig(f, pages, sync, issuer)
    wb.write_pages = write_pages
    return log


def test_background_sweeps_resume_at_writeback_index_and_wrap():
    """``write_cache_pages`` with ``range_cyclic``: each 1024-page sweep starts where
    the previous one stopped; at the end of the file it wraps to page 0 within the
    same budget, and the next sweep resumes after the last page written."""
    sim, dev, q, fs = stack("ext4", memory="1g")          # far below the thresholds
    f = fs.create("f", 3000 * 4096, "zero_fill")
    wb = fs.writeback
    log = _log_batches(fs)

    def thread():
        yield fs.pwrite(f, 0, 3000 * 4096)
        assert (yield from wb._write_chunks(f, 1024))
        assert f.writeback_index == 1024
        assert (yield from wb._write_chunks(f, 1024))
        assert f.writeback_index == 2048
        yield from wb.wait_range(f, 0, f.cap)
        yield fs.pwrite(f, 0, 100 * 4096)                   # redirty pages 0..99
        assert (yield from wb._write_chunks(f, 1024))       # 2048..2999, then 0..71
        assert f.writeback_index == 72
        assert (yield from wb._write_chunks(f, 1024))       # 72..99, nothing to wrap to
        assert f.writeback_index == 100
        yield from wb.wait_range(f, 0, f.cap)

    run_thread(sim, thread())
    assert log == [(0, 1024, 1024), (1024, 2048, 1024),
                   (2048, 3000, 952), (0, 72, 72), (72, 100, 28)]
    assert sum(size for *_, size, _ in dev.ops(WRITE)) >= 3100 * 4096
    assert fs.cache.nr_dirty == 0


def test_kupdate_sweep_starts_at_writeback_index_and_wraps():
    sim, dev, q, fs = stack("ext4", memory="1g")
    f = fs.create("f", 3000 * 4096, "zero_fill")
    f.writeback_index = 2000
    log = _log_batches(fs)

    def thread():
        yield fs.pwrite(f, 0, 3000 * 4096)
        yield from fs.writeback._write_chunks(f, None)      # all of it, from 2000
        yield from fs.writeback.wait_range(f, 0, f.cap)

    run_thread(sim, thread())
    assert log == [(2000, 3000, 1000), (0, 1024, 1024), (1024, 2000, 976)]
    assert f.writeback_index == 2000 and fs.cache.nr_dirty == 0


def test_fsync_writes_the_file_from_page_0():
    """fsync (``filemap_write_and_wait``) is a range 0..end sweep, not a cyclic one,
    and leaves ``writeback_index`` where the flusher left it."""
    sim, dev, q, fs = stack("ext4", memory="1g")
    f = fs.create("f", 512 * 4096, "zero_fill")
    f.writeback_index = 300
    log = _log_batches(fs)

    def thread():
        yield fs.pwrite(f, 0, 512 * 4096)
        yield fs.fsync(f)

    run_thread(sim, thread())
    assert log == [(0, 512, 512)]
    assert f.writeback_index == 300


def test_a_file_rewritten_in_a_loop_is_written_at_the_devices_speed():
    """A writer looping over a 20 MB file with 64 MB of memory (background 6.4 MB,
    limit 12.8 MB): the flusher follows the writer round the file, so everything the
    writer writes reaches the device but what is still dirty - a flusher that always
    restarted at page 0 let the writer redirty pages already dirty and run ahead of
    the device."""
    cfg = PageCacheConfig(memory_bytes="64m")
    sim, dev, q, fs = stack("ext4", cache_cfg=cfg,
                            device=lambda s: CacheDevice(s, service_ns=100_000, mb_per_s=100))
    f = fs.create("f", 20 * MB, "zero_fill")
    written = [0]

    def thread():
        while True:
            for i in range(20):
                yield fs.pwrite(f, i * MB, MB)
                written[0] += 256

    sim.spawn(thread())
    sim.run(until_ns=5 * 10**9)
    assert written[0] > 4 * 5120                           # several laps
    behind = written[0] - fs.writeback.pages_written
    assert behind <= fs.cache.dirty_limit_pages + 256     # only the dirty pages lag


@pytest.mark.parametrize("dirty_ratio, background_ratio", [(5, 10), (10, 10)])
def test_background_threshold_not_below_the_limit_is_half_the_limit(dirty_ratio,
                                                                    background_ratio):
    cfg = PageCacheConfig(memory_bytes="1g", dirty_ratio=dirty_ratio,
                          dirty_background_ratio=background_ratio)
    cache = PageCache(Simulator(), cfg)
    assert cache.dirty_limit_pages == 262144 * dirty_ratio // 100
    assert cache.background_pages == cache.dirty_limit_pages // 2


def test_writer_with_dirty_ratio_below_background_ratio_runs_at_device_speed():
    """dirty_ratio=5, dirty_background_ratio=10: the writer is throttled at 5 % and
    the flusher starts at 2.5 % - it no longer waits for writeback that nothing starts."""
    cfg = PageCacheConfig(memory_bytes="64m", dirty_ratio=5, dirty_background_ratio=10)
    sim, dev, q, fs = stack("ext4", cache_cfg=cfg,
                            device=lambda s: CacheDevice(s, service_ns=100_000, mb_per_s=100))
    f = fs.create("f", 64 * MB, "zero_fill")

    def thread():
        for i in range(40):
            yield fs.pwrite(f, i * MB, MB)

    run_thread(sim, thread(), until_ns=10**9)             # 40 MB at 100 MB/s: ~0.4 s
    assert fs.cache.background_pages == 409 and fs.cache.dirty_limit_pages == 819
    assert fs.cache.throttle_count > 0
    assert fs.writeback.pages_written >= 40 * 256 - fs.cache.dirty_limit_pages - 256
