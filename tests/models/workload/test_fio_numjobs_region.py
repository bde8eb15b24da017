"""fio's ``numjobs`` clones on one block device share the job's region - ``[offset,
offset + size)`` - unless ``offset_increment`` moves clone k's to ``offset`` + k x
``offset_increment`` (fio's ``get_start_offset``: ``start_offset + subjob_number *
increment``, a percentage increment of the device aligned down to the smallest block
size). Checked on the bios each clone sends (``IORequest.issuer`` is the clone)."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.fakes import FixedDevice

GIB = 2**30


def _spans(capacity=16 * GIB, **fio):
    """(lowest offset, highest end) of each clone's bios."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=capacity)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop"))
    seen = {}
    submit = q.submit

    def spy(bios, plug=False):
        for b in (bios if isinstance(bios, list) else [bios]):
            lo, hi = seen.get(b.issuer, (1 << 62, 0))
            seen[b.issuer] = (min(lo, b.offset_bytes), max(hi, b.offset_bytes + b.size_bytes))
        return submit(bios, plug)

    q.submit = spy
    cfg = FioConfig(**{"rw": "randread", "iodepth": 4, "numjobs": 3, "size": "1g",
                       "number_ios": 2000, "time_based": False, **fio})
    FioJob(sim, cfg, q, np.random.default_rng(1)).start()
    sim.run()
    return [seen[j] for j in sorted(seen)]


def test_clones_share_the_region_without_offset_increment():
    spans = _spans(offset="2g")
    assert len(spans) == 3
    for lo, hi in spans:
        assert 2 * GIB <= lo < 2 * GIB + 0.01 * GIB and 3 * GIB - 0.01 * GIB < hi <= 3 * GIB


def test_offset_increment_moves_clone_k_by_k_increments():
    spans = _spans(offset="2g", offset_increment="5g")
    for k, (lo, hi) in enumerate(spans):
        start = 2 * GIB + k * 5 * GIB
        assert start <= lo < start + 0.01 * GIB and start + GIB - 0.01 * GIB < hi <= start + GIB


def test_a_percentage_increment_is_of_the_device_aligned_to_the_block_size():
    # 10 % of 16 GiB + 4 KiB is not a multiple of 64 KiB: aligned down
    cap = 16 * GIB + 4096
    cfg = FioConfig(bs="64k", offset_increment="10%")
    assert cfg.increment(cap) == (cap // 10) // 65536 * 65536
    spans = _spans(capacity=cap, bs="64k", offset_increment="10%")
    assert spans[2][0] >= 2 * cfg.increment(cap) and spans[1][1] <= cfg.increment(cap) + GIB


def test_the_last_clone_must_fit_on_the_device():
    with pytest.raises(ValueError, match=r"^size: offset \+ \(numjobs - 1\) x offset_increment"
                                         r" \+ size \(18253611008 bytes\) exceeds device"):
        _spans(offset_increment="8g")                  # 2 x 8 GiB + 1 GiB > 16 GiB
    assert len(_spans(offset_increment="7g")) == 3     # 2 x 7 GiB + 1 GiB fits


@pytest.mark.parametrize("bad", ["-1", "1000", "100%", "x"])
def test_a_bad_offset_increment_is_an_error_naming_it(bad):
    with pytest.raises(ValueError, match=r"^offset_increment: "):
        FioConfig(offset_increment=bad)


def test_buffered_clones_have_their_own_files_with_the_increment_in_each():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=16 * GIB)
    fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig(
        scheduler="noop")), PageCache(sim, PageCacheConfig(memory_bytes="16m")))
    job = FioBufferedJob(sim, FioConfig(direct=False, numjobs=3, size="1m", offset="1m",
                                        offset_increment="2m"), fs, np.random.default_rng(0))
    assert [f.size_bytes for f in job.files] == [2 * 2**20, 4 * 2**20, 6 * 2**20]


def test_buffered_files_too_large_for_the_device_name_the_increment_in_the_error():
    """With ``offset_increment`` the clones' files differ in size: the error says what the
    total is made of, not ``numjobs x (offset + size)``."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=16 * GIB)
    fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig(
        scheduler="noop")), PageCache(sim, PageCacheConfig(memory_bytes="16m")))
    with pytest.raises(ValueError, match=r"^size: the clones' files \(offset \+ k x "
                       r"offset_increment \+ size each\) \(28991029248 bytes\) exceeds"):  # 1+9+17 GiB
        FioBufferedJob(sim, FioConfig(direct=False, numjobs=3, size="1g",
                                      offset_increment="8g"), fs, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^size: numjobs x \(offset \+ size\) "):
        FioBufferedJob(sim, FioConfig(direct=False, numjobs=3, size="6g"), fs,
                       np.random.default_rng(0))
