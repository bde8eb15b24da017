"""deadline: sector-sorted batches with per-request expiry (Linux ``deadline``).

Follows ``deadline_dispatch_requests`` (block/deadline-iosched.c) in its two forms.
Requests are kept per direction in sector order (the rb-tree, keyed on the start
sector: a front merge moves its request) and in FIFO order with a deadline
(``read_expire_ms``, ``write_expire_ms``). Dispatching a request remembers the one
after it in sector order in the same direction (``next_rq``, forgetting the other
direction's) and where it ended (``last_sector``). A request added later between the
two is not seen until the next sweep, as in the kernel, which only updates ``next_rq``
when that request itself leaves the queue.

- Up to 2.6.27 (``deadline_contiguous_batches``; the 2.6.18 of RHEL 5): a batch goes on
  with ``next_rq`` only while it starts where the last request ended - the first
  request that does not ends the batch. Outside a batch every dispatch chooses a
  direction: reads, unless writes are waiting and have been passed over
  ``writes_starved`` times (counted at each such choice). In the chosen direction an
  expired FIFO head goes first (a new batch); else ``next_rq``, if that direction was
  the last one served (no new batch: a non-contiguous one goes request by request, each
  choosing again); else the lowest sector - after the other direction, the sweep
  starts again from the start of the disk (a one-way elevator).
- From 2.6.28 (commits 6f5d8aa6 "Fix batching fairness" and 63de428b "allow
  non-sequential batching"; mq-deadline is this one): a batch is ``fifo_batch``
  requests following ``next_rq`` whether contiguous or not; a new batch starts at
  ``next_rq`` in the same direction unless its FIFO head has expired, else at the
  FIFO head (the oldest request), not at the lowest sector.

Front merges are allowed (``front_merges``).

When two queued requests merge, the survivor takes the absorbed one's expiry and FIFO
place if that one expires first (``deadline_merged_requests``).

Not modelled: a request queued at the same start sector as another moves that one to
the dispatch list at once (2.6.18 ``deadline_add_drq_rb``; here the two keep arrival
order); request priorities; zoned devices.
"""
from __future__ import annotations

from ..device.request import READ, WRITE, IORequest
from .config import BlockConfig
from .scheduler import Scheduler
from .sorted_queue import SortedQueue


class Deadline(Scheduler):
    name = "deadline"

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__()
        self.front_merges = cfg.front_merges
        self.expire_ns = {READ: int(cfg.read_expire_ms * 1e6), WRITE: int(cfg.write_expire_ms * 1e6)}
        self.fifo_batch = cfg.fifo_batch
        self.writes_starved = cfg.writes_starved
        self.contiguous = cfg.contiguous_batches
        # other ops (discard) are treated as writes
        self.queues = {READ: SortedQueue(), WRITE: SortedQueue()}
        self.batching = 0
        self.starved = 0
        self.last_end = -1          # last_sector, in bytes
        self.next_rq: dict[int, IORequest | None] = {READ: None, WRITE: None}

    @staticmethod
    def _dir(req: IORequest) -> int:
        return READ if req.op == READ else WRITE

    def _add(self, req: IORequest, now_ns: int) -> None:
        d = self._dir(req)
        req.deadline_ns = now_ns + self.expire_ns[d]
        self.queues[d].add(req)

    def _remove(self, req: IORequest) -> None:
        d = self._dir(req)
        q = self.queues[d]
        if self.next_rq[d] is req:
            self.next_rq[d] = q.next_after(req.sort_key)
        q.remove(req)

    def rehash(self, req: IORequest, old_start: int, old_end: int) -> None:
        super().rehash(req, old_start, old_end)
        if req.offset_bytes != old_start:        # a front merge: a new rb-tree key
            d = self._dir(req)
            q = self.queues[d]
            if self.contiguous and self.next_rq[d] is req:
                # 2.6.18 takes it out through deadline_del_drq_rb, which moves next_rq on
                self.next_rq[d] = q.next_after(req.sort_key)
            q.rekey(req)

    def merged_requests(self, req: IORequest, absorbed: IORequest) -> None:
        """``deadline_merged_requests``: if the absorbed request expires first, the
        survivor takes its expiry and its FIFO place."""
        if absorbed.deadline_ns < req.deadline_ns:
            self.queues[self._dir(req)].take_fifo_place(req, absorbed)
            req.deadline_ns = absorbed.deadline_ns

    def _expired(self, d: int, now_ns: int) -> bool:
        oldest = self.queues[d].oldest()
        return oldest is not None and oldest.deadline_ns <= now_ns

    def _pop(self, now_ns: int) -> IORequest:
        q, nxt = self.queues, self.next_rq
        req = nxt[WRITE] if nxt[WRITE] is not None else nxt[READ]
        if req is not None:
            if self.contiguous and req.offset_bytes != self.last_end:
                self.batching += self.fifo_batch     # a non-contiguous request ends it
            if self.batching < self.fifo_batch:
                return self._move(req)
        # not in a batch: choose a direction
        if len(q[READ]):
            if len(q[WRITE]) and self.starved >= self.writes_starved:
                d = WRITE
            else:
                d = READ
                self.starved += 1 if len(q[WRITE]) else 0
        else:
            d = WRITE
        if d == WRITE:
            self.starved = 0
        if self._expired(d, now_ns):
            self.batching = 0
            req = q[d].oldest()
        elif nxt[d] is not None:
            req = nxt[d]
            if not self.contiguous:
                self.batching = 0
        else:
            self.batching = 0
            req = q[d].next_after(None) if self.contiguous else q[d].oldest()
        return self._move(req)

    def _move(self, req: IORequest) -> IORequest:
        """``deadline_move_request``: dispatch ``req``, remember the next in its
        direction and where it ends."""
        d = self._dir(req)
        q = self.queues[d]
        self.next_rq[READ] = self.next_rq[WRITE] = None
        self.next_rq[d] = q.next_after(req.sort_key)
        self.last_end = req.offset_bytes + req.size_bytes
        q.remove(req)
        self.batching += 1
        return req
