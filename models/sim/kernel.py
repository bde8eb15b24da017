"""The event kernel: an integer-nanosecond clock and a heap of scheduled callbacks.

Modelled: a single simulated clock (``now_ns``, int), callbacks scheduled at absolute
times and run in (time, insertion order) order, so two runs of the same model are
identical event for event. Simulated threads are Python generators (``Process``) that
yield what they wait on: an ``Event``, or an int number of nanoseconds to sleep. A
sleep that no callback falls inside (none due before the wake-up, or at it: that one
was scheduled earlier and runs first) is taken in place - the clock moves on and the
thread carries on inside the same callback -, so a thread's CPU steps between two
device events cost no heap event. Likewise a thread that waits on a thread it has just
spawned, whose first step is the next event due, runs that step in place (and, if the
child ends with nothing else due at that instant, carries on as its wake-up would).
``events_processed`` counts heap events only.

The device hot path does not use processes or events: devices and the block layer
schedule plain callbacks with ``Simulator.at`` / ``Simulator.after`` (one heap push per
I/O), which is several times cheaper than a generator per request.

Deliberately not modelled: priorities between callbacks at the same instant (FIFO by
insertion is the rule), interrupts of a waiting process, real time.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Generator, Iterable

NS_PER_US = 1_000
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


class SimulationError(RuntimeError):
    """A model did something impossible (time going backwards, an event fired twice)."""


class Simulator:
    """Heap of ``(time_ns, seq, fn, arg)``; ``run`` pops and calls in order."""

    __slots__ = ("now_ns", "_heap", "_seq", "events_processed", "_stopped", "until_ns",
                 "running", "fired_events")

    def __init__(self) -> None:
        self.now_ns: int = 0
        self._heap: list = []
        self._seq: int = 0
        self.events_processed: int = 0
        self._stopped = False
        self.until_ns: int | None = None   # the bound of the ``run`` in progress
        self.running = False               # inside ``run``
        self.fired_events: dict = {}       # shared already-fired events (``sync.fired``)

    # -- scheduling -----------------------------------------------------------------
    def at(self, time_ns: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` at absolute simulated time ``time_ns``."""
        if time_ns < self.now_ns:
            raise SimulationError(f"scheduled at {time_ns} ns, before now ({self.now_ns} ns)")
        self._seq += 1
        heapq.heappush(self._heap, (time_ns, self._seq, fn, arg))

    def after(self, delay_ns: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` ``delay_ns`` nanoseconds from now."""
        self._seq += 1
        heapq.heappush(self._heap, (self.now_ns + delay_ns, self._seq, fn, arg))

    # -- processes and events ---------------------------------------------------------
    def event(self) -> "Event":
        return Event(self)

    def timeout(self, delay_ns: int) -> "Event":
        ev = Event(self)
        self.after(int(delay_ns), ev.succeed)
        return ev

    def spawn(self, gen: Generator, name: str = "") -> "Process":
        """Start a simulated thread; it first runs at the current time."""
        return Process(self, gen, name)

    # -- running ----------------------------------------------------------------------
    def stop(self) -> None:
        """Make ``run`` return after the current callback."""
        self._stopped = True

    def run(self, until_ns: int | None = None) -> int:
        """Process events until the heap is empty, ``stop()`` or ``until_ns``.

        Returns the simulated time reached. With ``until_ns`` the clock is advanced to
        exactly ``until_ns`` if events remain beyond it.
        """
        heap = self._heap
        pop = heapq.heappop
        self._stopped = False
        self.until_ns = until_ns
        self.running = True
        n = 0
        try:
            while heap and not self._stopped:
                if until_ns is not None and heap[0][0] > until_ns:
                    self.now_ns = until_ns
                    break
                t, _, fn, arg = pop(heap)
                self.now_ns = t
                n += 1
                fn(arg)
        finally:
            self.events_processed += n
            self.until_ns = None
            self.running = False
        return self.now_ns

    @property
    def pending(self) -> int:
        return len(self._heap)

    @property
    def stopped(self) -> bool:
        """``stop()`` was called during the ``run`` in progress."""
        return self._stopped


class Event:
    """Something a process can wait for; fires once with a value.

    Callbacks registered before the event fires are called in registration order at the
    instant it fires (directly, not through the heap); ``succeed`` on a fired event is an
    error.
    """

    __slots__ = ("sim", "callbacks", "triggered", "value")

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.callbacks: list[Callable[[Any], None]] | None = []
        self.triggered = False
        self.value: Any = None

    def succeed(self, value: Any = None) -> None:
        if self.triggered:
            raise SimulationError("event fired twice")
        self.triggered = True
        self.value = value
        cbs, self.callbacks = self.callbacks, None
        for cb in cbs:
            cb(value)

    def add_callback(self, cb: Callable[[Any], None]) -> None:
        if self.triggered:
            cb(self.value)
        else:
            self.callbacks.append(cb)


class Process(Event):
    """A simulated thread: a generator that yields ``Event`` objects or int delays (ns).

    The process is itself an event that fires with the generator's return value, so one
    process can wait for another. The value an event fired with is sent back into the
    generator.
    """

    __slots__ = ("gen", "name", "_start")

    def __init__(self, sim: Simulator, gen: Generator, name: str = "") -> None:
        super().__init__(sim)
        self.gen = gen
        self.name = name
        sim._seq += 1
        self._start = (sim.now_ns, sim._seq, self._begin, None)   # its first step, queued
        heapq.heappush(sim._heap, self._start)

    def _begin(self, _value: Any) -> None:
        self._start = None
        self._resume(None)

    def _wake(self, value: Any) -> None:
        # The thread that fired the event keeps running; the waiter resumes after it,
        # at the same instant (as with a real wake-up).
        self.sim.at(self.sim.now_ns, self._resume, value)

    def _resume(self, value: Any) -> None:
        gen = self.gen
        sim = self.sim
        heap = sim._heap
        while True:
            try:
                target = gen.send(value)
            except StopIteration as stop:
                self.succeed(stop.value)
                return
            if type(target) is int:
                # A sleep that nothing else can interrupt - no callback is due before
                # the wake-up (one due at that very instant was scheduled earlier and
                # runs first) - is taken in place: the clock moves on and the thread
                # carries on, the same order of events without a trip through the heap.
                t = sim.now_ns + target
                if (target >= 0 and (not heap or heap[0][0] > t) and not sim._stopped
                        and (sim.until_ns is None or t <= sim.until_ns) and sim.running):
                    sim.now_ns = t
                    value = None
                    continue
                sim.after(target, self._resume, None)
                return
            if not isinstance(target, Event):
                raise SimulationError(
                    f"process {self.name!r} yielded {target!r}; expected Event or int ns")
            if (type(target) is Process and target._start is not None and heap
                    and heap[0] is target._start and not sim._stopped):
                # Waiting on a thread just spawned whose first step is the next event
                # anyway: take that step now. If the thread then ends and nothing else
                # is due at this instant, carry on as its wake-up would; if it ended,
                # the wake-up is queued as its end would have queued it.
                heapq.heappop(heap)
                target._begin(None)
                if target.triggered:
                    if (not heap or heap[0][0] > sim.now_ns) and not sim._stopped:
                        value = target.value
                        continue
                    self._wake(target.value)
                    return
            if not target.triggered:
                target.callbacks.append(self._wake)
                return
            value = target.value  # already fired: carry on without giving up the CPU


def all_of(sim: Simulator, events: Iterable[Event]) -> Event:
    """An event that fires (with None) once every event in ``events`` has fired."""
    events = list(events)
    done = Event(sim)
    remaining = [len(events)]
    if not events:
        done.succeed()
        return done

    def one(_value: Any) -> None:
        remaining[0] -= 1
        if remaining[0] == 0:
            done.succeed()

    for ev in events:
        ev.add_callback(one)
    return done
