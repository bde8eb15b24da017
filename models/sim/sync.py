"""What simulated threads wait on: mutexes, semaphores, conditions, bounded queues.

All waiters are served strictly FIFO (a fair lock, like a ticket lock), which keeps runs
deterministic and makes queueing at a lock visible in the statistics each primitive
keeps (acquisitions, contended acquisitions, total wait time). Two exceptions model
InnoDB's own latches (``sync0sync`` / ``sync0rw``):

- ``SpinMutex``: a waiter spins for ``spin_ns`` before it sleeps; a release hands the
  lock to the longest-waiting thread that is *still spinning* (it sees the lock word
  free at its next poll) in preference to sleepers. When nobody spins, the lock is
  freed and the oldest sleeper woken (``os_event_set``); it pays its switch-in *not*
  holding the lock and then tries again, so a thread that arrives meanwhile takes it
  (``models.engine.cpu.CPU.lock``).
- ``Mutex(barging=True)``: the same without the spinning preference - glibc's
  ``pthread_mutex_unlock`` frees the lock and wakes one sleeper, which races for it
  (MySQL's ``prepare_commit_mutex``, ``LOCK_log``). A lock handed from sleeper to
  sleeper would sit idle for every wake-up; a barging one only when nobody else asks.
- ``RwLatch``: shared (S) / exclusive (X) latch. Requests are granted in FIFO order;
  an X request waits until every holder has left, and while it waits no new S request
  is granted (InnoDB sets ``RW_LOCK_WAIT_EX`` / the writer-waiting flag, so readers
  cannot starve a writer). A release grants the head of the queue and, if the head is
  S, every S request after it up to the next X.

Deliberately not modelled: priority inheritance, the unfair wake-up order of real
futexes (a thread woken by a broadcast races the others: here the oldest wins), the
CPU the losers of such a race burn going back to sleep, glibc's adaptive spinning of
``PTHREAD_MUTEX_ADAPTIVE_NP`` (a few microseconds of trylock polling before the sleep).
"""
from __future__ import annotations

from collections import deque
from typing import Any

from .kernel import Event, Simulator, SimulationError


def fired(sim: Simulator, value: Any = None) -> Event:
    """An event that has already fired with ``value`` (None or True): what an
    uncontended acquire returns. One shared instance per simulator and value - a fired
    event never changes, so nobody can tell it from a fresh one."""
    cache = sim.fired_events
    ev = cache.get(value)
    if ev is None:
        ev = cache[value] = Event(sim)
        ev.succeed(value)
    return ev


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
        self.acquisitions += 1
        if self.available > 0 and not self._waiters:
            self.available -= 1
            return fired(self.sim)
        ev = Event(self.sim)
        self.contended += 1
        self._waiters.append((ev, self.sim.now_ns))
        return ev

    def force_acquire(self) -> None:
        """Take a permit without waiting, over the capacity if need be (InnoDB's
        ``srv_conc_force_enter_innodb``); releases then free no room until the count
        is back under the capacity."""
        self.acquisitions += 1
        self.available -= 1

    def release(self) -> None:
        if self._waiters and self.available >= 0:
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
    """A mutex: fair (FIFO hand-off) by default; ``barging=True`` is a glibc
    ``pthread_mutex_t`` such as MySQL's ``prepare_commit_mutex`` or ``LOCK_log``: a
    release frees the lock and wakes the oldest sleeper (its event fires with
    ``False``), which must retry (``models.engine.cpu.CPU.lock``); whoever asks first
    meanwhile gets it. A grant fires with ``True``."""

    __slots__ = ("barging",)

    def __init__(self, sim: Simulator, name: str = "", barging: bool = False) -> None:
        super().__init__(sim, 1, name)
        self.barging = barging

    def acquire(self, retry: bool = False) -> Event:
        if not self.barging:
            return super().acquire()
        if not retry:
            self.acquisitions += 1
        if self.available > 0:
            self.available -= 1
            return fired(self.sim, True)
        ev = Event(self.sim)
        if not retry:
            self.contended += 1
        self._waiters.append((ev, self.sim.now_ns))
        return ev

    def lock(self):
        """Generator: acquire, retrying after a barging wake-up (no CPU cost; the engine
        uses ``CPU.lock``, which charges the spinning and the wake-ups)."""
        ev = self.acquire()
        while True:
            got = ev.value if ev.triggered else (yield ev)
            if got is not False:
                return
            ev = self.acquire(retry=True)

    def release(self) -> None:
        if self.barging and self._waiters:
            ev, since = self._waiters.popleft()
            self.wait_ns_total += self.sim.now_ns - since
            self.available += 1
            ev.succeed(False)
            return
        super().release()

    @property
    def locked(self) -> bool:
        return self.available == 0


class SpinMutex(Mutex):
    """An InnoDB mutex (``ib_mutex_t``): a release prefers a waiter that has waited at
    most ``spin_ns`` (still in ``mutex_spin_wait``'s loop: it is granted the lock);
    otherwise it frees the lock and wakes the oldest sleeper, which retries (barging,
    as ``mutex_exit`` resets the lock word before ``os_event_set``)."""

    __slots__ = ("spin_ns",)

    def __init__(self, sim: Simulator, name: str = "", spin_ns: int = 0) -> None:
        super().__init__(sim, name, barging=True)
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
                    ev.succeed(True)
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
        self.acquisitions += 1
        if exclusive:
            self.x_acquisitions += 1
            free = not self.writer and self.readers == 0 and not self._waiters
        else:
            free = not self.writer and not self._waiters
        if free:
            self._take(exclusive)
            return fired(self.sim)
        ev = Event(self.sim)
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
