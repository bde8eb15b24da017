"""Buffered read(): Linux's on-demand read-ahead (mm/readahead.c) - the windows a
reader's misses and PG_readahead markers start, and the bios they become."""
import pytest

from models.device.request import READ
from models.fs import PageCacheConfig
from tests.models.fs.helpers import CacheDevice, run_thread, stack

KB = 1024


def _read_bios(dev, f):
    """(first page, pages) of each device read of ``f``, in service order."""
    page_of = {int(b): p for p, b in enumerate(f.block[:f.npages])}
    return [(page_of[off // 4096], size // 4096) for _, _, off, size, _ in dev.ops(READ)]


def _reader(fs, f, offsets, size):
    def thread():
        for off in offsets:
            yield fs.pread(f, off, size)
    return thread()


def test_4k_sequential_reader_issues_window_sized_bios():
    """From page 0: a 4-page initial window (one page asked, x4), then each next window
    (x2 up to read_ahead_kb = 32 pages) read when the reader reaches the first page of
    the previous one's async part - one bio per window, not one per 4 KB read."""
    sim, dev, q, fs = stack("ext4", device=lambda s: CacheDevice(s, mb_per_s=200))
    f = fs.create("f", 1024 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, range(0, 1024 * KB, 4096), 4096))
    assert _read_bios(dev, f) == [(0, 4), (4, 8), (12, 16), (28, 32), (60, 32), (92, 32),
                                  (124, 32), (156, 32), (188, 32), (220, 32), (252, 4)]
    assert fs.writeback.pages_read == 256


def test_sequential_reader_keeps_the_device_busy_one_window_ahead():
    sim, dev, q, fs = stack("ext4", device=lambda s: CacheDevice(s, mb_per_s=100))
    f = fs.create("f", 4096 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, range(0, 4096 * KB, 4096), 4096))
    log = dev.ops(READ)
    assert all(size == 128 * KB for _, _, _, size, _ in log[3:-1])
    service = lambda size: 100_000 + int(size * 1e9 / (100 * 2**20))
    # each window is queued before the previous one completes: no idle time between
    for (t0, _, _, size, _), (t1, _, _, _, _) in zip(log[3:], log[4:]):
        assert t1 == t0 + service(size)


def test_random_4k_reads_read_just_their_page():
    """A small read away from the previous one is read as is (no window), and leaves
    the read-ahead state alone; the next page after the previous read is a sequential
    miss and starts an initial window (4 pages for one asked)."""
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 4096 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, [p * 4096 for p in (100, 37, 800, 501)], 4096))
    assert _read_bios(dev, f) == [(100, 1), (37, 1), (800, 1), (501, 1)]
    assert not f.ra_marks and f.ra_size == 0
    run_thread(sim, _reader(fs, f, [502 * 4096], 4096))
    assert _read_bios(dev, f)[-1] == (502, 4)
    assert f.ra_marks == {503}               # async part = the 3 pages not asked for


def test_random_16k_reads_read_their_4_pages():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 4096 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, [p * 4096 for p in (100, 36, 800)], 16 * KB))
    assert _read_bios(dev, f) == [(100, 4), (36, 4), (800, 4)]


def test_large_read_is_read_in_read_ahead_kb_windows():
    """A 1 MB read from page 0 (oversize: more than read_ahead_kb): a 32-page initial
    window merged with the next (the reader would hit its marker at once), then one
    32-page window per marker; the last is past the call, for the next one."""
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f", 2048 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, [0], 1024 * KB))
    assert _read_bios(dev, f) == [(0, 64)] + [(p, 32) for p in range(64, 288, 32)]
    run_thread(sim, _reader(fs, f, [1024 * KB], 1024 * KB))    # the next call continues
    assert _read_bios(dev, f)[8:] == [(p, 32) for p in range(288, 512, 32)]


def test_read_ahead_kb_0_reads_only_the_pages_asked_for():
    cfg = PageCacheConfig(memory_bytes="64m", read_ahead_kb=0)
    sim, dev, q, fs = stack("ext4", cache_cfg=cfg)
    f = fs.create("f", 1024 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, range(0, 64 * KB, 4096), 4096))
    assert _read_bios(dev, f) == [(p, 1) for p in range(16)]


@pytest.mark.parametrize("ra_kb", [128, 512])
def test_window_never_passes_read_ahead_kb_nor_the_end_of_file(ra_kb):
    cfg = PageCacheConfig(memory_bytes="64m", read_ahead_kb=ra_kb)
    sim, dev, q, fs = stack("ext4", cache_cfg=cfg)
    f = fs.create("f", 3000 * KB, "zero_fill")
    run_thread(sim, _reader(fs, f, range(0, 3000 * KB, 16 * KB), 16 * KB))
    bios = _read_bios(dev, f)
    assert max(n for _, n in bios) == ra_kb // 4
    assert sum(n for _, n in bios) == 750 and bios[-1][0] + bios[-1][1] == 750
