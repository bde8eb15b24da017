"""Block layer: merging up to max_sectors_kb, plugging, nr_requests, schedulers."""
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Simulator
from tests.models.fakes import FixedDevice, PerByteDevice

KB = 1024


def _bios(n, size=16 * KB, start=0, op=READ, done=None):
    return [IORequest(op, start + i * size, size, done) for i in range(n)]


def test_batch_of_64_adjacent_reads_merges_into_max_sectors_requests():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    done = []
    assert blk.submit(_bios(64, done=done.append), plug=True) is None
    sim.run()
    assert len(done) == 64
    assert [s[3] for s in dev.served] == [256 * KB] * 4
    st = blk.iostat((0, (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), 0, 0))
    assert blk.counters.ios[READ] == 4 and blk.counters.merges[READ] == 60
    assert st["avgrq_sz"] == 512.0


def test_one_by_one_submission_mostly_does_not_merge():
    """One bio per io_submit, the next when the previous completes (a reader that waits):
    the queue never holds two requests, so nothing merges."""
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    bios = _bios(64)

    def next_one(_done=None):
        if bios:
            assert blk.submit(bios.pop(0)) is None

    for bio in bios:
        bio.on_done = next_one
    next_one()
    sim.run()
    assert len(dev.served) == 64
    assert blk.counters.merges[READ] == 0


def test_one_by_one_submission_merges_behind_a_full_device_queue():
    """64 single-bio submissions at once: 32 fill the device's tags, the rest merge."""
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    for bio in _bios(64):
        blk.submit(bio)
    sim.run()
    assert [s[3] for s in dev.served] == [16 * KB] * 32 + [256 * KB, 256 * KB]
    assert blk.counters.merges[READ] == 30


def test_queued_requests_merge_when_the_device_is_busy():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=512))
    for bio in _bios(8):
        blk.submit(bio)
    sim.run()
    # the first goes to the device, the other seven merge behind it into one request
    assert [s[3] for s in dev.served] == [16 * KB, 7 * 16 * KB]
    assert blk.counters.merges[READ] == 6


def test_large_bio_is_split_and_completes_once():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=4)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    done = []
    blk.submit(IORequest(READ, 0, 1024 * KB, done.append))
    sim.run()
    assert len(done) == 1 and done[0].size_bytes == 1024 * KB
    assert blk.counters.ios[READ] == 4 and blk.counters.merges[READ] == 0


def test_nr_requests_blocks_the_next_submitter_until_a_request_completes():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=4))
    gates = []
    for i in range(5):  # far apart: no merging
        gates.append(blk.submit(IORequest(WRITE, i * 10 * 2**20, 4096)))
    assert gates[:4] == [None] * 4
    fifth = gates[4]
    assert fifth is not None and not fifth.triggered
    woke = []
    fifth.add_callback(lambda _v: woke.append(sim.now_ns))
    sim.run()
    assert woke == [1000]  # the first completion frees a request
    assert blk.counters.ios[WRITE] == 5


def test_blocked_submitter_can_still_merge_without_a_new_request():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=2))
    blk.submit(IORequest(WRITE, 0, 4096))
    blk.submit(IORequest(WRITE, 2**20, 4096))
    assert blk.submit(IORequest(WRITE, 2**20 + 4096, 4096)) is None  # back merge
    assert blk.submit(IORequest(WRITE, 5 * 2**20, 4096)) is not None


def test_bio_merges_while_other_submitters_sleep_for_a_request():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=2))
    blk.submit(IORequest(WRITE, 0, 4096))
    blk.submit(IORequest(WRITE, 2**20, 4096))
    sleeper = blk.submit(IORequest(WRITE, 9 * 2**20, 4096))
    assert sleeper is not None and len(blk.waiting) == 1
    # mergeable: joins the queued request at once, without waiting behind the sleeper
    assert blk.submit(IORequest(WRITE, 2**20 + 4096, 4096)) is None
    # not mergeable: waits behind the sleeper (FIFO)
    assert blk.submit(IORequest(WRITE, 20 * 2**20, 4096)) is not None
    assert len(blk.waiting) == 2


def test_deadline_dispatches_in_sector_order_batches():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline", fifo_batch=16))
    offsets = [50, 10, 40, 20, 30]
    for off in offsets:
        blk.submit(IORequest(WRITE, off * 2**20, 4096))
    sim.run()
    # the first went straight to the idle device; the rest in ascending sector order
    assert [s[2] // 2**20 for s in dev.served] == [50, 10, 20, 30, 40]


@pytest.mark.parametrize("fifo_batch, expected", [
    (2, [0, 1, 900, 2, 3, 4, 5]),     # the batch ends, the expired write goes next
    (100, [0, 1, 2, 3, 4, 5, 900]),   # a long batch keeps sweeping in sector order
])
def test_deadline_expiry_is_checked_when_a_batch_ends(fifo_batch, expected):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10_000_000, queue_depth=1)  # 10 ms per request
    cfg = BlockConfig(scheduler="deadline", write_expire_ms=15, fifo_batch=fifo_batch)
    blk = BlockQueue(sim, dev, cfg)
    blk.submit(IORequest(WRITE, 0, 4096))            # in service 0-10 ms
    blk.submit(IORequest(WRITE, 900 * 2**20, 4096))  # expires at 15 ms
    for i in range(1, 6):
        sim.at(9_000_000, blk.submit, IORequest(WRITE, i * 2**20, 4096))
    sim.run()
    assert [s[2] // 2**20 for s in dev.served] == expected


def test_cfq_gives_each_thread_a_slice():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1_000_000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="cfq", slice_sync_ms=3))
    for i in range(6):
        for issuer in (1, 2):
            bio = IORequest(READ, (issuer * 1000 + i * 10) * 2**20, 4096, issuer=issuer)
            blk.submit(bio)
    sim.run()
    issuers = [s[2] // 2**20 // 1000 for s in dev.served]
    # 1 ms per request, 3 ms slices: the threads alternate three requests at a time
    assert issuers == [1, 1, 1, 2, 2, 2] * 2


def test_flush_bypasses_the_scheduler_queue():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline"))
    for i in range(3):
        blk.submit(IORequest(WRITE, i * 2**20, 4096))
    blk.submit(IORequest(FLUSH, 0, 0))
    sim.run()
    assert [s[1] for s in dev.served] == [WRITE, FLUSH, WRITE, WRITE]
    assert blk.counters.ios[FLUSH] == 1


class WriteThroughDevice(FixedDevice):
    """A drive with its write cache off (``queue/write_cache`` "write through")."""

    write_cache_mode = "write through"


@pytest.mark.parametrize("scheduler", ["deadline", "none"])
def test_a_flush_for_a_drive_without_a_write_cache_completes_at_once_unsent(scheduler):
    from models.block import MQQueue
    done = []
    for kind in (WriteThroughDevice, FixedDevice):
        sim = Simulator()
        dev = kind(sim, service_ns=1000)
        cfg = BlockConfig(scheduler=scheduler)
        blk = MQQueue(sim, dev, cfg) if scheduler == "none" else BlockQueue(sim, dev, cfg)
        blk.submit(IORequest(WRITE, 0, 4096))
        for bios in (IORequest(FLUSH, 0, 0), [IORequest(FLUSH, 0, 0)]):   # one, a list
            flush = bios if type(bios) is IORequest else bios[0]
            flush.on_done = lambda bio: done.append((dev.name, bio.done_ns, sim.now_ns))
            sim.at(0, blk.submit, bios)
        sim.run()
        if dev.write_cache_mode == "write through":
            assert [s[1] for s in dev.served] == [WRITE]
            assert blk.counters.ios[FLUSH] == 0 and done == [(dev.name, 0, 0)] * 2
        else:
            assert [s[1] for s in dev.served] == [WRITE, FLUSH, FLUSH]
            assert blk.counters.ios[FLUSH] == 2
        done.clear()


def test_a_drive_reports_its_write_cache_as_sysfs_does():
    from models.device.hdd import HDD, default_15k_sas
    sim = Simulator()
    assert HDD(sim, "a", default_15k_sas()).write_cache_mode == "write through"
    assert HDD(sim, "b", default_15k_sas(write_cache=True)).write_cache_mode == "write back"


@pytest.mark.parametrize("scheduler", ["noop", "deadline", "cfq"])
def test_iostat_identity_and_littles_law(scheduler):
    """(r/s + w/s) x svctm = %util x 10; avgqu-sz = arrival rate x await (Little)."""
    import numpy as np
    sim = Simulator()
    dev = PerByteDevice(sim, overhead_ns=200_000, mb_per_s=100, queue_depth=4)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=10_000))
    rng = np.random.default_rng(7)
    t = 0
    for _ in range(4000):
        t += int(rng.exponential(400_000))
        op = READ if rng.random() < 0.7 else WRITE
        off = int(rng.integers(0, 2**20)) * 4096
        sim.at(t, lambda bio: blk.submit(bio), IORequest(op, off, 4096 * int(rng.integers(1, 5))))
    before = blk.snapshot()
    sim.run()
    st = blk.iostat(before)
    assert st["util_pct"] > 30
    assert (st["r_s"] + st["w_s"]) * st["svctm_ms"] == pytest.approx(st["util_pct"] * 10, rel=1e-9)
    # everything submitted completed inside the window, so Little's law is exact
    assert st["avgqu_sz"] == pytest.approx((st["r_s"] + st["w_s"]) * st["await_ms"] / 1000, rel=1e-6)
