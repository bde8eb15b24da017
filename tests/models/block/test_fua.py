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
    from models.device.hdd_datasheet import constellation_es3

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
