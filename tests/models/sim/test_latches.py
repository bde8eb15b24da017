"""Exact traces of the InnoDB-style latches: SpinMutex (spinners first) and RwLatch
(S/X, FIFO, writer preference)."""
import pytest

from models.sim import Event, RwLatch, SimulationError, Simulator, SpinMutex


def _holder(sim, log, name, lock_fn, unlock_fn, start_ns, hold_ns):
    def proc():
        yield start_ns
        got = lock_fn()
        if isinstance(got, Event):
            yield got
        else:
            yield from got                       # Mutex.lock(): retries a barging wake-up
        log.append((sim.now_ns, name, "in"))
        yield hold_ns
        log.append((sim.now_ns, name, "out"))
        unlock_fn()
    sim.spawn(proc(), name)


def test_spin_mutex_prefers_a_spinning_waiter_over_an_older_sleeper():
    sim = Simulator()
    m = SpinMutex(sim, "kernel_mutex", spin_ns=10)
    log = []
    _holder(sim, log, "A", m.lock, m.release, 0, 100)
    _holder(sim, log, "B", m.lock, m.release, 1, 5)        # waits 99 ns: asleep
    _holder(sim, log, "C", m.lock, m.release, 95, 5)       # waits 5 ns: spinning
    sim.run()
    assert log == [(0, "A", "in"), (100, "A", "out"), (100, "C", "in"), (105, "C", "out"),
                   (105, "B", "in"), (110, "B", "out")]
    assert m.contended == 2 and m.wait_ns_total == 5 + 104


def test_spin_mutex_without_spinners_is_fifo():
    sim = Simulator()
    m = SpinMutex(sim, "m", spin_ns=0)
    log = []
    for i, name in enumerate("ABC"):
        _holder(sim, log, name, m.lock, m.release, i, 10)
    sim.run()
    assert [e[1] for e in log if e[2] == "in"] == ["A", "B", "C"]
    with pytest.raises(ValueError, match="spin_ns"):
        SpinMutex(sim, "m", spin_ns=-1)


def test_rw_latch_readers_share_writer_waits_for_all_and_blocks_new_readers():
    sim = Simulator()
    lt = RwLatch(sim, "index->lock")
    log = []
    _holder(sim, log, "S1", lt.s_lock, lt.s_unlock, 0, 50)
    _holder(sim, log, "S2", lt.s_lock, lt.s_unlock, 10, 50)   # shares with S1
    _holder(sim, log, "X", lt.x_lock, lt.x_unlock, 20, 30)    # waits for S1 and S2
    _holder(sim, log, "S3", lt.s_lock, lt.s_unlock, 30, 10)   # behind the waiting X
    _holder(sim, log, "S4", lt.s_lock, lt.s_unlock, 40, 10)
    sim.run()
    assert log == [(0, "S1", "in"), (10, "S2", "in"), (50, "S1", "out"), (60, "S2", "out"),
                   (60, "X", "in"), (90, "X", "out"), (90, "S3", "in"), (90, "S4", "in"),
                   (100, "S3", "out"), (100, "S4", "out")]
    assert lt.contended == 3 and lt.x_acquisitions == 1
    assert lt.wait_ns_total == 40 + 60 + 50


def test_rw_latch_x_holders_are_exclusive_and_fifo():
    sim = Simulator()
    lt = RwLatch(sim, "block->lock")
    log = []
    _holder(sim, log, "X1", lt.x_lock, lt.x_unlock, 0, 10)
    _holder(sim, log, "S", lt.s_lock, lt.s_unlock, 1, 10)
    _holder(sim, log, "X2", lt.x_lock, lt.x_unlock, 2, 10)
    sim.run()
    assert [(t, n) for t, n, what in log if what == "in"] == [(0, "X1"), (10, "S"), (20, "X2")]
    with pytest.raises(SimulationError):
        lt.x_unlock()
    with pytest.raises(SimulationError):
        lt.s_unlock()
