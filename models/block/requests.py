"""Request allocation of the legacy request queue (``get_request`` /
``freed_request`` / ``ioc_batching`` of Linux 2.6-3.x; ``BlockQueue`` in ``base.py``
is built on it, blk-mq's tags in ``mq/queue.py`` replace parts of it).

- **nr_requests** (``get_request`` / ``freed_request``): each request is allocated on
  submission and freed at completion, from one of two request lists of ``nr_requests``
  each (``request_list.count[2]``): reads and writes up to 2.6.29, sync (reads,
  O_DIRECT and fsync writes, flushes) and async (background writeback) from 2.6.30
  (``BlockConfig.request_lists``). When its list is full the submitter sleeps
  (``submit`` returns an ``Event`` that fires once all of its bios are queued) on that
  list's wait queue, FIFO; a full write list does not hold a reader back.
  **Batching** (``ioc_set_batching`` / ``ioc_batching``): the thread whose request
  fills a list (``count + 1 >= nr_requests``) - or, once full, the sleeper woken by a
  freed request - becomes a "batcher": for ``BLK_BATCH_REQ`` (32, ``q->nr_batching``)
  requests or ``BLK_BATCH_TIME`` (20 ms) it allocates past the full list, up to 3/2
  ``nr_requests`` ("prevent huge request allocations"); the list stays full - and its
  sleepers asleep - until it is back below ``nr_requests``.
- **Congestion**: the queue is write-congested while at least ``nr_requests -
  nr_requests/8 + 1`` requests of the write (2.6.30+: async) list are allocated
  (``blk_queue_congestion_threshold``); background writeback backs off from a
  congested queue (``models/fs/writeback.py``) instead of sleeping in it.

- **The scheduler's say** (``elv_may_queue``): cfq lets the thread it is idling for
  allocate one request a slice past a full list (``ELV_MQUEUE_MUST``), and past the
  sleepers.

Deliberately not modelled: the congestion-off hysteresis. A thread's batching state is
keyed by its ``issuer`` (its ``io_context``).
"""
from __future__ import annotations

from collections import deque

from ..device.request import READ, WRITE, IORequest
from ..sim import Event

BLK_BATCH_REQ = 32                  # q->nr_batching
BLK_BATCH_TIME_NS = 20_000_000      # HZ / 50


class _Call:
    """One submission call whose submitter sleeps until all its bios are queued: it
    waits in the queue of the request list its next bio needs (``bios[0]``), as the
    thread sleeps on that list's wait queue before it submits the rest."""

    __slots__ = ("bios", "event")

    def __init__(self, bio: IORequest, event: Event) -> None:
        self.bios = deque((bio,))
        self.event = event


class RequestLists:
    """The request lists of a queue. State (``BlockQueue.__init__``): ``nr_requests``,
    ``allocated``, ``sync_lists``, ``rl_count`` / ``rl_full`` / ``waiting`` per list,
    ``_batch``; it places a woken sleeper's bios with the queue's ``_place`` and runs
    it with ``_run_queue``."""

    def request_list(self, op: int, sync: bool) -> int:
        """The request list a bio of ``op`` (``sync``) takes its request from: 0 reads
        (2.6.30+: sync), 1 writes (async)."""
        return 0 if op == READ or (self.sync_lists and sync) else 1

    def rl_of(self, r: IORequest) -> int:
        return self.request_list(r.op, r.sync)

    def requests_held(self, issuer: int = 0, op: int = WRITE, sync: bool = True) -> int:
        """Requests allocated from the pool a bio (``op``, ``sync``) of thread
        ``issuer`` would take one from (its request list; blk-mq: its hardware
        context's tags)."""
        return self.rl_count[self.request_list(op, sync)]

    def congested(self) -> bool:
        """``bdi_write_congested``: too many requests of the write (async) list
        allocated to take more without sleeping for one."""
        n = self.nr_requests
        return self.rl_count[1] >= n - n // 8 + 1 or bool(self.waiting[1])

    def _waiters(self, bio: IORequest) -> deque:
        """The submitters sleeping for the request ``bio`` would need (its request
        list's; blk-mq: its hardware context's)."""
        return self.waiting[self.rl_of(bio)]

    def _batching(self, issuer: int) -> bool:
        """``ioc_batching``: the thread may allocate past a full list."""
        b = self._batch.get(issuer)
        return b is not None and (b[0] == BLK_BATCH_REQ or (
            b[0] > 0 and self.sim.now_ns < b[1] + BLK_BATCH_TIME_NS))

    def _get_request_fails(self, bio: IORequest, must: bool = False) -> bool:
        """``get_request``'s verdict: no request for ``bio`` now (its list full and the
        thread no batcher nor ``must`` - the scheduler's ``ELV_MQUEUE_MUST`` -, or 3/2
        ``nr_requests`` allocated). Else the request is counted against the thread's
        batch where the list is full."""
        c = self.rl_of(bio)
        count, nr = self.rl_count[c], self.nr_requests
        batcher = False
        if count + 1 >= nr:
            issuer = bio.issuer
            if not self.rl_full[c]:
                if not self._batching(issuer):              # ioc_set_batching
                    self._batch[issuer] = [BLK_BATCH_REQ, self.sim.now_ns]
                self.rl_full[c] = True
            elif not must and not self._batching(issuer):
                return True
            batcher = self._batching(issuer)
        if count >= 3 * nr // 2:
            return True
        if batcher:
            self._batch[bio.issuer][0] -= 1
        return False

    def _wake_sleepers_of(self, freed: IORequest) -> None:
        """A request freed outside a completion - absorbed by a merge
        (``attempt_merge`` -> ``__blk_put_request`` -> ``freed_request``) - wakes the
        sleepers of its list as a completion's does, once the list is no longer full.
        They run after the submission call that merged (an event now): the submitter
        holds the queue until its call ends."""
        if self._waiters(freed) and self._wakes(freed):
            self.sim.at(self.sim.now_ns, self._admit_woken, freed)

    def _admit_woken(self, freed: IORequest) -> None:
        waiting = self._waiters(freed)
        if waiting and self._wakes(freed):
            self._admit_waiters(waiting)
            if self.dispatch_list or self.sched.count:
                self._run_queue()

    def _wakes(self, freed: IORequest) -> bool:
        """``__freed_request`` wakes a sleeper only once the list is below
        ``nr_requests`` again."""
        return not self.rl_full[self.rl_of(freed)]

    def _freed(self, req: IORequest) -> None:
        """``freed_request``: ``req``'s request goes back to its list, which is no
        longer full once below ``nr_requests``."""
        self.allocated -= 1
        c = self.rl_of(req)
        self.rl_count[c] -= 1
        if self.rl_count[c] + 1 <= self.nr_requests:
            self.rl_full[c] = False

    def _admit_waiters(self, waiting: deque) -> None:
        """Give the sleepers of ``waiting`` requests, first come first served; a call
        whose next bio needs the other list goes to sleep on that one's queue."""
        while waiting:
            call = waiting[0]
            bios = call.bios
            while bios:
                bio = bios[0]
                other = self._waiters(bio)
                if other is not waiting:
                    waiting.popleft()
                    other.append(call)
                    if other[0] is call:
                        self._admit_waiters(other)
                    break
                if not self._place(bio, None):
                    return
                bios.popleft()
            else:
                waiting.popleft()
                call.event.succeed()
