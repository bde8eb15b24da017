"""What simulated threads wait on: mutexes, semaphores, conditions, bounded queues.

All waiters are served strictly FIFO (a fair lock, like a ticket lock), which keeps runs
deterministic and makes queueing at a lock visible in the statistics each primitive
keeps (acquisitions, contended acquisitions, total wait time). Two exceptions model
InnoDB's own latches (``sync0sync`` / ``sync0rw``):

- ``SpinMutex``: a waiter spins for ``spin_ns`` before it sleeps; a release hands the
  lock to the longest-waiting thread that is *still spinning* (it sees the lock word
  free at its next poll) in preference to sleepers, which ``os_event_set`` must first
  wake (the woken thread then pays its switch-in holding the lock: see
  ``models.engine.cpu.CPU.spin_wait``). Only when nobody spins does the oldest sleeper
  get it.
- ``RwLatch``: shared (S) / exclusive (X) latch. Requests are granted in FIFO order;
  an X request waits until every holder has left, and while it waits no new S request
  is granted (InnoDB sets ``RW_LOCK_WAIT_EX`` / the writer-waiting flag, so readers
  cannot starve a writer). A release grants the head of the queue and, if the head is
  S, every S request after it up to the next X.

Deliberately not modelled: priority inheritance, the unfair wake-up order of real
futexes (a thread woken by a broadcast races the others: here the oldest wins), the
CPU the losers of such a race burn going back to sleep.
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


class SpinMutex(Mutex):
    """An InnoDB mutex (``ib_mutex_t``): FIFO among sleepers, but a release prefers a
    waiter that has waited at most ``spin_ns`` (still in ``mutex_spin_wait``'s loop)."""

    __slots__ = ("spin_ns",)

    def __init__(self, sim: Simulator, name: str = "", spin_ns: int = 0) -> None:
        super().__init__(sim, name)
        if spin_ns < 0:
            raise ValueError(f"mutex {name!r}: spin_ns must be >= 0, got {spin_ns}")
        self.spin_ns = spin_ns

    def release(self) -> None:
        waiters = self._waiters
        if waiters:
            now = self.sim.now_ns
            for i, (ev, since) in enumerate(waiters):
                if now - since <= self.spin_ns:     # still spinning: sees it free first
                    del waiters[i]
                    self.wait_ns_total += now - since
                    ev.succeed()
                    return
        super().release()


class RwLatch:
    """Shared / exclusive latch (``rw_lock_t``) with FIFO grants and writer preference:
    ``yield latch.s_lock()`` ... ``latch.s_unlock()``; ``x_lock`` / ``x_unlock`` alike."""

    __slots__ = ("sim", "name", "readers", "writer", "_waiters",
                 "acquisitions", "contended", "wait_ns_total", "x_acquisitions")

    def __init__(self, sim: Simulator, name: str = "") -> None:
        self.sim = sim
        self.name = name
        self.readers = 0
        self.writer = False
        self._waiters: deque[tuple[Event, bool, int]] = deque()   # (event, exclusive, since)
        self.acquisitions = 0
        self.x_acquisitions = 0
        self.contended = 0
        self.wait_ns_total = 0

    def _request(self, exclusive: bool) -> Event:
        ev = Event(self.sim)
        self.acquisitions += 1
        if exclusive:
            self.x_acquisitions += 1
            free = not self.writer and self.readers == 0 and not self._waiters
        else:
            free = not self.writer and not self._waiters
        if free:
            self._take(exclusive)
            ev.succeed()
        else:
            self.contended += 1
            self._waiters.append((ev, exclusive, self.sim.now_ns))
        return ev

    def _take(self, exclusive: bool) -> None:
        if exclusive:
            self.writer = True
        else:
            self.readers += 1

    def s_lock(self) -> Event:
        return self._request(False)

    def x_lock(self) -> Event:
        return self._request(True)

    def s_unlock(self) -> None:
        if self.readers <= 0:
            raise SimulationError(f"rw-latch {self.name!r}: s_unlock without an S holder")
        self.readers -= 1
        self._grant()

    def x_unlock(self) -> None:
        if not self.writer:
            raise SimulationError(f"rw-latch {self.name!r}: x_unlock without the X holder")
        self.writer = False
        self._grant()

    def _grant(self) -> None:
        waiters, now = self._waiters, self.sim.now_ns
        while waiters and not self.writer:
            ev, exclusive, since = waiters[0]
            if exclusive and self.readers:
                return
            waiters.popleft()
            self.wait_ns_total += now - since
            self._take(exclusive)
            ev.succeed()
            if exclusive:
                return

    @property
    def waiting(self) -> int:
        return len(self._waiters)


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
