"""Trace replay: exact event traces in closed and open loop, device and block-queue targets."""
import numpy as np
import pytest

from models.device.base import Device
from models.device.request import READ, WRITE
from models.sim import Event, Simulator
from models.workload.trace import TraceConfig, TraceReplay


class FixedDevice(Device):
    """1 us per 512-byte sector plus 100 us, FIFO, one server."""

    def __init__(self, sim, queue_depth=1):
        super().__init__(sim, "fixed", 1 << 40, queue_depth=queue_depth)
        self.log = []

    def service_ns(self, req):
        self.log.append((self.sim.now_ns, req.op, req.offset_bytes))
        return 100_000 + 1_000 * (req.size_bytes // 512)


def run(cfg, ops, off, size, t, queue_depth=1):
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth)
    rp = TraceReplay(sim, dev, cfg, ops, off, size, t)
    rp.start()
    sim.run()
    assert rp.done
    return rp, dev


def test_closed_loop_issues_gap_after_completion():
    # three 4 KB requests (108 us each), gaps 50, 0, 7 us after each completes
    rp, dev = run(TraceConfig(mode="closed"), [READ, WRITE, READ], [0, 4096, 8192],
                  [4096] * 3, [50_000, 0, 7_000])
    assert rp.issue_ns.tolist() == [0, 158_000, 266_000]
    assert rp.done_ns.tolist() == [108_000, 266_000, 374_000]
    assert rp.response_ns.tolist() == [108_000] * 3
    assert [op for _, op, _ in dev.log] == [READ, WRITE, READ]


def test_closed_loop_iodepth_keeps_n_outstanding():
    rp, _ = run(TraceConfig(mode="closed", iodepth=2), [READ] * 4, [0, 1, 2, 3],
                [512] * 4, [0] * 4, queue_depth=2)
    # device serves one at a time (101 us); two are always in flight
    assert rp.issue_ns.tolist() == [0, 0, 101_000, 202_000]
    assert rp.done_ns.tolist() == [101_000, 202_000, 303_000, 404_000]
    assert rp.response_ns.tolist() == [101_000, 202_000, 202_000, 202_000]
    assert rp.service_ns.tolist() == [101_000, 202_000, 202_000, 202_000]


def test_open_loop_queues_behind_a_slow_device():
    # arrivals every 50 us, service 101 us, device queue depth 1: a backlog builds
    rp, _ = run(TraceConfig(mode="open"), [READ] * 3, [0, 512, 1024], [512] * 3,
                [10_000, 60_000, 110_000])
    assert rp.issue_ns.tolist() == [10_000, 60_000, 110_000]
    assert rp.dispatch_ns.tolist() == [10_000, 111_000, 212_000]
    assert rp.done_ns.tolist() == [111_000, 212_000, 313_000]
    assert rp.response_ns.tolist() == [101_000, 152_000, 203_000]
    assert rp.service_ns.tolist() == [101_000] * 3


def test_open_loop_time_scale_and_number_ios():
    rp, _ = run(TraceConfig(mode="open", replay_time_scale=50, number_ios=2),
                [READ] * 3, [0, 512, 1024], [512] * 3, [0, 400_000, 800_000])
    assert rp.n == 2
    assert rp.issue_ns.tolist() == [0, 200_000]


def test_block_queue_target_blocks_the_submitter():
    """A target whose submit returns an Event holds later requests until it fires."""

    class Gate:
        def __init__(self, sim):
            self.sim, self.got, self.ev = sim, [], None

        def submit(self, bio):
            self.got.append((self.sim.now_ns, bio.offset_bytes))
            self.sim.after(1_000, lambda r: r.on_done(r), bio)
            if len(self.got) == 1:          # first call: queue full until t = 5 us
                self.ev = Event(self.sim)
                self.sim.after(5_000, lambda _: self.ev.succeed())
                return self.ev
            return None

    sim = Simulator()
    gate = Gate(sim)
    rp = TraceReplay(sim, gate, TraceConfig(mode="open"), [READ] * 3, [0, 1, 2],
                     [512] * 3, [0, 1_000, 2_000])
    rp.start()
    sim.run()
    assert gate.got == [(0, 0), (5_000, 1), (5_000, 2)]
    assert rp.done and rp.done_ns.tolist() == [1_000, 6_000, 6_000]


def test_config_validation_names_the_key():
    with pytest.raises(ValueError, match="mode"):
        TraceConfig(mode="replay")
    with pytest.raises(ValueError, match="iodepth"):
        TraceConfig(iodepth=0)
    with pytest.raises(ValueError, match="replay_time_scale"):
        TraceConfig(replay_time_scale=0)
    sim = Simulator()
    with pytest.raises(ValueError, match="non-decreasing"):
        TraceReplay(sim, FixedDevice(sim), TraceConfig(mode="open"), [0, 0], [0, 0],
                    [512, 512], [5, 1])
    with pytest.raises(ValueError, match="READ"):
        TraceReplay(sim, FixedDevice(sim), TraceConfig(), [3], [0], [512], [0])   # DISCARD


def test_replay_is_deterministic_and_summarised():
    rng = np.random.default_rng(7)
    n = 200
    args = (rng.integers(0, 2, n), rng.integers(0, 1 << 30, n) // 512 * 512,
            rng.integers(1, 64, n) * 512, rng.integers(0, 50_000, n))
    a, _ = run(TraceConfig(mode="closed", iodepth=4), *args, queue_depth=4)
    b, _ = run(TraceConfig(mode="closed", iodepth=4), *args, queue_depth=4)
    assert np.array_equal(a.done_ns, b.done_ns)
    s = a.summary()
    assert s["requests"] == s["completed"] == n
    assert s["reads"] + s["writes"] == n


def test_detail_columns_per_request():
    rp, _ = run(TraceConfig(mode="closed"), [READ, WRITE], [0, 4096], [4096, 512], [0, 0])
    d = rp.detail()
    assert d["request"].tolist() == [0, 1]
    assert d["op"].tolist() == [READ, WRITE]
    assert d["response_ns"].tolist() == [108_000, 101_000]
    assert rp.results()["requests"] == 2
