"""The flush machinery of a request queue (``block/blk-flush.c``, 2.6.37+): FLUSH
requests and FUA writes past the scheduler.

FLUSH requests and FUA writes bypass the scheduler on the dispatch list and are
dispatched first (what a FUA write becomes: ``fua.py``); on a device whose write cache
is off (``Device.write_cache_mode`` "write through") a FLUSH is completed at once
without a request, as Linux does (nothing in iostat's f/s). With ``flush_merging``
(Linux 2.6.37+, blk-flush's ``blk_kick_flush``) one FLUSH of a flush queue is at the
device at a time and a FLUSH asked while one runs or waits joins the waiting one: one
device FLUSH (one in f/s) completes them all. A joining FLUSH takes no request of its
own here (Linux allocates one for each and frees them together: only a queue out of
requests would tell). The legacy queue has one flush queue; blk-mq one per hardware
context (``mq/queue.py`` overrides ``_flush_queue``).
"""
from __future__ import annotations

from ..device.request import FLUSH, IORequest


class BlkFlush:
    """The dispatch list (``dispatch_list``) and FLUSHes at the device (``_flushing``)
    of a queue."""

    def _flush_not_sent(self, bio: IORequest, now: int) -> None:
        """A cache FLUSH for a device without a write cache (``write_through``): nothing
        to empty, the kernel completes it without a request (not in iostat)."""
        bio.submit_ns = now
        self.sim.at(now, self._end_unsent, bio)

    @staticmethod
    def _end_unsent(bio: IORequest) -> None:
        bio.done_ns = bio.submit_ns
        if bio.on_done is not None:
            bio.on_done(bio)

    def _bypass(self, req: IORequest) -> None:
        """``blk_insert_flush``: a write of the flush machinery goes past the scheduler
        to the dispatch list - a FUA write (its policy only the data) at the tail, the
        write of an emulated FUA (its sequence's data step, ``blk_flush_complete_seq``)
        at the head."""
        if req.fua:
            self.dispatch_list.append(req)
        else:
            self.dispatch_list.appendleft(req)

    def post_flush(self, flush: IORequest) -> None:
        """The post-flush of an emulated FUA write, sent from that write's completion
        (``models/block/fua.py``): it takes the request the write freed, ahead of the
        sleepers (blk-flush lends the flush request the data request's tag); where that
        request is gone (blk-mq's completion cost ran first) it is submitted as any."""
        flush.submit_ns = self.sim.now_ns
        if self._place(flush, None):
            self._run_queue()
        else:
            self.submit(flush)

    def _flush_queue(self, r: IORequest) -> int:
        """The flush queue of a FLUSH: the legacy queue has one."""
        return 0

    def _join_flush(self, bio: IORequest) -> bool:
        """``blk_insert_flush`` / ``blk_kick_flush``: a FLUSH of a flush queue whose FLUSH
        still waits to be issued is served by that one."""
        q = self._flush_queue(bio)
        for pending in self.dispatch_list:
            if pending.op == FLUSH and self._flush_queue(pending) == q:
                pending.parts.append(bio)
                return True
        return False

    def _next_dispatch(self) -> IORequest | None:
        """The next request of the dispatch list: the first, or with ``flush_merging``
        the first that is a write or a FLUSH whose flush queue has none at the device
        (None: only FLUSHes that wait)."""
        lst = self.dispatch_list
        if not self.flush_merging:
            return lst.popleft()
        for req in lst:
            if req.op != FLUSH:
                lst.remove(req)
                return req
            q = self._flush_queue(req)
            if q not in self._flushing:
                lst.remove(req)
                self._flushing.add(q)
                return req
        return None

    def _flush_done(self, req: IORequest) -> None:
        if req.op == FLUSH:
            self._flushing.discard(self._flush_queue(req))
