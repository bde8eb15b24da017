"""Where fio's next I/O goes (models/workload/fio/offsets.py), as fio's io_u.c
``get_next_offset`` puts it: a stream per direction, the ``rw`` postfix, rw_sequencer."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, WRITE
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.offsets import Offsets, ios_per_pass, percentage_random
from tests.models.fakes import FixedDevice

KB = 1024


def _seq(cfg, n, size=64 * KB, seed=1):
    o = Offsets(cfg, size, np.random.default_rng(seed))
    return [o.next()[:2] for _ in range(n)]      # (op, offset): the size is bs


def test_readwrite_reads_and_writes_each_as_a_stream_of_its_own():
    """f->last_pos[ddir]: each direction starts at the region's start and goes on
    where its own last I/O ended, whatever the other did meanwhile."""
    ios = _seq(FioConfig(rw="readwrite", bs="4k"), 40)
    for op in (READ, WRITE):
        offs = [off for o, off in ios if o == op]
        assert offs == [(i * 4 * KB) % (64 * KB) for i in range(len(offs))]
    assert {o for o, _ in ios} == {READ, WRITE}


def test_a_random_postfix_takes_a_new_offset_every_n_ios_and_goes_on_between():
    """rw=randread:4: fio's counter starts at 4, so the first three I/Os go on from the
    region's start; then every 4th I/O is random and the three after it follow it."""
    offs = [off for _, off in _seq(FioConfig(rw="randread:4", bs="4k"), 15, size=2**30)]
    assert offs[:3] == [0, 4 * KB, 8 * KB]
    for k in (3, 7, 11):
        start = offs[k]
        assert offs[k:k + 4] == [start + i * 4 * KB for i in range(4)]
        assert start % (4 * KB) == 0 and start != offs[k - 1] + 4 * KB


def test_rw_sequencer_identical_repeats_the_random_offset():
    offs = [off for _, off in _seq(FioConfig(rw="randwrite:4", rw_sequencer="identical",
                                             bs="4k"), 11, size=2**30)]
    assert offs[:3] == [0, 0, 0]
    assert offs[3:7] == [offs[3]] * 4 and offs[7:11] == [offs[7]] * 4 and offs[3] != offs[7]


def test_a_random_postfix_of_1_is_the_plain_random_job():
    assert (_seq(FioConfig(rw="randrw:1", bs="4k"), 50, size=2**30)
            == _seq(FioConfig(rw="randrw", bs="4k"), 50, size=2**30))


def test_a_sequential_postfix_skips_that_many_bytes_after_every_io():
    """rw=write:4k with bs=4k: every other 4 KB block of the region, then again."""
    cfg = FioConfig(rw="write:4k", bs="4k")
    offs = [off for _, off in _seq(cfg, 10, size=32 * KB)]
    assert offs == [0, 8 * KB, 16 * KB, 24 * KB, 0, 8 * KB, 16 * KB, 24 * KB, 0, 8 * KB]
    assert ios_per_pass(cfg, 32 * KB) == 4 and ios_per_pass(FioConfig(rw="write"), 32 * KB) == 8


def test_a_job_that_is_not_time_based_does_one_holed_pass():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10_000, queue_depth=4)
    job = FioJob(sim, FioConfig(rw="read:12k", bs="4k", size="64k", time_based=False,
                                iodepth=2, runtime_s=10),
                 BlockQueue(sim, dev, BlockConfig(scheduler="noop")), np.random.default_rng(1))
    job.start()
    sim.run()
    assert [off for _, _, off, _ in dev.served] == [0, 16 * KB, 32 * KB, 48 * KB]


@pytest.mark.parametrize("rw, message", [
    ("randread:0", r"^rw: the postfix of a random mode is the number of I/Os per new random "
                   r"offset \(an integer >= 1\), got 'randread:0'$"),
    ("randread:4k", r"^rw: the postfix of a random mode"),
    ("read:-4k", r"^rw: a negative postfix \(backwards sequential I/O\) is not modelled, "
                 r"got 'read:-4k'$"),
    ("write:soon", r"^rw: the postfix of a sequential mode is the bytes skipped after every "
                   r"I/O \(such as 4k\), got 'write:soon'$"),
])
def test_a_bad_postfix_is_one_line_naming_rw(rw, message):
    with pytest.raises(ValueError, match=message):
        FioConfig(rw=rw)


def test_rw_sequencer_is_sequential_or_identical():
    with pytest.raises(ValueError, match=r"^rw_sequencer: must be one of sequential, "
                                         r"identical, got 'random'$"):
        FioConfig(rw_sequencer="random")


def test_loops_repeats_a_job_that_is_not_time_based():
    """loops=3: three passes over a 64 KB region of 16 KB blocks; number_ios bounds it
    first when smaller; a time-based job ignores loops (its runtime ends it)."""
    def served(**kw):
        sim = Simulator()
        dev = FixedDevice(sim, service_ns=10_000, queue_depth=4)
        job = FioJob(sim, FioConfig(rw="read", bs="16k", size="64k", iodepth=1,
                                    **{"runtime_s": 10, **kw}),
                     BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                     np.random.default_rng(1))
        job.start()
        sim.run()
        return [off // KB for _, _, off, _ in dev.served]

    assert served(time_based=False, loops=3) == [0, 16, 32, 48] * 3
    assert served(time_based=False, loops=3, number_ios=5) == [0, 16, 32, 48, 0]
    assert len(served(time_based=True, loops=3, runtime_s=0.001)) == 100
    with pytest.raises(ValueError, match="^loops: must be >= 1"):
        FioConfig(loops=0)


def test_io_size_sets_the_bytes_of_a_pass_within_the_region():
    """fio's io_size: size=64k io_size=32k stops after 32 KB, io_size=128k goes over the
    region twice; with loops each pass starts at the region's start (clear_io_state);
    a percentage is of the region; with sizes that vary it is counted in bytes."""
    def served(**kw):
        sim = Simulator()
        dev = FixedDevice(sim, service_ns=10_000, queue_depth=4)
        job = FioJob(sim, FioConfig(**{"rw": "read", "bs": "16k", "size": "64k",
                                       "iodepth": 1, "time_based": False, "runtime_s": 10,
                                       **kw}),
                     BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                     np.random.default_rng(1))
        job.start()
        sim.run()
        return [(off // KB, n // KB) for _, _, off, n in dev.served]

    assert served(io_size="32k") == [(0, 16), (16, 16)]
    assert served(io_size="128k") == [(o, 16) for o in (0, 16, 32, 48)] * 2
    assert served(io_size="32k", loops=2) == [(0, 16), (16, 16)] * 2
    assert served(io_size="150%") == [(o, 16) for o in (0, 16, 32, 48, 0, 16)]
    varied = served(io_size="96k", loops=2, bs="4k", bsrange="4k-16k", size="128k")
    done = np.cumsum([n for _, n in varied])
    assert done[-1] >= 2 * 96 > done[-2]            # as fio, the I/O that crosses it ends it
    first_end = int(np.argmax(done >= 96))          # ... and ends the first pass
    assert varied[first_end + 1][0] == 0 and [o for o, _ in varied[1:first_end + 1]] == \
        list(done[:first_end])                      # a stream, then the second pass starts over
    with pytest.raises(ValueError, match=r"^io_size: must be at least the smallest block "
                                         r"size \(4096 bytes\), got '1k'$"):
        FioConfig(io_size="1k")


def test_percentage_random_mixes_random_and_sequential_ios():
    """should_do_random: 0 % is a sequential stream from the region's start, 50 % goes
    on from the last I/O about half the time, per direction (randrw with 100,0: random
    reads, sequential writes); 100 is the plain random job."""
    big = 2**30
    offs = [off for _, off in _seq(FioConfig(rw="randread", percentage_random="0"), 20, size=big)]
    assert offs == [i * 4 * KB for i in range(20)]
    offs = [off for _, off in _seq(FioConfig(rw="randread", percentage_random="50"), 4000,
                                   size=big)]
    follows = sum(b == a + 4 * KB for a, b in zip(offs, offs[1:])) / (len(offs) - 1)
    assert 0.45 < follows < 0.55
    ios = _seq(FioConfig(rw="randrw", percentage_random="100,0"), 400, size=big)
    writes = [off for op, off in ios if op == WRITE]
    assert writes == [i * 4 * KB for i in range(len(writes))]
    reads = [off for op, off in ios if op == READ]
    assert sum(b == a + 4 * KB for a, b in zip(reads, reads[1:])) < 3
    assert (_seq(FioConfig(rw="randrw", percentage_random="100"), 50, size=big)
            == _seq(FioConfig(rw="randrw"), 50, size=big))


@pytest.mark.parametrize("text, expected", [("50", (50, 50)), ("50,20", (50, 20)),
                                            (",20", (100, 20)), ("0,100,7", (0, 100))])
def test_percentage_random_is_read_as_fio_reads_it(text, expected):
    assert percentage_random(text) == expected


@pytest.mark.parametrize("text", ["150", "half", "1,2,3,4", "-5"])
def test_a_bad_percentage_random_is_one_line_naming_it(text):
    with pytest.raises(ValueError, match=r"^percentage_random: expected r\[,w\[,t\]\] "
                                         r"percentages in 0\.\.100, got "):
        FioConfig(percentage_random=text)


def test_blockalign_puts_random_offsets_on_its_grid_with_room_for_the_block():
    """ba=512 with bs=4k (fio's blockalign): 4 KiB I/Os at any sector whose block fits
    in the region - fio's last_block, (64 KiB - (4 KiB - 512)) / 512 = 121 offsets -,
    each drawn."""
    offs = {off for _, off in _seq(FioConfig(rw="randread", bs="4k", ba="512"), 4000)}
    assert offs == set(range(0, 64 * KB - 4 * KB + 1, 512))


def test_blockalign_left_out_is_the_block_size_and_sequential_modes_ignore_it():
    assert (_seq(FioConfig(rw="randread"), 200, size=2**30)
            == _seq(FioConfig(rw="randread", ba="4k"), 200, size=2**30))
    assert ([off for _, off in _seq(FioConfig(rw="read", ba="512"), 20)]
            == [i * 4 * KB for i in range(16)] + [i * 4 * KB for i in range(4)])


def test_blockalign_per_direction_as_bs():
    """ba=4k,512 on randrw: reads on the 4 KiB grid, writes at any sector."""
    ios = _seq(FioConfig(rw="randrw", bs="4k", ba="4k,512"), 2000, size=2**20)
    reads = [off for op, off in ios if op == READ]
    writes = [off for op, off in ios if op == WRITE]
    assert all(off % (4 * KB) == 0 for off in reads)
    assert all(off % 512 == 0 for off in writes)
    assert sum(off % (4 * KB) != 0 for off in writes) > 0.8 * len(writes)
    assert max(reads + writes) <= 2**20 - 4 * KB


@pytest.mark.parametrize("ba", ["100", "1,2,3,4", "4q"])
def test_a_bad_blockalign_names_ba(ba):
    with pytest.raises(ValueError, match=r"^ba: "):
        FioConfig(ba=ba)
