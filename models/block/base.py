"""The Linux block layer between callers and one device (the legacy request queue).

Modelled, following ``blk_queue_bio`` / ``get_request`` of Linux 2.6-3.x:

- **Splitting**: a bio larger than ``max_sectors_kb`` (capped, as Linux caps it, by the
  device's ``max_hw_sectors_kb``) is split into requests of at most
  that size; the caller sees one completion when every part is done.
- **Merging** (``merge.py``): a bio is first merged into a request of the caller's
  plug list, then into a queued (not yet dispatched) request of the scheduler.
- **Plugging**: ``submit(bios, plug=True)`` is one ``io_submit()`` of N iocbs (or a
  writeback batch) under ``blk_start_plug``: the batch merges within itself before the
  scheduler sees it, then is inserted and the queue is run once.
- **Requests** (``requests.py``): ``nr_requests`` per request list, the submitters
  that sleep for one, batching, congestion.
- **Dispatch**: the scheduler (noop / deadline / cfq) picks what goes next whenever the
  device's command queue (``Device.queue_depth``, the TCQ/NCQ depth) has a free slot.
  FLUSH requests and FUA writes bypass the scheduler on the dispatch list and are
  dispatched first (``blk_flush.py``, ``fua.py``).
- **iostat**: counted here, as the kernel counts ``/proc/diskstats`` for the device.

Deliberately not modelled: blk-mq (``mq/``), unplug timers (a plug is flushed when the
submission call ends).
"""
from __future__ import annotations

from collections import deque
from typing import Sequence

from ..device.base import Device
from ..device.request import FLUSH, READ, IORequest
from ..metrics.iostat import IostatCounters, iostat_between
from ..sim import Event, Simulator
from .blk_flush import BlkFlush
from .cfq import CFQ
from .config import BlockConfig
from .deadline import Deadline
from . import fua
from .merge import Merging
from .noop import Noop
from .requests import RequestLists, _Call
from .scheduler import Scheduler

SCHEDULER_CLASSES = {"noop": lambda cfg: Noop(), "deadline": Deadline, "cfq": CFQ}


def make_scheduler(cfg: BlockConfig) -> Scheduler:
    return SCHEDULER_CLASSES[cfg.scheduler](cfg)


class BlockQueue(RequestLists, Merging, BlkFlush):
    """The request queue of one block device (``/sys/block/<name>/queue``): submission,
    splitting, plugging, dispatch and completion here; request allocation, merging and
    the flush machinery in the mixins it is built from."""

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

    # -- statistics --------------------------------------------------------------------
    def snapshot(self) -> tuple:
        return self.counters.snapshot(self.sim.now_ns)

    def iostat(self, since: tuple) -> dict:
        """iostat -x of this device from snapshot ``since`` to now."""
        return iostat_between(since, self.snapshot())
