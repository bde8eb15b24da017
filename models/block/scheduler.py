"""I/O scheduler base: holds queued (not yet dispatched) requests and the merge hashes.

As in Linux's elevator core, every scheduler can back-merge a bio into a queued request
that ends where the bio starts (a hash keyed by end offset) and, when the policy allows,
front-merge into one that starts where the bio ends. A policy decides only the dispatch
order (``_add`` / ``_pop``); the base keeps the hashes consistent. A hash key is one
int, ``offset_bytes << 2 | op`` (``merge_key``).
"""
from __future__ import annotations

from ..device.request import IORequest


def merge_key(op: int, offset_bytes: int) -> int:
    """The merge hashes' key of a request of ``op`` starting or ending at ``offset_bytes``."""
    return offset_bytes << 2 | op


class Scheduler:
    name = "base"
    front_merges = False
    passes_unchanged = False   # pass_through moves none of the policy's state
    # ``elv_may_queue``: a policy whose method returns True (``ELV_MQUEUE_MUST``) for a
    # bio lets its thread allocate a request past a full request list (cfq); None: the
    # policy has no say (``ELV_MQUEUE_MAY`` always)
    may_queue = None

    def __init__(self) -> None:
        self.by_end: dict[int, IORequest] = {}     # merge_key(op, end) -> request
        self.by_start: dict[int, IORequest] = {}   # merge_key(op, start) -> request
        self.count = 0

    def __len__(self) -> int:
        return self.count

    # -- merge lookup ----------------------------------------------------------------
    def allow_merge(self, req: IORequest, bio: IORequest) -> bool:
        """Policy veto on merging ``bio`` (or another request) into ``req``."""
        return True

    def back_merge_candidate(self, bio: IORequest) -> IORequest | None:
        req = self.by_end.get(bio.offset_bytes << 2 | bio.op)
        return req if req is not None and self.allow_merge(req, bio) else None

    def front_merge_candidate(self, bio: IORequest) -> IORequest | None:
        if not self.front_merges:
            return None
        req = self.by_start.get((bio.offset_bytes + bio.size_bytes) << 2 | bio.op)
        return req if req is not None and self.allow_merge(req, bio) else None

    def rehash(self, req: IORequest, old_start: int, old_end: int) -> None:
        """``req`` grew by a merge; move it in the hashes."""
        op = req.op
        key = old_end << 2 | op
        if self.by_end.get(key) is req:
            del self.by_end[key]
        key = old_start << 2 | op
        if self.by_start.get(key) is req:
            del self.by_start[key]
        self.by_end[(req.offset_bytes + req.size_bytes) << 2 | op] = req
        self.by_start[req.offset_bytes << 2 | op] = req

    def _unhash(self, req: IORequest) -> None:
        key = (req.offset_bytes + req.size_bytes) << 2 | req.op
        if self.by_end.get(key) is req:
            del self.by_end[key]
        key = req.offset_bytes << 2 | req.op
        if self.by_start.get(key) is req:
            del self.by_start[key]

    # -- queue -------------------------------------------------------------------------
    def add(self, req: IORequest, now_ns: int) -> None:
        self.count += 1
        self.by_end[(req.offset_bytes + req.size_bytes) << 2 | req.op] = req
        self.by_start[req.offset_bytes << 2 | req.op] = req
        self._add(req, now_ns)

    def dispatch(self, now_ns: int) -> IORequest | None:
        if not self.count:
            return None
        req = self._pop(now_ns)
        self.count -= 1
        self._unhash(req)
        return req

    def pass_through(self, req: IORequest, now_ns: int) -> IORequest:
        """``add`` then ``dispatch`` with nothing else queued: the request itself comes
        back, and the policy's state moves as those two calls move it."""
        self.add(req, now_ns)
        return self.dispatch(now_ns)

    def merged_requests(self, req: IORequest, absorbed: IORequest) -> None:
        """``elevator_merge_req_fn``: queued ``req`` grew to absorb queued ``absorbed``
        (removed next, by ``remove_merged``). Nothing to do by default (noop: the
        survivor keeps its place)."""

    def remove_merged(self, req: IORequest) -> None:
        """``req`` was absorbed into another queued request: drop it from the queue."""
        self.count -= 1
        self._unhash(req)
        self._remove(req)

    # -- policy hooks ------------------------------------------------------------------
    def _add(self, req: IORequest, now_ns: int) -> None:
        raise NotImplementedError

    def _pop(self, now_ns: int) -> IORequest:
        raise NotImplementedError

    def _remove(self, req: IORequest) -> None:
        raise NotImplementedError
