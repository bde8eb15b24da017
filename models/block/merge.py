"""Merging in the legacy request queue (``blk_queue_bio``'s ``attempt_plug_merge`` and
``elv_merge`` / ``attempt_back_merge``; blk-mq's queue reuses it).

A bio is first merged into a request of the caller's plug list, then into a queued (not
yet dispatched) request of the scheduler - back merges always, front merges where the
scheduler allows - as long as the result stays within ``max_sectors_kb``. A request
that grows to touch its neighbour absorbs it (its request is freed and may wake a
sleeper: ``requests.py``). Every bio merge counts in rrqm/s / wrqm/s. Dispatched
requests never grow.
"""
from __future__ import annotations

from ..device.request import IORequest
from .scheduler import merge_key


class Merging:
    """Merge lookups of a queue with ``sched``, ``max_bytes`` and ``counters``."""

    def _plug_merge(self, bio: IORequest, plug_list: list[IORequest]) -> bool:
        for req in reversed(plug_list):
            if req.op != bio.op or req.size_bytes + bio.size_bytes > self.max_bytes:
                continue
            if req.offset_bytes + req.size_bytes == bio.offset_bytes:
                req.size_bytes += bio.size_bytes
                req.parts.append(bio)
            elif bio.offset_bytes + bio.size_bytes == req.offset_bytes:
                req.offset_bytes = bio.offset_bytes
                req.size_bytes += bio.size_bytes
                req.parts.insert(0, bio)
            else:
                continue
            self.counters.merge(bio.op)
            return True
        return False

    def _elevator_merge(self, bio: IORequest) -> bool:
        sched, max_bytes = self.sched, self.max_bytes
        req = sched.back_merge_candidate(bio)
        if req is not None and req.size_bytes + bio.size_bytes <= max_bytes:
            old_start, old_end = req.offset_bytes, req.offset_bytes + req.size_bytes
            req.size_bytes += bio.size_bytes
            req.parts.append(bio)
            sched.rehash(req, old_start, old_end)
            self.counters.merge(bio.op)
            self._absorb_neighbour(req)
            return True
        req = sched.front_merge_candidate(bio)
        if req is not None and req.size_bytes + bio.size_bytes <= max_bytes:
            old_start, old_end = req.offset_bytes, req.offset_bytes + req.size_bytes
            req.offset_bytes = bio.offset_bytes
            req.size_bytes += bio.size_bytes
            req.parts.insert(0, bio)
            sched.rehash(req, old_start, old_end)
            self.counters.merge(bio.op)
            return True
        return False

    def _absorb_neighbour(self, req: IORequest) -> None:
        """After a back merge, ``req`` may now end where another queued request starts."""
        nxt = self.sched.by_start.get(merge_key(req.op, req.offset_bytes + req.size_bytes))
        if (nxt is None or nxt is req or req.size_bytes + nxt.size_bytes > self.max_bytes
                or not self.sched.allow_merge(req, nxt)):
            return
        self.sched.merged_requests(req, nxt)
        self.sched.remove_merged(nxt)
        old_start, old_end = req.offset_bytes, req.offset_bytes + req.size_bytes
        req.size_bytes += nxt.size_bytes
        req.parts.extend(nxt.parts)
        self.sched.rehash(req, old_start, old_end)
        self._freed(nxt)
        self.counters.absorbed(self.sim.now_ns)
        self._wake_sleepers_of(nxt)
