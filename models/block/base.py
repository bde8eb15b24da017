"""The Linux block layer between callers and one device (the legacy request queue).

Modelled, following ``blk_queue_bio`` / ``get_request`` of Linux 2.6-3.x:

- **Splitting**: a bio larger than ``max_sectors_kb`` (capped, as Linux caps it, by the
  device's ``max_hw_sectors_kb``) is split into requests of at most
  that size; the caller sees one completion when every part is done.
- **Merging**: a bio is first merged into a request of the caller's plug list, then
  into a queued (not yet dispatched) request of the scheduler - back merges always,
  front merges where the scheduler allows - as long as the result stays within
  ``max_sectors_kb``. A request that grows to touch its neighbour absorbs it. Every bio
  merge counts in rrqm/s / wrqm/s. Dispatched requests never grow.
- **Plugging**: ``submit(bios, plug=True)`` is one ``io_submit()`` of N iocbs (or a
  writeback batch) under ``blk_start_plug``: the batch merges within itself before the
  scheduler sees it, then is inserted and the queue is run once.
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
- **Dispatch**: the scheduler (noop / deadline / cfq) picks what goes next whenever the
  device's command queue (``Device.queue_depth``, the TCQ/NCQ depth) has a free slot.
  FLUSH requests and FUA writes bypass the scheduler on the dispatch list and are
  dispatched first (``fua.py``); on a device whose
  write cache is off (``Device.write_cache_mode`` "write through") a FLUSH is completed
  at once without a request, as Linux does (nothing in iostat's f/s). With
  ``flush_merging`` (Linux 2.6.37+, blk-flush's ``blk_kick_flush``) one FLUSH of a
  flush queue is at the device at a time and a FLUSH asked while one runs or waits
  joins the waiting one: one device FLUSH (one in f/s) completes them all. A joining
  FLUSH takes no request of its own here (Linux allocates one for each and frees them
  together: only a queue out of requests would tell).
- **FUA** (``models/block/fua.py``): a FUA write goes to a device whose queue
  advertises FUA with the flag (a plain write where the device's cache is off), and
  to any other as the write then a cache FLUSH; a FUA bio merges with no other, and
  it - or the write of an emulated one - is never sorted by the scheduler.
- **iostat**: counted here, as the kernel counts ``/proc/diskstats`` for the device.

- **Congestion**: the queue is write-congested while at least ``nr_requests -
  nr_requests/8 + 1`` requests of the write (2.6.30+: async) list are allocated
  (``blk_queue_congestion_threshold``); background writeback backs off from a
  congested queue (``models/fs/writeback.py``) instead of sleeping in it.

- **The scheduler's say** (``elv_may_queue``): cfq lets the thread it is idling for
  allocate one request a slice past a full list (``ELV_MQUEUE_MUST``), and past the
  sleepers.

Deliberately not modelled: blk-mq (``mq/``), the
congestion-off hysteresis, unplug timers (a plug is flushed when the submission call
ends). A thread's batching state is keyed by its ``issuer`` (its ``io_context``).
"""
from __future__ import annotations

from collections import deque
from typing import Sequence

from ..device.base import Device
from ..device.request import FLUSH, READ, WRITE, IORequest
from ..metrics.iostat import IostatCounters, iostat_between
from ..sim import Event, Simulator
from .cfq import CFQ
from .config import BlockConfig
from .deadline import Deadline
from . import fua
from .noop import Noop
from .scheduler import Scheduler, merge_key

BLK_BATCH_REQ = 32                  # q->nr_batching
BLK_BATCH_TIME_NS = 20_000_000      # HZ / 50

SCHEDULER_CLASSES = {"noop": lambda cfg: Noop(), "deadline": Deadline, "cfq": CFQ}


def make_scheduler(cfg: BlockConfig) -> Scheduler:
    return SCHEDULER_CLASSES[cfg.scheduler](cfg)


class _Call:
    """One submission call whose submitter sleeps until all its bios are queued: it
    waits in the queue of the request list its next bio needs (``bios[0]``), as the
    thread sleeps on that list's wait queue before it submits the rest."""

    __slots__ = ("bios", "event")

    def __init__(self, bio: IORequest, event: Event) -> None:
        self.bios = deque((bio,))
        self.event = event


class BlockQueue:
    """The request queue of one block device (``/sys/block/<name>/queue``)."""

    def __init__(self, sim: Simulator, device: Device, cfg: BlockConfig | None = None,
                 name: str | None = None) -> None:
        self.sim = sim
        self.device = device
        self.cfg = cfg or BlockConfig()
        self.name = name or device.name
        self.sched = make_scheduler(self.cfg)
        hw_kb = device.max_hw_sectors_kb
        max_kb = min(self.cfg.max_sectors_kb, hw_kb) if hw_kb else self.cfg.max_sectors_kb
        self.max_bytes = max_kb * 1024
        self.nr_requests = self.cfg.nr_requests
        self.allocated = 0
        # request_list.count / .wait: [0] reads (2.6.30+: sync), [1] writes (async)
        self.sync_lists = self.cfg.request_lists == "sync_async"
        self.rl_count = [0, 0]
        self.rl_full = [False, False]     # blk_queue_full(q, rw)
        self.waiting: tuple[deque[_Call], deque[_Call]] = (deque(), deque())
        self._batch: dict[int, list] = {}  # issuer -> [nr_batch_requests, last_waited_ns]
        self.dispatch_list: deque[IORequest] = deque()
        self.flush_merging = bool(self.cfg.flush_merging)
        self._flushing: set[int] = set()    # flush queues with a FLUSH at the device
        self.counters = IostatCounters()
        self.blocked_calls = 0
        self.write_through = device.write_cache_mode == "write through"
        self.fua = fua.queue_has_fua(device, self.cfg)
        self.emulate_fua = not (self.fua or self.write_through)
        self._sched_done = getattr(self.sched, "completed", None)   # cfq's bookkeeping
        self._wake_at: int | None = None
        device.on_complete = self._complete

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

    # -- submission ------------------------------------------------------------------
    def submit(self, bios: IORequest | Sequence[IORequest], plug: bool = False) -> Event | None:
        """Submit bios; returns None if all were queued, else an Event to wait on."""
        now = self.sim.now_ns
        if self.emulate_fua and (type(bios) is not IORequest or bios.fua):
            bios = fua.emulated(self, bios)
        if type(bios) is IORequest:
            if bios.op == FLUSH and self.write_through:
                return self._flush_not_sent(bios, now)
            # fast path: one bio that needs no split and no wait
            rl = 0 if bios.op == READ or (self.sync_lists and bios.sync) else 1   # rl_of
            if bios.size_bytes <= self.max_bytes and not self.waiting[rl]:
                bios.submit_ns = now
                sched = self.sched
                if (not sched.count and bios.op != FLUSH and not bios.nomerge
                        and self.rl_count[rl] + 1 < self.nr_requests
                        and not self.dispatch_list and self.device.can_accept()):
                    # nothing queued (so no merge candidate: the hashes only hold queued
                    # requests) and a free device tag: the new request is dispatched
                    # at once, as _place + _run_queue would dispatch it
                    if sched.may_queue is not None:
                        sched.may_queue(bios)      # get_request asks elv_may_queue
                    req = self._new_request(bios)
                    if sched.passes_unchanged:
                        self.device.submit(req)
                    else:
                        req = sched.pass_through(req, now)
                        if req is None:      # queued behind an idling cfq queue
                            self._wake_later()
                        else:
                            self.device.submit(req)
                    return None
                if self._place(bios, None):
                    self._run_queue()
                    return None
            bios = (bios,)
        return self._submit_bios(bios, plug, now)

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

    def _submit_bios(self, bios: Sequence[IORequest], plug: bool, now: int) -> Event | None:
        """Split, merge or queue each bio; the first that finds no request makes the
        call sleep, and it and every later bio wait in submission order."""
        plug_list: list[IORequest] | None = [] if plug and len(bios) > 1 else None
        call: _Call | None = None
        for bio in self._split(bios, now):
            if call is not None:
                call.bios.append(bio)
                continue
            waiters = self._waiters(bio)
            # A bio merges if it can even while other submitters sleep for a request
            # (blk_queue_bio tries the plug and elevator merges before get_request);
            # a batcher allocates past them.
            if not self._place(bio, plug_list,
                               may_allocate=not waiters or self._batching(bio.issuer)):
                if plug_list:
                    self._insert_plugged(plug_list)
                    plug_list = None
                call = _Call(bio, Event(self.sim))
                self.blocked_calls += 1
                waiters.append(call)
        if plug_list:
            self._insert_plugged(plug_list)
        self._run_queue()
        return call.event if call is not None else None

    def _split(self, bios: Sequence[IORequest], now: int):
        max_bytes = self.max_bytes
        for bio in bios:
            bio.submit_ns = now
            if bio.op == FLUSH and self.write_through:
                self._flush_not_sent(bio, now)
                continue
            if bio.size_bytes <= max_bytes or bio.op == FLUSH:
                yield bio
                continue
            parts = []
            off, end = bio.offset_bytes, bio.offset_bytes + bio.size_bytes
            while off < end:
                n = min(max_bytes, end - off)
                part = IORequest(bio.op, off, n, None, bio.sync, bio.fua, bio.issuer)
                part.nomerge = bio.nomerge
                parts.append(part)
                off += n
            left = [len(parts)]

            def part_done(part: IORequest, bio=bio, left=left) -> None:
                left[0] -= 1
                if part.cache_hit:
                    bio.cache_hit = True
                if left[0] == 0:
                    bio.done_ns = part.done_ns
                    if bio.on_done is not None:
                        bio.on_done(bio)

            for p in parts:
                p.on_done = part_done
                p.submit_ns = now
                yield p

    def _place(self, bio: IORequest, plug_list: list[IORequest] | None,
               may_allocate: bool = True) -> bool:
        """Merge or allocate a request for ``bio``; False if it needs a request and
        nr_requests is exhausted (or ``may_allocate`` is False)."""
        if bio.op != FLUSH:
            if bio.nomerge:
                pass
            elif plug_list is not None and self._plug_merge(bio, plug_list):
                return True
            elif self._elevator_merge(bio):
                return True
        elif self.flush_merging and self._join_flush(bio):
            return True
        # get_request: the scheduler's say first (elv_may_queue), once per allocation
        must = self.sched.may_queue is not None and self.sched.may_queue(bio)
        if not (may_allocate or must) or self._get_request_fails(bio, must):
            return False
        if bio.op == FLUSH:
            self.dispatch_list.append(self._new_request(bio))
            return True
        req = self._new_request(bio)
        if bio.nomerge:     # never in a plug list or the scheduler: no merge finds it
            self._bypass(req)
        elif plug_list is not None:
            plug_list.append(req)
        else:
            self.sched.add(req, self.sim.now_ns)
        return True

    def _new_request(self, bio: IORequest) -> IORequest:
        now = self.sim.now_ns
        req = IORequest(bio.op, bio.offset_bytes, bio.size_bytes, None, bio.sync, bio.fua, bio.issuer)
        req.nomerge = bio.nomerge
        req.parts = [bio]
        req.submit_ns = bio.submit_ns
        req.queue_ns = now
        self.allocated += 1
        self.rl_count[self.rl_of(req)] += 1
        self.counters.start(now)
        return req

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

    # -- flushes and FUA writes (blk-flush, 2.6.37+) --------------------------------------
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

    def _insert_plugged(self, plug_list: list[IORequest]) -> None:
        now = self.sim.now_ns
        plug_list.sort(key=lambda r: r.offset_bytes)
        for req in plug_list:
            self.sched.add(req, now)

    # -- dispatch and completion -----------------------------------------------------
    def _run_queue(self) -> None:
        dev, sched, lst, now = self.device, self.sched, self.dispatch_list, self.sim.now_ns
        can_accept = dev.can_accept
        while can_accept():
            req = self._next_dispatch() if lst else None
            if req is not None:
                dev.submit(req)
            elif sched.count:
                req = sched.dispatch(now)
                if req is None:          # held back by the scheduler (cfq / bfq idling)
                    self._wake_later()
                    break
                dev.submit(req)
            else:
                break

    def _wake_later(self) -> None:
        """Run the queue again when the scheduler asks to (its idle timer)."""
        t = getattr(self.sched, "wake_ns", None)
        if t is not None and t > self.sim.now_ns and t != self._wake_at:
            self._wake_at = t
            self.sim.at(t, self._wake)

    def _wake(self, _arg=None) -> None:
        now = self.sim.now_ns
        if self._wake_at == now:
            self._wake_at = None
        timer = getattr(self.sched, "idle_timer", None)
        if timer is not None:
            if not timer(now):           # a wait ended or moved since: nothing to do
                return
            if self.dispatch_list or self.sched.count:
                self._run_queue()
            self._wake_later()           # the timer may have re-armed
        elif self.dispatch_list or self.sched.count:
            self._run_queue()

    def _complete(self, req: IORequest) -> None:
        now = self.sim.now_ns
        self.counters.done(req.op, req.size_bytes, req.queue_ns, now)
        self._freed(req)
        if self._flushing:              # flush merging: a FLUSH at the device
            self._flush_done(req)
        if self._sched_done is not None:
            self._sched_done(req, now)
        flush_seq = req.nomerge and not req.fua
        if flush_seq:       # an emulated FUA's write: its post-flush takes the request
            self._end_bios(req, now)
        waiting = self.waiting[self.rl_of(req)]
        if waiting and self._wakes(req):
            self._admit_waiters(waiting)
        if self.dispatch_list or self.sched.count:
            self._run_queue()
        if flush_seq:
            return
        for bio in req.parts:           # _end_bios, inline: the hot path
            bio.done_ns = now
            bio.cache_hit = req.cache_hit
            if bio.on_done is not None:
                bio.on_done(bio)

    @staticmethod
    def _end_bios(req: IORequest, now: int) -> None:
        """Complete the bios ``req`` carries. The write of an emulated FUA completes
        before sleepers are given the freed request and before the queue runs again:
        its post-flush takes that request - blk-flush lends the flush request the data
        request's tag - and goes on the dispatch list ahead of the scheduler's
        requests (``flush_data_end_io``, then the driver's next command)."""
        for bio in req.parts:
            bio.done_ns = now
            bio.cache_hit = req.cache_hit
            if bio.on_done is not None:
                bio.on_done(bio)

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

    # -- statistics --------------------------------------------------------------------
    def snapshot(self) -> tuple:
        return self.counters.snapshot(self.sim.now_ns)

    def iostat(self, since: tuple) -> dict:
        """iostat -x of this device from snapshot ``since`` to now."""
        return iostat_between(since, self.snapshot())
