"""Flush merging (``BlockConfig.flush_merging``, Linux 2.6.37+ blk-flush): one cache FLUSH
of a flush queue at the device at a time; every FLUSH asked while it runs waits for the
next one, which serves them all. Before 2.6.37 each FLUSH went to the device."""
from types import SimpleNamespace

import pytest

from models.block import BlockConfig, BlockQueue, MQQueue
from models.device.request import FLUSH, WRITE, IORequest
from models.linux import KernelConfig
from models.sim import Simulator
from tests.models.fakes import FixedDevice

US = 1000


def _flushes(queue_cls, merging, issuers, sched, queue_depth=4, device=FixedDevice):
    """FLUSHes from ``issuers`` at 0, 10, 20 ... us on a device that serves one command
    at a time in 100 us: when each completes, and when the device began each FLUSH."""
    sim = Simulator()
    dev = device(sim, service_ns=100 * US, queue_depth=queue_depth)
    q = queue_cls(sim, dev, BlockConfig(scheduler=sched, flush_merging=merging),
                  **({"nr_cpus": 2} if queue_cls is MQQueue else {}))
    done = {}

    def ask(i):
        bio = IORequest(FLUSH, 0, 0, lambda b, i=i: done.__setitem__(i, b.done_ns // US),
                        True, False, issuers[i])
        q.submit(bio)

    for i in range(len(issuers)):
        sim.at(i * 10 * US, ask, i)
    sim.run()
    return done, [t // US for t, op, _, _ in dev.served if op == FLUSH], q


@pytest.mark.parametrize("queue_cls, sched", [(BlockQueue, "noop"), (MQQueue, "none")])
def test_flushes_asked_while_one_runs_share_the_next(queue_cls, sched):
    done, served, q = _flushes(queue_cls, True, [0, 0, 0, 0], sched)
    # the first runs 0-100 us; the three asked during it wait and share one at 100-200
    assert served == [0, 100]
    assert done == {0: 100, 1: 200, 2: 200, 3: 200}
    assert q.counters.ios[FLUSH] == 2                  # iostat's f/s: device FLUSHes
    # without merging (Linux before 2.6.37) each FLUSH is a command of its own
    done, served, _ = _flushes(queue_cls, False, [0, 0, 0, 0], sched)
    assert served == [0, 100, 200, 300]
    assert done == {0: 100, 1: 200, 2: 300, 3: 400}


class _TwoQueueNVMe(FixedDevice):
    kind = "nvme"

    def __init__(self, sim, **kw):
        super().__init__(sim, **kw)
        self.cfg = SimpleNamespace(nr_queues=2)


def test_blk_mq_merges_flushes_per_hardware_context():
    """hctx->fq: issuers 0 and 1 run on two CPUs mapped to two hardware queues, so each
    context has a FLUSH of its own at the device; the later ones of each context share
    their context's next one (one flush queue would have served all five with one)."""
    done, served, _ = _flushes(MQQueue, True, [0, 1, 0, 1, 0, 1], "none",
                               device=_TwoQueueNVMe)
    assert served == [0, 100, 200, 300]
    assert done == {0: 100, 1: 200, 2: 300, 4: 300, 3: 400, 5: 400}


def test_a_flush_waiting_behind_writes_still_takes_the_ones_asked_after_it():
    """A FLUSH that waits for a device tag (the drive busy with writes) is joined by the
    FLUSHes asked before it is issued: one command serves them."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100 * US, queue_depth=1)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop", flush_merging=True))
    done = []
    q.submit(IORequest(WRITE, 0, 4096, None, True, False, 0))
    for i in range(3):
        q.submit(IORequest(FLUSH, 0, 0, lambda b: done.append(b.done_ns // US), True, False, i))
    sim.run()
    assert [op for _, op, _, _ in dev.served] == [WRITE, FLUSH]
    assert done == [200, 200, 200]


def test_the_kernel_decides_flush_merging():
    assert [KernelConfig(v).flush_merging() for v in ("2.6.18", "2.6.32", "3.10", "5.15")] \
        == [False, False, True, True]
