"""Each fio I/O's size (models/workload/fio/bs.py) as fio reads ``bs``, ``bsrange`` and
``bssplit`` (options.c) and draws a size (io_u.c ``get_next_buflen``)."""
from collections import Counter

import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, WRITE
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.bs import DirSizes, SizeDraw, block_sizes
from models.workload.fio.offsets import Offsets
from tests.models.fakes import FixedDevice

KB = 1024


@pytest.mark.parametrize("bs, bsrange, bssplit, reads, writes", [
    ("4k", "", "", DirSizes(4 * KB, 4 * KB), DirSizes(4 * KB, 4 * KB)),
    ("4k,64k", "", "", DirSizes(4 * KB, 4 * KB), DirSizes(64 * KB, 64 * KB)),
    (",8k", "", "", DirSizes(4 * KB, 4 * KB), DirSizes(8 * KB, 8 * KB)),   # fio's default
    ("4k", "1k-16k", "", DirSizes(KB, 16 * KB), DirSizes(KB, 16 * KB)),
    ("4k", "1k-16k,", "", DirSizes(KB, 16 * KB), DirSizes(4 * KB, 4 * KB)),
    # ordered by percentage, as fio's qsort(bs_cmp) leaves them
    ("4k", "", "4k/10:64k/50:32k/40", DirSizes(4 * KB, 64 * KB, (
        (4 * KB, 10), (32 * KB, 40), (64 * KB, 50))), None),
    # sizes without a percentage share what is left, in integer division
    ("4k", "", "4k:8k:16k", DirSizes(4 * KB, 16 * KB, (
        (4 * KB, 33), (8 * KB, 33), (16 * KB, 33))), None),
    ("4k", "", "4k/50:8k:16k", DirSizes(4 * KB, 16 * KB, (
        (8 * KB, 25), (16 * KB, 25), (4 * KB, 50))), None),
    ("4k", "", "8k", DirSizes(8 * KB, 8 * KB, ((8 * KB, 100),)), None),
    # a size left no share is never drawn: dropped
    ("4k", "", "4k/100:64k", DirSizes(4 * KB, 4 * KB, ((4 * KB, 100),)), None),
    ("4k", "", "4k/50:8k/50,64k", DirSizes(4 * KB, 8 * KB, ((4 * KB, 50), (8 * KB, 50))),
     DirSizes(64 * KB, 64 * KB, ((64 * KB, 100),))),
])
def test_block_sizes_are_read_as_fio_reads_them(bs, bsrange, bssplit, reads, writes):
    r, w = block_sizes(bs, bsrange, bssplit)
    assert r == reads
    assert w == (writes if writes is not None else reads)


@pytest.mark.parametrize("kw, message", [
    ({"bssplit": "4k/60:64k/60"}, r"^bssplit: the percentages add up to 120, more than 100"),
    ({"bssplit": "4k/half"}, r"^bssplit: expected size/percent entries"),
    ({"bsrange": "64k-4k"}, r"^bsrange: min above max in '64k-4k'$"),
    ({"bsrange": "4k"}, r"^bsrange: expected min-max such as 4k-64k, got '4k'$"),
    ({"bsrange": "4k-64k", "bssplit": "4k"}, r"^bssplit: set bsrange or bssplit, not both$"),
    ({"bs": "4k,1000"}, r"^bs: must be a positive multiple of 512 bytes, got '4k,1000'$"),
    ({"bs": "1,2,3,4"}, r"^bs: expected read\[,write\[,trim\]\]"),
    ({"rw": "read:8k", "bssplit": "4k/50:8k/50"}, r"^rw: a holed sequential pass"),
])
def test_bad_block_sizes_are_one_line_naming_the_option(kw, message):
    with pytest.raises(ValueError, match=message):
        FioConfig(**kw)


def _sizes(op, n, **kw):
    draw = SizeDraw(FioConfig(**kw).block_sizes, np.random.default_rng(7))
    return Counter(draw.draw(op, 2**40) for _ in range(n))


def test_bsrange_draws_min_plus_a_share_of_max_aligned_to_min():
    """fio: minbs + maxbs x r, aligned down to minbs, capped at maxbs - 4k-16k gives
    4, 8, 12 and 16 KiB a quarter each (not the uniform 4..16 it reads like)."""
    got = _sizes(READ, 40_000, bsrange="4k-16k")
    assert set(got) == {4 * KB, 8 * KB, 12 * KB, 16 * KB}
    for n in got.values():
        assert n / 40_000 == pytest.approx(0.25, abs=0.01)
    # 4k-10k: 4 + [0, 10) aligned down: 4 (4/10), 8 (4/10), 12 (2/10) capped at max: 10
    got = _sizes(READ, 40_000, bsrange="4k-10k")
    assert set(got) == {4 * KB, 8 * KB, 10 * KB}
    for size, share in ((4 * KB, 0.4), (8 * KB, 0.4), (10 * KB, 0.2)):
        assert got[size] / 40_000 == pytest.approx(share, abs=0.01)


def test_bssplit_draws_each_size_with_its_share_and_per_direction():
    got = _sizes(READ, 50_000, bssplit="4k/10:64k/50:32k/40")
    for size, share in ((4 * KB, 0.10), (32 * KB, 0.40), (64 * KB, 0.50)):
        assert got[size] / 50_000 == pytest.approx(share, abs=0.01)
    # integer division leaves 1 %: it falls to the last entry of the list
    got = _sizes(WRITE, 50_000, bssplit="4k/50:8k/50,4k:8k:16k")
    assert got[16 * KB] / 50_000 == pytest.approx(0.34, abs=0.01)
    assert _sizes(WRITE, 100, bs="4k,64k") == Counter({64 * KB: 100})


def test_a_size_that_would_pass_the_regions_end_is_drawn_again():
    """Random 4 KiB-grid offsets in a 64 KiB region with 4k/50:64k/50: every I/O ends
    inside the region, so a 64 KiB one starts only at 0 and the 4 KiB share grows."""
    o = Offsets(FioConfig(rw="randread", bssplit="4k/50:64k/50"), 64 * KB,
                np.random.default_rng(3))
    ios = [o.next() for _ in range(4000)]
    assert all(off % (4 * KB) == 0 and off + n <= 64 * KB for _, off, n in ios)
    assert {off for _, off, n in ios if n == 64 * KB} == {0}
    assert sum(n == 4 * KB for _, _, n in ios) / len(ios) > 0.9


def test_sizes_draw_from_a_stream_of_their_own():
    """fio's bsrange_state: a job whose sizes vary draws the same offsets and
    directions as the job with its smallest size only."""
    def ios(**kw):
        o = Offsets(FioConfig(rw="randrw", **kw), 2**30, np.random.default_rng(5))
        return [o.next() for _ in range(500)]

    plain, varied = ios(bs="4k"), ios(bssplit="4k/50:16k/50")
    assert [io[:2] for io in plain] == [io[:2] for io in varied]
    assert {io[2] for io in varied} == {4 * KB, 16 * KB}


def test_per_direction_bs_puts_each_direction_on_its_own_grid():
    """bs=4k,64k with randrw: 4 KiB reads on the 4 KiB grid, 64 KiB writes on the 64 KiB
    grid (fio's ba defaults to the direction's min_bs)."""
    o = Offsets(FioConfig(rw="randrw", bs="4k,64k"), 2**30, np.random.default_rng(2))
    ios = [o.next() for _ in range(2000)]
    reads = [(off, n) for op, off, n in ios if op == READ]
    writes = [(off, n) for op, off, n in ios if op == WRITE]
    assert {n for _, n in reads} == {4 * KB} and {n for _, n in writes} == {64 * KB}
    assert all(off % (64 * KB) == 0 and off + n <= 2**30 for off, n in writes)
    assert sum(off % (64 * KB) != 0 for off, _ in reads) > len(reads) * 0.9


def _served(cfg, seed=1):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10_000, queue_depth=4)
    job = FioJob(sim, cfg, BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                 np.random.default_rng(seed))
    job.start()
    sim.run()
    return dev.served, job


def test_a_sequential_job_of_varied_sizes_streams_and_stops_after_size_bytes():
    """A stream goes on where its last I/O ended whatever its size; a job that is not
    time based stops after loops x size bytes (fio's io_size), its last I/O drawn to
    fit."""
    served, _ = _served(FioConfig(rw="read", bsrange="4k-64k", size="1m", loops=2,
                                  time_based=False, iodepth=1, runtime_s=10))
    offs = [(off, n) for _, _, off, n in served]
    assert sum(n for _, n in offs) == 2 * 2**20
    assert len({n for _, n in offs}) > 4
    pos = 0
    for off, n in offs:
        pos = 0 if pos == 2**20 else pos
        assert off == pos
        pos += n


def test_a_random_job_of_varied_sizes_stops_once_it_issued_size_bytes():
    served, _ = _served(FioConfig(rw="randwrite", bssplit="4k/50:64k/50", size="16m",
                                  time_based=False, iodepth=4, runtime_s=10))
    total = sum(n for _, _, _, n in served)
    assert total >= 16 * 2**20 > total - served[-1][3]     # the I/O that crossed it ends it


def test_rate_counts_bytes_when_sizes_vary_and_rate_iops_of_a_bssplit_counts_ios():
    """fio's usec_for_io: rate=1m with 4k/50:64k/50 keeps 1 MB a second (bytes); with
    bsrange, rate_iops is bytes at the smallest size (__setup_rate); with bssplit,
    rate_iops counts I/Os whatever their size."""
    _, job = _served(FioConfig(rw="randread", bssplit="4k/50:64k/50", rate="1m",
                               iodepth=8, runtime_s=2.0))
    assert job.results()["read_MB_s"] == pytest.approx(1.0, rel=0.03)
    _, job = _served(FioConfig(rw="randread", bsrange="4k-16k", rate_iops=256,
                               iodepth=8, runtime_s=2.0))
    assert job.results()["read_MB_s"] == pytest.approx(256 * 4 / KB, rel=0.03)
    _, job = _served(FioConfig(rw="randread", bssplit="4k/50:64k/50", rate_iops=256,
                               iodepth=8, runtime_s=2.0))
    res = job.results()
    assert res["read_iops"] == pytest.approx(256, rel=0.02)
    assert res["read_MB_s"] == pytest.approx(256 * 34 / KB, rel=0.1)   # 34 KB on average
