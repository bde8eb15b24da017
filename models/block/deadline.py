"""deadline: sector-sorted batches with per-request expiry (Linux ``deadline``).

Follows ``deadline_dispatch_requests`` of Linux 2.6/3.x: requests are kept per
direction in sector order and in FIFO order with a deadline (``read_expire_ms``,
``write_expire_ms``). Dispatch continues in sector order within a batch of up to
``fifo_batch`` requests; a new batch prefers reads unless writes have been passed over
``writes_starved`` times; it starts at the oldest request when that one has expired or
the sorted order is exhausted, else at the next request in sector order (a one-way
elevator). Front merges are allowed (``front_merges``).

Not modelled: request priorities, the "batching" of zoned devices.
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
        # other ops (discard) are treated as writes
        self.queues = {READ: SortedQueue(), WRITE: SortedQueue()}
        self.batch_dir = READ
        self.batching = 0
        self.starved = 0
        self.last_key: dict[int, int | None] = {READ: None, WRITE: None}   # sort keys
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
        self.queues[d].remove(req)
        if self.next_rq[d] is req:
            self.next_rq[d] = None

    def _expired(self, d: int, now_ns: int) -> bool:
        oldest = self.queues[d].oldest()
        return oldest is not None and oldest.deadline_ns <= now_ns

    def _pop(self, now_ns: int) -> IORequest:
        q = self.queues
        # continue the current batch in sector order
        d = self.batch_dir
        nxt = q[d].next_after(self.last_key[d]) if self.last_key[d] is not None else None
        if nxt is not None and self.batching < self.fifo_batch:
            return self._take(d, nxt)
        # start a new batch: choose a direction
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
        nxt = q[d].next_after(self.last_key[d]) if self.last_key[d] is not None else None
        if self._expired(d, now_ns) or nxt is None:
            nxt = q[d].oldest()
        self.batch_dir = d
        self.batching = 0
        return self._take(d, nxt)

    def _take(self, d: int, req: IORequest) -> IORequest:
        self.last_key[d] = self.queues[d].remove(req)
        self.batching += 1
        return req
