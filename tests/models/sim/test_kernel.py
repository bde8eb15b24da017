"""Exact event-order traces of the kernel and its primitives."""
import pytest

from models.sim import BoundedQueue, Condition, Mutex, Semaphore, SimulationError, Simulator, all_of


def test_callbacks_run_in_time_then_insertion_order():
    sim = Simulator()
    log = []
    sim.at(20, log.append, "c")
    sim.at(10, log.append, "a")
    sim.at(10, log.append, "b")
    sim.after(5, log.append, "first")
    sim.run()
    assert log == ["first", "a", "b", "c"]
    assert sim.now_ns == 20
    assert sim.events_processed == 4


def test_run_until_stops_the_clock_exactly():
    sim = Simulator()
    log = []
    sim.at(10, log.append, 1)
    sim.at(30, log.append, 2)
    assert sim.run(until_ns=20) == 20
    assert log == [1]
    sim.run()
    assert log == [1, 2]


def test_scheduling_in_the_past_is_an_error():
    sim = Simulator()
    sim.at(10, lambda _: sim.at(5, print))
    with pytest.raises(SimulationError):
        sim.run()


def test_two_threads_and_a_mutex():
    sim = Simulator()
    mutex = Mutex(sim, "m")
    log = []

    def worker(name, hold_ns, start_ns):
        yield start_ns
        log.append((name, "wants", sim.now_ns))
        yield mutex.acquire()
        log.append((name, "holds", sim.now_ns))
        yield hold_ns
        mutex.release()
        log.append((name, "released", sim.now_ns))

    sim.spawn(worker("a", 100, 0))
    sim.spawn(worker("b", 50, 10))
    sim.run()
    assert log == [
        ("a", "wants", 0), ("a", "holds", 0),
        ("b", "wants", 10),
        ("a", "released", 100), ("b", "holds", 100),
        ("b", "released", 150),
    ]
    assert mutex.contended == 1 and mutex.wait_ns_total == 90


def test_semaphore_admits_capacity_then_fifo():
    sim = Simulator()
    sem = Semaphore(sim, 2)
    log = []

    def user(name):
        yield sem.acquire()
        log.append((name, "in", sim.now_ns))
        yield 10
        sem.release()

    for name in "abcd":
        sim.spawn(user(name))
    sim.run()
    assert log == [("a", "in", 0), ("b", "in", 0), ("c", "in", 10), ("d", "in", 10)]


def test_bounded_queue_blocks_producer_when_full():
    sim = Simulator()
    q = BoundedQueue(sim, capacity=1)
    log = []

    def producer():
        for i in range(3):
            yield q.put(i)
            log.append(("put", i, sim.now_ns))

    def consumer():
        yield 100
        for _ in range(3):
            item = yield q.get()
            log.append(("got", item, sim.now_ns))
            yield 50

    sim.spawn(producer())
    sim.spawn(consumer())
    sim.run()
    assert log == [
        ("put", 0, 0),
        ("got", 0, 100), ("put", 1, 100),
        ("got", 1, 150), ("put", 2, 150),
        ("got", 2, 200),
    ]


def test_condition_wakes_all_waiters_with_value_and_process_return_values():
    sim = Simulator()
    cond = Condition(sim)
    log = []

    def waiter(name):
        value = yield cond.wait()
        log.append((name, value, sim.now_ns))
        return name

    def notifier():
        yield 7
        cond.notify_all("go")

    procs = [sim.spawn(waiter("x")), sim.spawn(waiter("y"))]
    sim.spawn(notifier())
    done = all_of(sim, procs)
    sim.run()
    assert log == [("x", "go", 7), ("y", "go", 7)]
    assert done.triggered and [p.value for p in procs] == ["x", "y"]


def test_yielding_garbage_is_a_clear_error():
    sim = Simulator()

    def bad():
        yield "soon"

    sim.spawn(bad(), name="bad")
    with pytest.raises(SimulationError, match="bad"):
        sim.run()


def test_run_exposes_its_bound_while_running():
    sim = Simulator()
    log = []
    for t, name in ((30, "c"), (10, "a"), (20, "b")):
        sim.at(t, log.append, name)
    seen = {}

    def peek(_):
        seen.update(running=sim.running, until=sim.until_ns)

    sim.at(5, peek)
    sim.run(until_ns=15)
    assert seen == {"running": True, "until": 15}
    assert (sim.running, sim.until_ns) == (False, None) and log == ["a"]
    sim.run()
    assert log == ["a", "b", "c"] and sim.events_processed == 4


def test_an_uninterrupted_sleep_is_taken_in_place_in_the_same_order():
    """A thread's sleeps that no callback falls inside cost no heap event; a callback
    due before or at the wake-up still runs first (it was scheduled earlier)."""
    sim = Simulator()
    log = []

    def thread():
        for _ in range(100):
            yield 10
        log.append(("alone", sim.now_ns))
        yield 10                    # the callback at 1,010 is due at the wake-up: first
        log.append(("woke", sim.now_ns))
        yield 20                    # the callback at 1,025 falls inside: first
        log.append(("woke", sim.now_ns))

    sim.spawn(thread())
    sim.at(1_010, lambda _: log.append(("cb", sim.now_ns)))
    sim.at(1_025, lambda _: log.append(("cb", sim.now_ns)))
    sim.run()
    assert log == [("alone", 1_000), ("cb", 1_010), ("woke", 1_010), ("cb", 1_025),
                   ("woke", 1_030)]
    # the spawn, the two callbacks, and the wake-ups at 1,010 and 1,030
    assert sim.events_processed == 5


def test_an_in_place_sleep_respects_run_until_and_stop():
    sim = Simulator()
    log = []

    def thread():
        while True:
            yield 10
            log.append(sim.now_ns)
            if sim.now_ns == 50:
                sim.stop()

    sim.spawn(thread())
    assert sim.run(until_ns=25) == 25
    assert log == [10, 20]
    sim.run()
    assert log == [10, 20, 30, 40, 50] and sim.now_ns == 50


def test_waiting_on_a_thread_just_spawned_takes_its_first_step_in_place():
    """A thread that spawns another and waits for it: the child's first step and the
    parent's wake-up cost no heap event when nothing else is due at that instant; with
    a callback due at the same instant the order is the queued one."""
    sim = Simulator()
    log = []

    def child(tag):
        log.append((tag, "child", sim.now_ns))
        yield 5
        return tag

    def parent():
        for i in range(50):
            got = yield sim.spawn(child(i))
            log.append((got, "parent", sim.now_ns))
        sim.at(sim.now_ns, lambda _: log.append(("cb", sim.now_ns)))
        got = yield sim.spawn(child("x"))     # the callback queued first runs first
        log.append((got, "parent", sim.now_ns))

    sim.spawn(parent())
    sim.run()
    assert log[:4] == [(0, "child", 0), (0, "parent", 5), (1, "child", 5), (1, "parent", 10)]
    assert log[-3:] == [("cb", 250), ("x", "child", 250), ("x", "parent", 255)]
    # the parent's start, the callback, the last child's start behind it, the parent's
    # wake-up at that child's end
    assert sim.events_processed == 4


def test_uncontended_acquires_return_one_shared_fired_event():
    """A lock or permit that is free is granted with an event that has already fired
    (no new event per acquisition); a contended one gets its own."""
    from models.sim import RwLatch

    sim = Simulator()
    sem, mutex, latch = Semaphore(sim, 2), Mutex(sim, barging=True), RwLatch(sim)
    a, b = sem.acquire(), sem.acquire()
    assert a is b and a.triggered and a.value is None
    assert latch.s_lock() is a
    granted = mutex.acquire()
    assert granted.triggered and granted.value is True and mutex.acquire() is not granted
    waiting = sem.acquire()
    assert not waiting.triggered and waiting is not a
