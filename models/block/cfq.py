"""cfq (simplified): per-thread sync queues and a shared async queue served round-robin
in time slices, with 2.6.18's slice idling (Linux ``cfq``, ``block/cfq-iosched.c``).

Modelled: every submitting thread (``IORequest.issuer``) gets its own queue of sync
requests (reads, O_DIRECT and fsync-driven writes); async (writeback) writes share one
queue. The active queue is served for ``slice_sync_ms`` (sync) or
``slice_async_ms`` (async; the async queue also gives way after 16 requests,
``cfq_prio_to_maxrq`` at the default priority) or until it empties, then the next busy
queue takes over; sync queues go before the async one. Requests of different threads
are never merged.

Which request of the active queue goes next (``cfq_choose_req``, ``cfq_find_next_crq``,
``cfq_check_fifo``): each queue keeps its next request (``next_crq``), chosen between
two candidates by their distance from the end of the last request dispatched
(``last_sector``, over all queues): one ahead of the head at its distance, one behind
it within ``back_seek_max_kb`` at ``back_seek_penalty`` times its distance, one further
behind only if both are (then the lower). A request added to a queue becomes its
next if it is the better of the two; a dispatched request's neighbours in sector
order (the one after it, wrapping to the lowest, and the one before it) are the next
candidates. Once a slice, the queue's oldest request goes first if it has waited
longer than ``fifo_expire_sync_ms`` / ``fifo_expire_async_ms``.

Slice idling (``slice_idle_ms``, the sysfs ``slice_idle``; ``cfq_select_queue``,
``cfq_arm_slice_timer``, ``cfq_idle_slice_timer``): when the active sync queue has
nothing queued and its slice has time left, cfq dispatches nothing else and waits up
to ``slice_idle_ms`` for that thread's next request - 2 ms instead if the thread is
seeky (its mean seek distance over 64 MB, after 80 samples) - each dispatch attempt
meanwhile re-arming the wait; the thread's request ends the wait; the wait running out
expires the slice if another queue has requests (else it waits on). A queue idles only
while its idle window is open: a thread whose mean think time (the time from its last
completed request to its next one, capped at twice ``slice_idle_ms``) exceeds
``slice_idle_ms`` loses it, and so does every thread once the device has been seen
holding more than 4 requests at once (``hw_tag``: command queueing, after which 2.6.18
never idles again). The think-time and seek averages are the kernel's fixed-point
decaying ones (weight 7/8, "valid" after 80 samples).

``may_queue``: the thread cfq is idling for may allocate one request a slice past a
full request list (``ELV_MQUEUE_MUST``).

Deliberately not modelled: I/O priorities, classes and groups; preemption; the
``quantum`` of requests moved to the dispatch list per call (one at a time here, so
``last_sector`` is the end of the request itself, not of the dispatch list's tail);
a request queued at the sector of another moving that one to the dispatch list; the
busy_rr list of queues with requests in flight; the idling rules of later kernels
(non-rotational devices, the sync-noidle service tree).
"""
from __future__ import annotations

from collections import OrderedDict

from ..device.request import FLUSH, READ, IORequest
from .config import BlockConfig
from .scheduler import Scheduler
from .sorted_queue import SortedQueue

ASYNC = ("async",)
HW_TAG_DEPTH = 4            # more requests in the driver than this: command queueing
SEEKY_SECTORS = 131072      # CIC_SEEKY: mean seek distance over 64 MB
SEEKY_IDLE_NS = 2_000_000   # a seeky thread's idle: 2 jiffies at HZ=1000
ASYNC_SLICE_RQ = 16         # cfq_prio_to_maxrq(slice_async_rq 2, priority 4)


def _valid(samples: int) -> bool:
    return samples > 80                    # sample_valid


class _Ctx:
    """A thread's ``cfq_io_context``: think time and seek distance histories."""

    __slots__ = ("last_end_ns", "last_pos", "ttime_samples", "ttime_total", "ttime_mean",
                 "seek_samples", "seek_total", "seek_mean")

    def __init__(self, now_ns: int) -> None:
        self.last_end_ns = now_ns
        self.last_pos = 0
        self.ttime_samples = self.ttime_total = self.ttime_mean = 0
        self.seek_samples = self.seek_total = self.seek_mean = 0

    def note_request(self, req: IORequest, now_ns: int, cap_ns: int) -> None:
        """``cfq_update_io_thinktime`` and ``cfq_update_io_seektime``."""
        ttime = min(now_ns - self.last_end_ns, cap_ns)
        self.ttime_samples = (7 * self.ttime_samples + 256) // 8
        self.ttime_total = (7 * self.ttime_total + 256 * ttime) // 8
        self.ttime_mean = (self.ttime_total + 128) // self.ttime_samples
        sector = req.offset_bytes >> 9
        sdist = abs(sector - self.last_pos)
        cap = 2 * 1024 * 1024 if self.seek_samples <= 60 else 2 * 1024 * 64
        sdist = min(sdist, self.seek_mean * 4 + cap)
        self.seek_samples = (7 * self.seek_samples + 256) // 8
        self.seek_total = (7 * self.seek_total + 256 * sdist) // 8
        self.seek_mean = (self.seek_total + self.seek_samples // 2) // self.seek_samples
        self.last_pos = (req.offset_bytes + req.size_bytes) >> 9


class CFQ(Scheduler):
    name = "cfq"
    front_merges = True

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__()
        self.slice_ns = {True: int(cfg.slice_sync_ms * 1e6), False: int(cfg.slice_async_ms * 1e6)}
        self.queues: "OrderedDict[tuple, SortedQueue]" = OrderedDict()
        self.active: tuple | None = None
        self.slice_end_ns = 0
        self.last_end = 0                  # cfqd->last_sector, in bytes
        self.next_rq: dict[tuple, IORequest | None] = {}     # cfqq->next_crq
        self.back_max_bytes = cfg.back_seek_max_kb * 1024
        self.back_penalty = cfg.back_seek_penalty
        self.fifo_expire_ns = {True: int(cfg.fifo_expire_sync_ms * 1e6),
                               False: int(cfg.fifo_expire_async_ms * 1e6)}
        self.fifo_expired = False          # the active queue's FIFO served this slice
        # slice idling (dispatch / completed; bfq, built on this class, has its own)
        self.slice_idle_ns = int(cfg.slice_idle_ms * 1e6)
        self.ctx: dict[int, _Ctx] = {}
        self.idle_window: dict[tuple, bool] = {}
        self.in_driver = 0
        self.hw_tag = False
        self.must_dispatch = False
        self.idle_until_ns: int | None = None
        self.wake_ns: int | None = None    # when the queue must look again (idle end)
        self.expired = False
        self.dispatched_in_slice = 0
        self.idle_waits = 0
        self.must_alloc_slice = False      # the active queue's MUST of this slice is used

    @staticmethod
    def _qkey(req: IORequest) -> tuple:
        return ("sync", req.issuer) if (req.sync or req.op == READ) else ASYNC

    def allow_merge(self, req: IORequest, bio: IORequest) -> bool:
        return self._qkey(req) == self._qkey(bio)

    def _enqueue(self, req: IORequest, key: tuple) -> None:
        q = self.queues.get(key)
        if q is None:
            q = self.queues[key] = SortedQueue()
        q.add(req)

    def _add(self, req: IORequest, now_ns: int) -> None:
        key = self._qkey(req)
        if key not in self.idle_window:
            self.idle_window[key] = not self.hw_tag          # cfq_get_queue
        self._enqueue(req, key)
        self.next_rq[key] = self._choose(self.next_rq.get(key), req)
        if key == ASYNC:
            return
        ctx = self.ctx.get(req.issuer)
        if ctx is None:
            ctx = self.ctx[req.issuer] = _Ctx(now_ns)
        ctx.note_request(req, now_ns, 2 * self.slice_idle_ns)
        if not self.slice_idle_ns or self.hw_tag:            # cfq_update_idle_window
            self.idle_window[key] = False
        elif _valid(ctx.ttime_samples):
            self.idle_window[key] = ctx.ttime_mean <= self.slice_idle_ns
        if key == self.active and self.idle_until_ns is not None:
            self.idle_until_ns = self.wake_ns = None   # the awaited request: at once

    def _remove(self, req: IORequest) -> None:
        key = self._qkey(req)
        q = self.queues[key]
        if self.next_rq.get(key) is req:               # cfq_update_next_crq
            self.next_rq[key] = self._find_next(q, req)
        q.remove(req)

    def rehash(self, req: IORequest, old_start: int, old_end: int) -> None:
        """A front merge moved ``req``'s start: ``cfq_reposition_crq_rb`` takes it out
        of the sector order and puts it back (its queue's next request chosen again)."""
        super().rehash(req, old_start, old_end)
        if req.offset_bytes != old_start:
            key = self._qkey(req)
            q = self.queues[key]
            if self.next_rq.get(key) is req:
                self.next_rq[key] = self._find_next(q, req)
            q.rekey(req)
            self.next_rq[key] = self._choose(self.next_rq.get(key), req)

    # -- which request next ------------------------------------------------------------
    def _choose(self, r1: IORequest | None, r2: IORequest | None) -> IORequest | None:
        """``cfq_choose_req``: the better next request of two, from the head at
        ``last_end``: ahead at its distance, behind within ``back_seek_max`` at
        ``back_seek_penalty`` times it, further behind only if both are (the lower)."""
        if r1 is None or r1 is r2:
            return r2
        if r2 is None:
            return r1
        s1, s2 = r1.offset_bytes, r2.offset_bytes
        wrap1, d1 = self._seek_cost(s1)
        wrap2, d2 = self._seek_cost(s2)
        if wrap1 != wrap2:
            return r2 if wrap1 else r1
        if wrap1:                                   # both behind the head
            return r1 if s1 <= s2 else r2
        if d1 != d2:
            return r1 if d1 < d2 else r2
        return r1 if s1 >= s2 else r2

    def _seek_cost(self, start: int) -> tuple[bool, int]:
        """(behind the head beyond ``back_seek_max``, the cost of going to ``start``)."""
        last = self.last_end
        if start >= last:
            return False, start - last
        if start + self.back_max_bytes >= last:
            return False, (last - start) * self.back_penalty
        return True, 0

    def _find_next(self, q: SortedQueue, req: IORequest) -> IORequest | None:
        """``cfq_find_next_crq``: the next request once ``req`` (still queued) has
        gone - the one after it in sector order (wrapping to the lowest) or the one
        before it."""
        nxt = q.next_after(req.sort_key)
        if nxt is None:
            nxt = q.next_after(None)
            if nxt is req:
                nxt = None
        return self._choose(nxt, q.prev_before(req.sort_key))

    def _check_fifo(self, key: tuple, q: SortedQueue, now_ns: int) -> IORequest | None:
        """``cfq_check_fifo``: once a slice, the queue's oldest request if it waited
        longer than its FIFO expiry."""
        if self.fifo_expired:
            return None
        oldest = q.oldest()
        if oldest is not None and now_ns > oldest.queue_ns + self.fifo_expire_ns[key != ASYNC]:
            self.fifo_expired = True
            return oldest
        return None

    def merged_requests(self, req: IORequest, absorbed: IORequest) -> None:
        """``cfq_merged_requests``: the survivor moves to the absorbed request's FIFO
        place if that one came first (one queue: requests of one thread merge)."""
        if absorbed.fifo_key < req.fifo_key:
            self.queues[self._qkey(req)].take_fifo_place(req, absorbed)

    def may_queue(self, bio: IORequest) -> bool:
        """``cfq_may_queue`` (2.6.18): the thread of the queue cfq is idling for
        (``wait_request``) may allocate one request past a full request list once a
        slice (``ELV_MQUEUE_MUST``, then ``must_alloc_slice``) - else cfq would wait
        for a thread that sleeps for a request. Asked at every allocation, as
        ``get_request`` asks, so the first request of the awaited thread uses it."""
        if (self.idle_until_ns is not None and not self.must_alloc_slice
                and self._qkey(bio) == self.active):
            self.must_alloc_slice = True
            return True
        return False

    # -- idling ------------------------------------------------------------------------
    def _arm(self, key: tuple, now_ns: int) -> bool:
        """``cfq_arm_slice_timer``: wait for the active queue's thread, or not."""
        if not self.slice_idle_ns or not self.idle_window.get(key, False):
            return False
        ctx = self.ctx.get(key[1])
        sl = self.slice_idle_ns
        if ctx is not None and _valid(ctx.seek_samples) and ctx.seek_mean > SEEKY_SECTORS:
            sl = SEEKY_IDLE_NS
        self.must_dispatch = True
        self.idle_until_ns = self.wake_ns = now_ns + sl
        self.idle_waits += 1
        return True

    def _expire(self) -> None:
        """``cfq_slice_expired``: the next dispatch takes the next busy queue."""
        self.expired = True
        self.must_dispatch = False
        self.idle_until_ns = self.wake_ns = None

    def idle_timer(self, now_ns: int) -> bool:
        """``cfq_idle_slice_timer``, called by the queue at ``wake_ns``; False if the
        wait was ended or moved meanwhile (then nothing happens)."""
        if self.wake_ns != now_ns:
            return False
        self.idle_until_ns = self.wake_ns = None
        act = self.active
        if act is None:
            return True
        if now_ns > self.slice_end_ns:
            self._expire()
        elif not self.count:
            # nothing else to serve: wait on, up to the slice's end
            t = min(now_ns + self.slice_idle_ns, self.slice_end_ns)
            if t > now_ns:
                self.idle_until_ns = self.wake_ns = t
            else:
                self._expire()
        elif len(self.queues[act]):
            self.must_dispatch = True
        else:
            self._expire()
        return True

    def dispatch(self, now_ns: int) -> IORequest | None:
        """The next request, or None while the active queue idles (``cfq_select_queue``;
        an attempt while idling re-arms the wait, as ``mod_timer`` there does)."""
        if not self.count:
            return None
        act = self.active
        if act is not None and not self.expired:
            if not self.must_dispatch and now_ns > self.slice_end_ns:
                self._expire()
            elif not len(self.queues[act]):
                if act != ASYNC and now_ns < self.slice_end_ns and self._arm(act, now_ns):
                    return None
                self._expire()
        req = Scheduler.dispatch(self, now_ns)
        self.must_dispatch = False
        self.idle_until_ns = self.wake_ns = None
        key = self._qkey(req)
        self.in_driver += 1
        if self.in_driver > HW_TAG_DEPTH:
            self.hw_tag = True                                # cfq_activate_request
        self.dispatched_in_slice += 1
        if key == ASYNC and self.dispatched_in_slice >= ASYNC_SLICE_RQ:
            self._expire()
        return req

    def completed(self, req: IORequest, now_ns: int) -> None:
        """``cfq_completed_request``: the thread's think time runs from here."""
        if req.op == FLUSH or req.nomerge:    # flushes and FUA writes bypass cfq
            return
        self.in_driver -= 1
        if self._qkey(req) != ASYNC:
            ctx = self.ctx.get(req.issuer)
            if ctx is not None:
                ctx.last_end_ns = now_ns

    # -- service order -----------------------------------------------------------------
    def _select(self, now_ns: int) -> tuple:
        act = self.active
        if act is not None and len(self.queues.get(act, ())) and not self.expired:
            return act
        # rotate: the expired active queue goes to the back of the service order
        if act is not None and act in self.queues:
            self.queues.move_to_end(act)
        busy = [k for k, q in self.queues.items() if len(q)]
        sync = [k for k in busy if k is not ASYNC and k != ASYNC]
        key = sync[0] if sync else busy[0]
        self.active = key
        self.must_alloc_slice = False                      # __cfq_set_active_queue
        self.fifo_expired = False
        self.slice_end_ns = now_ns + self.slice_ns[key != ASYNC]
        self.dispatched_in_slice = 0
        self.expired = False
        return key

    def _pop(self, now_ns: int) -> IORequest:
        """``__cfq_dispatch_requests`` / ``cfq_dispatch_insert``: the expired FIFO head
        or the queue's next request; its neighbours are the next candidates, chosen
        from the head before it moves to the end of this one."""
        key = self._select(now_ns)
        q = self.queues[key]
        req = self._check_fifo(key, q, now_ns) or self.next_rq.get(key) or q.next_after(None)
        self.next_rq[key] = self._find_next(q, req)
        q.remove(req)
        self.last_end = req.offset_bytes + req.size_bytes
        return req
