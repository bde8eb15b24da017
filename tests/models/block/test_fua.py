"""FUA in the block layer (blk-flush's policy): passed on by a queue that advertises it,
emulated as the write then a FLUSH by one that does not; a FUA bio merges with none."""
import pytest

from models.block import BlockConfig, BlockQueue
from models.block.mq.queue import MQQueue
from models.device.request import FLUSH, WRITE, IORequest
from models.sim import Simulator
from tests.models.fakes import FixedDevice

MS = 1_000_000


class _Drive(FixedDevice):
    """1 ms a command, one at a time; records (start, op, fua) of each."""

    def __init__(self, sim, kind="hdd", queue_depth=1):
        super().__init__(sim, service_ns=MS, queue_depth=queue_depth)
        self.fua = kind != "ssd"       # a SATA SSD: libata advertises no FUA
        self.log = []

    def service_ns(self, req):
        self.log.append((self.sim.now_ns // MS, req.op, req.fua))
        return MS


def _queue(kind, mq=False, **cfg):
    sim = Simulator()
    dev = _Drive(sim, kind)
    if mq:
        q = MQQueue(sim, dev, BlockConfig(scheduler="none", flush_merging=True, **cfg))
    else:
        q = BlockQueue(sim, dev, BlockConfig(scheduler="noop", **cfg))
    return sim, dev, q


@pytest.mark.parametrize("mq", [False, True])
def test_a_fua_write_is_sent_with_the_flag_where_the_queue_advertises_it(mq):
    sim, dev, q = _queue("hdd", mq)
    done = []
    q.submit(IORequest(WRITE, 0, 4096, done.append, True, True))
    sim.run()
    assert dev.log == [(0, WRITE, True)]
    assert done[0].done_ns == MS


@pytest.mark.parametrize("mq", [False, True])
def test_without_fua_the_write_is_followed_by_a_flush_before_it_completes(mq):
    """libata's SATA SSD (no FUA): the write goes without the flag, then a FLUSH; the
    caller's bio completes with the FLUSH, and iostat counts one write, one flush."""
    sim, dev, q = _queue("ssd", mq)
    done = []
    t0 = q.snapshot()
    q.submit(IORequest(WRITE, 0, 4096, done.append, True, True))
    sim.run()
    assert dev.log == [(0, WRITE, False), (1, FLUSH, False)]
    assert [b.done_ns for b in done] == [2 * MS]
    io = q.iostat(t0)
    assert (io["w_s"], io["f_s"]) == pytest.approx((500, 500))     # one each in 2 ms


def test_emulated_fua_writes_share_a_flush_with_flush_merging():
    """Four FUA writes in flight on a queue without FUA (blk-mq, one flush queue): the
    first post-flush goes at once, the three asked while it runs share the next."""
    sim = Simulator()
    dev = _Drive(sim, "ssd", queue_depth=4)
    q = MQQueue(sim, dev, BlockConfig(scheduler="none", flush_merging=True))
    done = []
    for i in range(4):
        q.submit(IORequest(WRITE, i * 8192, 4096, done.append, True, True))
    sim.run()
    assert [op for _, op, _ in dev.log] == [WRITE] * 4 + [FLUSH] * 2
    assert sorted(b.done_ns // MS for b in done) == [5, 6, 6, 6]


@pytest.mark.parametrize("kind", ["hdd", "ssd"])
def test_a_fua_bio_merges_with_no_other(kind):
    """Adjacent writes in one plugged submission merge; FUA ones (or their emulated
    writes) go as requests of their own (REQ_NOMERGE_FLAGS)."""
    sim, dev, q = _queue(kind, nr_requests=128)
    q.submit([IORequest(WRITE, i * 4096, 4096, None, True, False) for i in range(4)], plug=True)
    sim.run()
    assert [op for _, op, _ in dev.log] == [WRITE]
    sim, dev, q = _queue(kind, nr_requests=128)
    q.submit([IORequest(WRITE, i * 4096, 4096, None, True, True) for i in range(4)], plug=True)
    q.submit(IORequest(WRITE, 4 * 4096, 4096, None, True, False))
    sim.run()
    assert [op for _, op, _ in dev.log].count(WRITE) == 5


def test_queue_fua_follows_the_drive_unless_set():
    """``queue/fua``: a SATA drive (behind libata) has none, a SAS one has it;
    ``block.fua=true`` is ``libata.fua=1``."""
    from models.device.hdd import HDD
    from models.device.hdd.datasheet import constellation_es3

    sim = Simulator()
    sata = HDD(sim, "sda", constellation_es3(interface="sata", write_cache=True))
    assert (sata.fua, HDD(sim, "sdb", constellation_es3()).fua) == (False, True)
    assert BlockQueue(sim, sata, BlockConfig()).emulate_fua
    assert not BlockQueue(sim, sata, BlockConfig(fua=True)).emulate_fua
    with pytest.raises(ValueError, match="interface: must be sas or sata"):
        constellation_es3(interface="ide")
    sim, dev, q = _queue("ssd", fua=True)
    q.submit(IORequest(WRITE, 0, 4096, None, True, True))
    sim.run()
    assert dev.log == [(0, WRITE, True)]


# -- FUA writes go past the I/O scheduler (blk_insert_flush) -----------------------------

class _Logged(_Drive):
    """As ``_Drive``, logging (op, 4 KiB block, fua) in service order."""

    def service_ns(self, req):
        self.log.append((req.op, req.offset_bytes // 4096, req.fua))
        return MS


def _busy_queue(kind, scheduler, mq=False):
    """A drive of one tag busy with block 0, four writes queued in the scheduler
    behind it (blocks 40, 30, 20, 10, in that order: sorted, they would go 10 first)."""
    sim = Simulator()
    dev = _Logged(sim, kind)
    cls = MQQueue if mq else BlockQueue
    q = cls(sim, dev, BlockConfig(scheduler=scheduler, flush_merging=True))
    q.submit(IORequest(WRITE, 0, 4096, None, False, False, 1))
    for blk in (40, 30, 20, 10):
        q.submit(IORequest(WRITE, blk * 4096, 4096, None, False, False, 1))
    return sim, dev, q


QUEUES = [("noop", False), ("deadline", False), ("cfq", False),
          ("none", True), ("mq-deadline", True), ("kyber", True), ("bfq", True)]


@pytest.mark.parametrize("scheduler,mq", QUEUES)
def test_a_fua_write_goes_ahead_of_what_the_scheduler_holds(scheduler, mq):
    """A FUA write from another thread, submitted while the drive is busy, is the next
    command: the dispatch list is served before the scheduler's requests, which then
    follow in the scheduler's own order. The scheduler's books balance (cfq / bfq /
    kyber never counted it)."""
    sim, dev, q = _busy_queue("hdd", scheduler, mq)
    done = []
    q.submit(IORequest(WRITE, 70 * 4096, 4096, done.append, True, True, 2))
    sim.run()
    assert dev.log[:2] == [(WRITE, 0, False), (WRITE, 70, True)]
    assert sorted(b for _, b, _ in dev.log[2:]) == [10, 20, 30, 40]
    assert done[0].done_ns == 2 * MS
    sched = q.sched
    if scheduler == "cfq":
        assert sched.in_driver == 0
    if scheduler == "bfq":
        assert not any(sched.inflight.values())
    if scheduler == "kyber":
        assert not any(sched.inflight)


@pytest.mark.parametrize("scheduler,mq", [("deadline", False), ("mq-deadline", True)])
def test_a_plain_sync_write_waits_its_turn_in_the_scheduler(scheduler, mq):
    """The same write without FUA is sorted in with the queued writes (the control of
    the test above): deadline serves them by sector - 2.6.18's from the lowest, 2.6.28+'s
    and mq-deadline's from the oldest - and the sweep reaches it after 40."""
    sim, dev, q = _busy_queue("hdd", scheduler, mq)
    q.submit(IORequest(WRITE, 70 * 4096, 4096, None, True, False, 2))
    sim.run()
    first = (10, 20, 30, 40, 70) if scheduler == "deadline" else (40, 70, 30, 20, 10)
    assert dev.log[1:] == [(WRITE, b, False) for b in first]


@pytest.mark.parametrize("scheduler,mq", [("deadline", False), ("cfq", False),
                                          ("mq-deadline", True)])
def test_an_emulated_fua_write_and_its_flush_go_ahead_of_the_scheduler(scheduler, mq):
    """Without FUA (a SATA SSD): the write goes first (its flush sequence's data step,
    at the head of the dispatch list), then the post-flush, then what the scheduler
    held; the caller's bio completes with the FLUSH."""
    sim, dev, q = _busy_queue("ssd", scheduler, mq)
    done = []
    q.submit(IORequest(WRITE, 70 * 4096, 4096, done.append, True, True, 2))
    sim.run()
    assert dev.log[:3] == [(WRITE, 0, False), (WRITE, 70, False), (FLUSH, 0, False)]
    assert sorted(b for _, b, _ in dev.log[3:]) == [10, 20, 30, 40]
    assert done[0].done_ns == 3 * MS


def test_a_fua_write_passes_a_flush_that_waits_for_its_flush_queue():
    """flush_merging: with a FLUSH at the drive and the next one waiting for it, a FUA
    write is not held behind the waiting FLUSH (blk-flush keeps it on the flush queue,
    not on the dispatch list)."""
    sim = Simulator()
    dev = _Logged(sim, "hdd", queue_depth=2)
    q = MQQueue(sim, dev, BlockConfig(scheduler="none", flush_merging=True))
    q.submit(IORequest(FLUSH, 0, 0, None, True, False, 1))
    q.submit(IORequest(FLUSH, 0, 0, None, True, False, 1))        # waits for the first
    q.submit(IORequest(WRITE, 8 * 4096, 4096, None, True, True, 1))
    sim.run()
    assert dev.log == [(FLUSH, 0, False), (WRITE, 8, True), (FLUSH, 0, False)]


@pytest.mark.parametrize("mq", [False, True])
def test_the_post_flush_takes_the_request_its_write_frees(mq):
    """One request (tag) to go round and a second writer asleep for it: when the
    emulated write completes, its post-flush takes the request (blk-flush lends it the
    data request's tag), and the sleeper's write goes after the FLUSH."""
    sim = Simulator()
    dev = _Logged(sim, "ssd")
    cls = MQQueue if mq else BlockQueue
    q = cls(sim, dev, BlockConfig(scheduler="none" if mq else "noop", nr_requests=1,
                                  flush_merging=True))
    done = []
    assert q.submit(IORequest(WRITE, 0, 4096, done.append, True, True, 1)) is None
    assert q.submit(IORequest(WRITE, 8 * 4096, 4096, done.append, True, False, 2)) is not None
    sim.run()
    assert dev.log == [(WRITE, 0, False), (FLUSH, 0, False), (WRITE, 8, False)]
    assert [b.done_ns // MS for b in done] == [2, 3]
