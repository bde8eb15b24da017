"""blk-mq (models/block/mq): hardware contexts and tags, none, mq-deadline, kyber, bfq."""
from types import SimpleNamespace

import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue, MQQueue, make_queue
from models.device.request import READ, WRITE, IORequest
from models.sim import Simulator
from tests.models.fakes import FixedDevice

MB = 2**20


class FakeNVMe(FixedDevice):
    """A FixedDevice that says it is an NVMe drive with ``nr_queues`` queue pairs."""

    kind = "nvme"

    def __init__(self, sim, nr_queues=4, queue_depth=1024, **kw):
        super().__init__(sim, queue_depth=nr_queues * queue_depth, **kw)
        self.cfg = SimpleNamespace(nr_queues=nr_queues, queue_depth=queue_depth)
        self.max_inflight = 0

    def submit(self, req):
        super().submit(req)
        self.max_inflight = max(self.max_inflight, self.inflight)


def test_make_queue_picks_the_queue_kind_by_scheduler():
    sim = Simulator()
    assert type(make_queue(sim, FixedDevice(sim), BlockConfig(scheduler="deadline"))) is BlockQueue
    for s in ("none", "mq-deadline", "kyber", "bfq"):
        assert type(make_queue(sim, FixedDevice(sim), BlockConfig(scheduler=s))) is MQQueue


def test_none_dispatches_in_arrival_order():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = MQQueue(sim, dev, BlockConfig(scheduler="none"))
    for off in [50, 10, 40, 20, 30]:
        blk.submit(IORequest(WRITE, off * MB, 4096))
    sim.run()
    assert [s[2] // MB for s in dev.served] == [50, 10, 40, 20, 30]


def test_none_merges_back_and_front_while_the_device_is_busy():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = MQQueue(sim, dev, BlockConfig(scheduler="none"))
    blk.submit(IORequest(READ, 0, 4096))               # to the device
    blk.submit(IORequest(READ, MB + 4096, 4096))       # queued
    blk.submit(IORequest(READ, MB + 8192, 4096))       # back merge
    blk.submit(IORequest(READ, MB, 4096))              # front merge
    sim.run()
    assert [(s[2], s[3]) for s in dev.served] == [(0, 4096), (MB, 3 * 4096)]
    assert blk.counters.merges[READ] == 2


@pytest.mark.parametrize("fifo_batch, expected", [
    (2, [800, 0, 1, 900, 2, 3, 4, 5]),     # the batch ends, the expired read goes next
    (100, [800, 0, 1, 2, 3, 4, 5, 900]),   # a long batch keeps sweeping in sector order
])
def test_mq_deadline_expires_a_starved_read_as_the_legacy_deadline_does(fifo_batch, expected):
    """... as the legacy deadline of 2.6.28+ does (mq-deadline has its batching even
    where ``deadline_contiguous_batches`` asks for 2.6.18's)."""
    def trace(queue_cls, scheduler):
        sim = Simulator()
        dev = FixedDevice(sim, service_ns=10_000_000, queue_depth=1)   # 10 ms per request
        blk = queue_cls(sim, dev, BlockConfig(scheduler=scheduler, read_expire_ms=15,
                                              fifo_batch=fifo_batch,
                                              deadline_contiguous_batches=scheduler != "deadline"))
        blk.submit(IORequest(READ, 800 * MB, 4096))     # in service 0-10 ms
        blk.submit(IORequest(READ, 0, 4096))
        blk.submit(IORequest(READ, 900 * MB, 4096))     # expires at 15 ms
        for i in range(1, 6):
            blk.submit(IORequest(READ, i * MB, 4096))
        sim.run()
        return [s[2] // MB for s in dev.served]

    assert trace(MQQueue, "mq-deadline") == expected
    assert trace(BlockQueue, "deadline") == expected


def test_mq_deadline_serves_reads_before_writes_until_writes_are_starved():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = MQQueue(sim, dev, BlockConfig(scheduler="mq-deadline", fifo_batch=1, writes_starved=2))
    blk.submit(IORequest(WRITE, 500 * MB, 4096))     # straight to the idle device
    for i in range(4):
        blk.submit(IORequest(WRITE, (600 + i) * MB, 4096))
        blk.submit(IORequest(READ, (10 + i) * MB, 4096))
    sim.run()
    ops = "".join("rw"[s[1]] for s in dev.served)
    assert ops == "w" + "rrw" + "rrw" + "ww"


def test_tags_per_hctx_bound_the_device_queue_depth():
    """4 hardware queues x nr_requests 8: at most 32 commands reach a device that
    would take 1024; a thread's bios beyond its hctx's 8 tags sleep."""
    sim = Simulator()
    dev = FakeNVMe(sim, nr_queues=4, service_ns=100_000, queue_depth=256)
    blk = MQQueue(sim, dev, BlockConfig(scheduler="none", nr_requests=8), nr_cpus=4)
    assert blk.nr_hw_queues == 4
    gates = [blk.submit(IORequest(READ, (t * 1000 + i) * MB, 4096, issuer=t))
             for t in range(4) for i in range(10)]
    assert sum(g is not None for g in gates) == 4 * 2       # 2 of each thread's 10 wait
    assert blk.hctx_allocated == [8, 8, 8, 8]
    sim.run()
    assert dev.max_inflight == 32 and len(dev.served) == 40


def test_nr_requests_per_hctx_blocks_the_next_submitter_like_the_legacy_queue():
    def woke_at(queue_cls, scheduler):
        sim = Simulator()
        dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
        blk = queue_cls(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=4))
        # five threads on one CPU (nr_cpus 1: one hctx); on the legacy queue one thread
        # filling the list would go on as a batcher
        gates = [blk.submit(IORequest(WRITE, i * 10 * MB, 4096, issuer=i)) for i in range(5)]
        assert gates[:4] == [None] * 4 and not gates[4].triggered
        woke = []
        gates[4].add_callback(lambda _v: woke.append(sim.now_ns))
        sim.run()
        return woke

    assert woke_at(MQQueue, "mq-deadline") == woke_at(BlockQueue, "deadline") == [1000]


@pytest.mark.parametrize("queue_cls,scheduler", [
    (BlockQueue, "noop"), (BlockQueue, "deadline"), (MQQueue, "mq-deadline"), (MQQueue, "none")])
def test_a_request_absorbed_by_a_merge_wakes_a_sleeper_at_once(queue_cls, scheduler):
    """A back merge that makes a queued request touch the next one absorbs it, and the
    freed request (tag) wakes the sleeper of its list (hctx) then - freed_request /
    blk_mq_put_tag -, not at the next completion (1,000 ns)."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = queue_cls(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=4))
    for i, off in enumerate((0, MB, MB + 8192, 5 * MB)):   # 0 dispatched, 3 queued: full
        assert blk.submit(IORequest(WRITE, off, 4096, issuer=i)) is None
    sleeper = blk.submit(IORequest(WRITE, 9 * MB, 4096, issuer=7))
    woke = []
    sleeper.add_callback(lambda _v: woke.append((sim.now_ns, blk.allocated)))
    # bridges MB and MB + 8 KB: merges into the first, which absorbs the second
    assert blk.submit(IORequest(WRITE, MB + 4096, 4096, issuer=8)) is None
    assert blk.allocated == 3
    sim.run()
    assert woke == [(0, 4)]
    assert sorted((off, size) for _t, _op, off, size in dev.served) == [
        (0, 4096), (MB, 12288), (5 * MB, 4096), (9 * MB, 4096)]


def test_default_nr_requests_follows_the_kernel():
    sim = Simulator()
    nvme = FakeNVMe(sim, nr_queues=4, queue_depth=1024)
    assert MQQueue(sim, nvme, BlockConfig(scheduler="none", nr_requests=None),
                   nr_cpus=16).nr_requests == 1023
    disk = FixedDevice(sim, queue_depth=32)
    assert MQQueue(sim, disk, BlockConfig(scheduler="mq-deadline", nr_requests=None)).nr_requests == 64
    assert MQQueue(sim, nvme, BlockConfig(scheduler="kyber", nr_requests=None),
                   nr_cpus=16).nr_requests == 256


class _Fifo50us(FixedDevice):
    """One FIFO server, 50 us per command, 256 tags: requests wait inside the device."""

    def __init__(self, sim):
        super().__init__(sim, service_ns=50_000, queue_depth=256)


def _read_latency_under_write_flood(scheduler):
    """8 writers keep 16 async writes each outstanding; 8 readers read at QD1 each."""
    sim = Simulator()
    dev = _Fifo50us(sim)
    blk = MQQueue(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=1024))
    lat = []
    end_ns = 1_600_000_000
    rng = np.random.default_rng(1)

    def write(issuer):
        if sim.now_ns < end_ns:
            bio = IORequest(WRITE, int(rng.integers(0, 2**20)) * 4096 * 64, 4096, sync=False,
                            issuer=issuer)
            bio.on_done = lambda _b: write(issuer)
            blk.submit(bio)

    def read(issuer, prev=None):
        if prev is not None and prev.submit_ns > 1_250_000_000:    # after the last resize
            lat.append(prev.done_ns - prev.submit_ns)
        if sim.now_ns < end_ns:
            bio = IORequest(READ, int(rng.integers(0, 2**20)) * 4096 * 64 + 4096, 4096,
                            issuer=issuer)
            bio.on_done = lambda b: read(issuer, b)
            blk.submit(bio)

    for w in range(8):
        for _ in range(16):
            write(w)
    for r in range(8):
        read(100 + r)
    sim.run()
    return float(np.percentile(lat, 99)), blk


def test_kyber_throttles_writes_while_reads_miss_their_target():
    """128 writes at 50 us each queue ~6.4 ms ahead of every read with ``none``. The
    reads miss their 2 ms target, the writes meet their 10 ms one, so kyber shrinks
    the write domain's tokens - and only those - by its p99 bucket each time it has
    500 samples: 128 -> 96 -> 72 -> 54. There it stops, as the kernel's rule does:
    the writes now wait for tokens, their p99 reaches the last good bucket (7.5-10 ms,
    factor 4/4), and the reads' p99 has halved (fewer writes ahead of them)."""
    p99_none, _ = _read_latency_under_write_flood("none")
    p99_kyber, blk = _read_latency_under_write_flood("kyber")
    kyber = blk.sched
    assert [(d, depth) for _, d, depth in kyber.resizes] == [
        ("WRITE", 96), ("WRITE", 72), ("WRITE", 54)]
    assert kyber.throttled > 0 and kyber.depth[0] == 256
    assert p99_none > 6e6
    assert p99_kyber < 0.5 * p99_none


def _bfq_trace(size_of):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1_000_000, queue_depth=1)
    # budget 1 MB (2048 sectors) per turn
    blk = MQQueue(sim, dev, BlockConfig(scheduler="bfq", max_budget_sectors=2048))
    for i in range(24):
        for issuer in (1, 2):
            if i * size_of[issuer] < 3 * 2**20:          # 3 MB per process
                blk.submit(IORequest(READ, (issuer * 1000 + i) * MB, size_of[issuer],
                                     issuer=issuer))
    sim.run()
    return [(s[2] // MB // 1000, s[3] // 1024) for s in dev.served]


def test_bfq_serves_each_process_its_budget_in_turn():
    trace = _bfq_trace({1: 512 * 1024, 2: 512 * 1024})
    assert [who for who, _ in trace] == [1, 1, 2, 2] * 3


def test_bfq_shares_bytes_not_requests():
    """A process issuing 128 KB requests gets as many bytes per turn as one issuing
    512 KB requests: eight requests to the other's two."""
    trace = _bfq_trace({1: 512 * 1024, 2: 128 * 1024})
    assert [who for who, _ in trace] == ([1] * 2 + [2] * 8) * 3


@pytest.mark.parametrize("nr_cpus, expected_us", [
    (4, [110, 110, 110, 110]),        # each thread on its own core: no queueing
    (1, [110, 120, 130, 140]),        # one core completes one I/O after the other
])
def test_completion_cost_is_paid_on_the_submitting_threads_core(nr_cpus, expected_us):
    sim = Simulator()
    dev = FakeNVMe(sim, nr_queues=4, service_ns=100_000, queue_depth=16)
    dev.n_servers = dev.free_servers = 4          # the four commands in parallel
    blk = MQQueue(sim, dev, BlockConfig(scheduler="none"), nr_cpus=nr_cpus,
                  io_submit_ns=4_000, io_complete_ns=6_000)
    done = []
    for t in range(4):
        blk.submit(IORequest(READ, t * MB, 4096, lambda b: done.append(b.done_ns // 1000),
                             issuer=t))
    sim.run()
    assert sorted(done) == expected_us
    assert sum(blk.io_core_busy_ns) == 4 * 10_000


def _nvme_randread_iops(threads):
    """``threads`` closed-loop readers at QD1 on a 4-queue drive behind ``none``."""
    from models.device.ssd.nvme import NVMe
    from models.device.ssd.presets import samsung_970_evo_plus_1tb

    sim = Simulator()
    dev = NVMe(sim, "nvme0", samsung_970_evo_plus_1tb(nr_queues=4), np.random.default_rng(0))
    blk = MQQueue(sim, dev, BlockConfig(scheduler="none", nr_requests=None), nr_cpus=4)
    rng = np.random.default_rng(1)
    pages = dev.capacity_bytes // 4096
    done = [0]
    end_ns = 20_000_000

    def read(issuer, _prev=None):
        if _prev is not None:
            done[0] += 1
        if sim.now_ns < end_ns:
            blk.submit(IORequest(READ, int(rng.integers(0, pages)) * 4096, 4096,
                                 lambda b: read(issuer, b), issuer=issuer))

    for t in range(threads):
        read(t)
    sim.run()
    return done[0] / (sim.now_ns / 1e9), blk, dev


def test_none_on_a_4_queue_nvme_scales_iops_with_submitting_threads():
    """One thread per CPU, one CPU per hardware queue: nothing in the block layer is
    shared, so QD1 readers scale until the flash is busy."""
    one, _, _ = _nvme_randread_iops(1)
    four, blk, dev = _nvme_randread_iops(4)
    assert four > 3.5 * one
    assert dev.stats()["queues_used"] == 4 and blk.nr_hw_queues == 4


class _Disk(FixedDevice):
    kind = "hdd"          # rotational: bfq idles


def _bfq_think_trace(slice_idle_ms):
    """Two processes read 6 x 4 KB each, 1 ms per read, thinking 1 ms between reads."""
    sim = Simulator()
    dev = _Disk(sim, service_ns=1_000_000, queue_depth=32)
    blk = MQQueue(sim, dev, BlockConfig(scheduler="bfq", slice_idle_ms=slice_idle_ms,
                                        timeout_sync_ms=9))
    left = {1: 6, 2: 6}

    def read(issuer, _prev=None):
        if left[issuer]:
            left[issuer] -= 1
            off = (issuer * 1000 + left[issuer]) * MB
            blk.submit(IORequest(READ, off, 4096, lambda b: sim.after(1_000_000, think_done,
                                                                       issuer), issuer=issuer))

    def think_done(issuer):
        read(issuer)

    read(1)
    read(2)
    sim.run()
    return [s[2] // MB // 1000 for s in dev.served], blk.sched


def test_bfq_idles_for_a_sync_process_that_thinks():
    """Without idling every read of one process lets the other's in (its queue is
    empty while it thinks); with slice_idle 8 ms the in-service process keeps the
    disk through its 1 ms think times until its 9 ms timeout."""
    no_idle, _ = _bfq_think_trace(0)
    assert no_idle == [1, 2] * 6
    idle, bfq = _bfq_think_trace(8)
    assert idle == [1] * 5 + [2] * 5 + [1, 2]
    assert bfq.idle_waits > 0
