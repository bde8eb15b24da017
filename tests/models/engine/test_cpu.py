"""CPU: cores as a FIFO run queue, bursts in cycles, wake-up cost only after sleeping."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.engine.cpu import CPU, CPUConfig
from models.sim import Mutex, Simulator, SpinMutex


def test_bursts_queue_for_cores_fifo():
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(cores=2, ghz=2.0, wakeup_us=0))
    log = []

    def thread(name):
        yield from cpu.run(20_000)          # 20,000 cycles at 2 GHz = 10 us
        log.append((name, sim.now_ns))

    for n in "abcd":
        sim.spawn(thread(n))
    sim.run()
    assert log == [("a", 10_000), ("b", 10_000), ("c", 20_000), ("d", 20_000)]
    assert cpu.busy_ns == 40_000
    assert cpu.cores.wait_ns_total == 2 * 10_000
    assert cpu.stats(20_000)["util_pct"] == pytest.approx(100.0)


def test_wakeup_paid_only_by_a_thread_that_slept():
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(cores=1, wakeup_us=5))
    ev_fired, ev_late = sim.event(), sim.event()
    ev_fired.succeed(7)
    log = []

    def t():
        v = yield from cpu.wait(ev_fired)       # no sleep, no cost
        log.append(("fired", v, sim.now_ns))
        v = yield from cpu.wait(ev_late)        # sleeps until 1 us, then 5 us switch-in
        log.append(("late", v, sim.now_ns))

    sim.spawn(t())
    sim.after(1_000, ev_late.succeed, 3)
    sim.run()
    assert log == [("fired", 7, 0), ("late", 3, 6_000)]
    assert cpu.wakeups == 1


@pytest.mark.parametrize("key,kw", [("cores", {"cores": 0}), ("ghz", {"ghz": 0}),
                                    ("wakeup_us", {"wakeup_us": -1})])
def test_config_rejects_bad_values(key, kw):
    with pytest.raises(ValueError, match=f"^{key}:"):
        CPUConfig(**kw)


def test_broadcast_wakes_sleepers_one_after_another():
    from models.sim import Mutex
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(cores=16, wakeup_us=5))
    ev, m = sim.event(), Mutex(sim)
    log = []

    def t(name):
        yield from cpu.wait_broadcast(ev, m)
        log.append((name, sim.now_ns))

    for n in "abc":
        sim.spawn(t(n))
    sim.after(10_000, ev.succeed)
    sim.run()
    assert log == [("a", 15_000), ("b", 20_000), ("c", 25_000)]


def test_spin_wait_skips_the_wakeup_for_short_waits():
    from models.sim import Mutex
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(wakeup_us=5))
    m = Mutex(sim)
    log = []

    def holder(hold_ns):
        yield m.acquire()
        yield hold_ns
        m.release()

    def waiter(name):
        yield from cpu.spin_wait(m.acquire(), 10_000)
        log.append((name, sim.now_ns))
        m.release()

    sim.spawn(holder(3_000))
    sim.spawn(waiter("short"))
    sim.run()
    m2_start = sim.now_ns                 # second case, after the first
    sim.spawn(holder(30_000))
    sim.spawn(waiter("long"))
    sim.run()
    assert log == [("short", 3_000), ("long", m2_start + 30_000 + 5_000)]
    assert cpu.spins == 1 and cpu.wakeups == 1
    assert cpu.spin_ns_total == 3_000 + 10_000


def _lock_trace(barging):
    """A holds the mutex 0-100 us; B asks at 10 us and sleeps; D asks at 105 us and
    holds it 20 us. Wake-up 10 us."""
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(cores=4, wakeup_us=10))
    m = Mutex(sim, "LOCK_log", barging=barging)
    log = []

    def thread(name, start_us, hold_us):
        yield start_us * 1000
        yield from cpu.lock(m)
        log.append((sim.now_ns // 1000, name, "in"))
        yield hold_us * 1000
        log.append((sim.now_ns // 1000, name, "out"))
        m.release()

    for args in (("A", 0, 100), ("B", 10, 20), ("D", 105, 20)):
        sim.spawn(thread(*args))
    sim.run()
    return log, m, cpu


def test_barging_mutex_is_not_left_idle_for_a_wake_up():
    log, m, cpu = _lock_trace(barging=True)
    # A's release frees the lock and wakes B; D asks while B is being switched in and
    # takes it; B tries at 110, sleeps again, is woken at 125 and gets it at 135
    assert log == [(0, "A", "in"), (100, "A", "out"), (105, "D", "in"), (125, "D", "out"),
                   (135, "B", "in"), (155, "B", "out")]
    assert m.acquisitions == 3 and m.contended == 1 and cpu.wakeups == 2


def test_hand_off_mutex_holds_the_lock_through_the_wake_up():
    log, m, cpu = _lock_trace(barging=False)
    # A hands the lock to the sleeping B, who holds it while being switched in
    assert log == [(0, "A", "in"), (100, "A", "out"), (110, "B", "in"), (130, "B", "out"),
                   (140, "D", "in"), (160, "D", "out")]
    assert cpu.wakeups == 2


@settings(max_examples=60, deadline=None)
@given(barging=st.booleans(), spin=st.sampled_from([0, 2_000, 50_000]),
       plan=st.lists(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 30)),
                              min_size=1, max_size=6), min_size=2, max_size=6))
def test_lock_is_exclusive_and_every_thread_gets_through(barging, spin, plan):
    """Whatever the arrivals and hold times: never two holders, and every request is
    served (no wake-up is lost when a woken sleeper finds the lock taken again)."""
    sim = Simulator()
    cpu = CPU(sim, CPUConfig(cores=2, wakeup_us=5))
    m = SpinMutex(sim, "m", spin_ns=spin) if spin else Mutex(sim, "m", barging=barging)
    state = {"holders": 0, "max": 0, "done": 0}

    def thread(steps):
        for gap_us, hold_us in steps:
            yield gap_us * 1000
            yield from cpu.lock(m, spin)
            state["holders"] += 1
            state["max"] = max(state["max"], state["holders"])
            yield hold_us * 1000
            state["holders"] -= 1
            m.release()
            state["done"] += 1

    for steps in plan:
        sim.spawn(thread(steps))
    sim.run()
    assert state["max"] == 1
    assert state["done"] == sum(len(s) for s in plan)
    assert not m.locked and m.waiting == 0
