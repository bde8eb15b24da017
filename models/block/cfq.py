"""cfq (simplified): per-thread sync queues and a shared async queue served round-robin
in time slices (Linux ``cfq``).

Modelled: every submitting thread (``IORequest.issuer``) gets its own queue of sync
requests (reads, O_DIRECT and fsync-driven writes); async (writeback) writes share one
queue. The active queue is served in sector order for ``slice_sync_ms`` (sync) or
``slice_async_ms`` (async) or until it empties, then the next busy queue takes over;
sync queues go before the async one. Requests of different threads are never merged.

Deliberately not modelled: slice idling (``slice_idle``), I/O priorities and groups,
the ``quantum`` limit on in-flight requests from one queue, seeky-queue detection.
"""
from __future__ import annotations

from collections import OrderedDict

from ..device.request import READ, IORequest
from .config import BlockConfig
from .scheduler import Scheduler
from .sorted_queue import SortedQueue

ASYNC = ("async",)


class CFQ(Scheduler):
    name = "cfq"
    front_merges = True

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__()
        self.slice_ns = {True: int(cfg.slice_sync_ms * 1e6), False: int(cfg.slice_async_ms * 1e6)}
        self.queues: "OrderedDict[tuple, SortedQueue]" = OrderedDict()
        self.active: tuple | None = None
        self.slice_end_ns = 0
        self.last_key: int | None = None   # sort key of the last dispatched

    @staticmethod
    def _qkey(req: IORequest) -> tuple:
        return ("sync", req.issuer) if (req.sync or req.op == READ) else ASYNC

    def allow_merge(self, req: IORequest, bio: IORequest) -> bool:
        return self._qkey(req) == self._qkey(bio)

    def _add(self, req: IORequest, now_ns: int) -> None:
        key = self._qkey(req)
        q = self.queues.get(key)
        if q is None:
            q = self.queues[key] = SortedQueue()
        q.add(req)

    def _remove(self, req: IORequest) -> None:
        self.queues[self._qkey(req)].remove(req)

    def _select(self, now_ns: int) -> tuple:
        act = self.active
        if act is not None and len(self.queues.get(act, ())) and now_ns < self.slice_end_ns:
            return act
        # rotate: the expired active queue goes to the back of the service order
        if act is not None and act in self.queues:
            self.queues.move_to_end(act)
        busy = [k for k, q in self.queues.items() if len(q)]
        sync = [k for k in busy if k is not ASYNC and k != ASYNC]
        key = sync[0] if sync else busy[0]
        self.active = key
        self.slice_end_ns = now_ns + self.slice_ns[key != ASYNC]
        self.last_key = None
        return key

    def _pop(self, now_ns: int) -> IORequest:
        key = self._select(now_ns)
        q = self.queues[key]
        req = q.next_after(self.last_key) or q.oldest()
        self.last_key = q.remove(req)
        return req
