"""Row locks (``lock0lock.cc``): exclusive record locks held to commit, waiters queued
per record, deadlock detection.

- A change (update, delete, insert) X-locks its row, keyed (table, primary key); the
  lock is held until the transaction commits (``lock_release``), then granted to the
  first waiter (FIFO, ``lock_grant``).
- A transaction that finds the row locked by another waits until it is granted
  (``lock_wait_suspend_thread``): ``Innodb_row_lock_waits``, ``Innodb_row_lock_time``
  (ms), ``Innodb_row_lock_current_waits``.
- Before waiting, the waits-for chain is followed (``lock_deadlock_check_and_resolve``;
  exclusive locks only, so the graph is a chain): if it comes back to the requester,
  the requester is the victim (``Innodb_deadlocks``): ``Deadlock`` is raised, the
  caller rolls the transaction back (``release_all``) and its client retries.

Deliberately not modelled: shared locks (consistent reads take none), gap and
next-key locks, lock-wait timeout (``innodb_lock_wait_timeout``), choosing the
lighter transaction as the victim.
"""
from __future__ import annotations

from collections import deque

from ....sim import Event


class Deadlock(Exception):
    """The requesting transaction was chosen as the deadlock victim."""


class LockTable:
    def __init__(self, sim) -> None:
        self.sim = sim
        self.holder: dict = {}            # row -> trx
        self.queue: dict = {}             # row -> deque[(trx, Event)]
        self.waits = 0
        self.wait_ns = 0
        self.current_waits = 0
        self.deadlocks = 0
        self.max_wait_ns = 0

    def lock(self, trx, row):
        """Generator: X-lock ``row`` for ``trx`` (a ``ServerTrx``)."""
        h = self.holder.get(row)
        if h is None:
            self.holder[row] = trx
            trx.locks.append(row)
            return
        if h is trx:
            return
        # waits-for chain: row's holder -> the row it waits for -> its holder ...
        seen = 0
        while h is not None and seen < 10_000:
            if h is trx:
                self.deadlocks += 1
                raise Deadlock()
            w = h.waiting_for
            h = self.holder.get(w) if w is not None else None
            seen += 1
        ev = Event(self.sim)
        self.queue.setdefault(row, deque()).append((trx, ev))
        trx.waiting_for = row
        self.waits += 1
        self.current_waits += 1
        t0 = self.sim.now_ns
        conc = trx.conc
        if conc is not None:          # lock_wait_suspend_thread: leave InnoDB meanwhile
            conc.release()
        yield ev
        if conc is not None:
            conc.force_acquire()
        waited = self.sim.now_ns - t0
        self.wait_ns += waited
        self.max_wait_ns = max(self.max_wait_ns, waited)
        self.current_waits -= 1
        trx.waiting_for = None

    def release_all(self, trx) -> None:
        """``lock_release``: every lock of ``trx``, each granted to its first waiter."""
        for row in trx.locks:
            q = self.queue.get(row)
            if q:
                nxt, ev = q.popleft()
                if not q:
                    del self.queue[row]
                self.holder[row] = nxt
                nxt.locks.append(row)
                ev.succeed()
            else:
                del self.holder[row]
        trx.locks = []

    def stats(self) -> dict:
        return {"row_lock_waits": self.waits, "row_lock_time_ms": self.wait_ns / 1e6,
                "row_lock_time_max_ms": self.max_wait_ns / 1e6,
                "row_lock_current_waits": self.current_waits, "deadlocks": self.deadlocks}
