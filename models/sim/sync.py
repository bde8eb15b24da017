"""What simulated threads wait on: mutexes, semaphores, conditions, bounded queues.

All waiters are served strictly FIFO (a fair lock, like a ticket lock), which keeps runs
deterministic and makes queueing at a lock visible in the statistics each primitive
keeps (acquisitions, contended acquisitions, total wait time).

Deliberately not modelled: spinning before sleeping, priority inheritance, the unfair
wake-up order of real futexes.
"""
from __future__ import annotations

from collections import deque
from typing import Any

from .kernel import Event, Simulator, SimulationError


class Semaphore:
    """Counting semaphore with FIFO waiters. ``yield sem.acquire()`` then ``sem.release()``."""

    __slots__ = ("sim", "name", "capacity", "available", "_waiters",
                 "acquisitions", "contended", "wait_ns_total")

    def __init__(self, sim: Simulator, capacity: int, name: str = "") -> None:
        if capacity < 1:
            raise ValueError(f"semaphore {name!r}: capacity must be >= 1, got {capacity}")
        self.sim = sim
        self.name = name
        self.capacity = capacity
        self.available = capacity
        self._waiters: deque[tuple[Event, int]] = deque()
        self.acquisitions = 0
        self.contended = 0
        self.wait_ns_total = 0

    def acquire(self) -> Event:
        ev = Event(self.sim)
        self.acquisitions += 1
        if self.available > 0 and not self._waiters:
            self.available -= 1
            ev.succeed()
        else:
            self.contended += 1
            self._waiters.append((ev, self.sim.now_ns))
        return ev

    def release(self) -> None:
        if self._waiters:
            ev, since = self._waiters.popleft()
            self.wait_ns_total += self.sim.now_ns - since
            ev.succeed()  # the permit passes straight to the next waiter
        else:
            if self.available >= self.capacity:
                raise SimulationError(f"semaphore {self.name!r} released more than acquired")
            self.available += 1

    @property
    def waiting(self) -> int:
        return len(self._waiters)


class Mutex(Semaphore):
    """A fair (FIFO) mutex, e.g. MySQL's ``prepare_commit_mutex``."""

    __slots__ = ()

    def __init__(self, sim: Simulator, name: str = "") -> None:
        super().__init__(sim, 1, name)

    @property
    def locked(self) -> bool:
        return self.available == 0


class Condition:
    """Broadcast wake-up: ``yield cond.wait()``; ``cond.notify_all(value)`` wakes every waiter."""

    __slots__ = ("sim", "_event")

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self._event = Event(sim)

    def wait(self) -> Event:
        return self._event

    def notify_all(self, value: Any = None) -> None:
        ev, self._event = self._event, Event(self.sim)
        ev.succeed(value)


class BoundedQueue:
    """FIFO of items with a capacity; ``put`` blocks when full, ``get`` when empty."""

    __slots__ = ("sim", "capacity", "items", "_getters", "_putters")

    def __init__(self, sim: Simulator, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"queue capacity must be >= 1, got {capacity}")
        self.sim = sim
        self.capacity = capacity
        self.items: deque = deque()
        self._getters: deque[Event] = deque()
        self._putters: deque[tuple[Event, Any]] = deque()

    def put(self, item: Any) -> Event:
        ev = Event(self.sim)
        if self._getters:
            self._getters.popleft().succeed(item)
            ev.succeed()
        elif len(self.items) < self.capacity:
            self.items.append(item)
            ev.succeed()
        else:
            self._putters.append((ev, item))
        return ev

    def get(self) -> Event:
        ev = Event(self.sim)
        if self.items:
            ev.succeed(self.items.popleft())
            if self._putters:
                put_ev, item = self._putters.popleft()
                self.items.append(item)
                put_ev.succeed()
        else:
            self._getters.append(ev)
        return ev

    def __len__(self) -> int:
        return len(self.items)
