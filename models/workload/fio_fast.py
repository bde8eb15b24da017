"""The fused fast path of a fio job: the same closed loop, run as one compiled loop.

A fio job whose I/Os go straight through an empty elevator into an HDD spends
nearly all of its wall time crossing Python calls (fio refill/on_done, the block
layer's submit/place/run_queue/complete, the drive's submit/start/finish, the event
heap) around a few microseconds of compiled drive model. ``FusedLoop`` takes over
such a job between *other* events: at a completion, instead of refilling in Python,
it moves the job's, the queue's and the drive's state into arrays, runs
``models.device.hdd_closed_loop.hdd_fio_loop`` (which replays exactly the events the
Python path would run, in the same order, with the same random draws, against the
same drive state vector), and writes everything back: counters, latency samples,
the in-flight requests as ``IORequest`` objects in the drive's tag slots and its
pending events in the simulator's heap with their original insertion numbers. After
it returns, the simulation is in the state the event path would have reached.

The loop stops before anything else that is scheduled (the job's own ramp/stop
events, other workloads, samplers), at ``Simulator.run(until_ns)``, and when the job
finishes; the event path then runs that event and the next completion hands control
back. So eligibility is re-checked at every hand-over, and a job that never
qualifies simply runs the event path. A job qualifies when (all of):

- one job (``numjobs=1``), ``iodepth_batch_submit`` = 1 (or ``ioengine=psync``);
- the queue is a ``BlockQueue`` with the ``noop`` elevator, ``nr_requests`` >= iodepth
  and ``bs`` <= ``max_sectors_kb`` (no split); nothing waits for a request, no FLUSH
  is pending, the elevator is empty, every allocated request is the job's;
- the device is an ``HDD`` whose ``queue_depth`` >= iodepth, completing into this
  queue, holding only the job's commands; its only pending events are its own
  completion / background-destage events.

With the device's command queue at least ``iodepth`` deep and ``nr_requests`` at
least ``iodepth``, every request is dispatched in the ``_run_queue`` call that
allocated it, so the elevator is empty whenever a bio arrives: no merge candidate
exists and no scheduler decision is ever taken. (The same holds for ``deadline``,
but its sort keys and batch state move with each dispatch and are not mirrored, so
deadline runs the event path.)

Guard: the compiled loop mirrors a handful of Python methods (listed in
``MIRRORED``). Their bytecode is fingerprinted; if any changed since the loop was
written, the fast path switches itself off (and a test says so) rather than
silently diverging. ``FioJob(..., fused=False)`` opts out explicitly.
"""
from __future__ import annotations

import hashlib
import heapq
import sys
from functools import lru_cache

import numpy as np

from ..block.base import BlockQueue
from ..block.noop import Noop
from ..block.scheduler import Scheduler
from ..device import hdd_closed_loop as L
from ..device.base import Device
from ..device.hdd import HDD
from ..device.request import READ, WRITE, IORequest
from ..metrics.iostat import IostatCounters
from ..sim.kernel import Simulator

_NO_LIMIT = np.iinfo(np.int64).max
_MIN_CHUNK = 64          # events per hand-over below which hand-overs back off
_MAX_BACKOFF = 1024      # completions run in Python before trying again, at most


def _mirrored():
    from . import fio
    return (HDD.submit, HDD._start_next, HDD._finish, HDD._start_destage,
            HDD._destage_done, Device.can_accept, BlockQueue.submit, BlockQueue._place,
            BlockQueue._new_request, BlockQueue._elevator_merge, BlockQueue._run_queue,
            BlockQueue._complete, Scheduler.add, Scheduler.dispatch, Scheduler._unhash,
            Scheduler.back_merge_candidate, Scheduler.front_merge_candidate, Noop._add,
            Noop._pop, IostatCounters._advance, IostatCounters.start, IostatCounters.done,
            Simulator.at, fio._Job.refill, fio._Job.on_done, fio._Job._draw,
            fio._Job._new_chunk)


# sha1 over the bytecode of ``_mirrored()`` when hdd_closed_loop was last checked
# against it (Python 3.11); ``code_fingerprint()`` prints the current one
MIRRORED_FINGERPRINT = "8cc71c4fd1b74c18b22d6472f1758e33e6dd6426"


def _code_bytes(code, doc) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for i, c in enumerate(code.co_consts):
        if i == 0 and doc is not None and c == doc:
            continue            # a docstring edit changes nothing
        parts.append(_code_bytes(c, None) if hasattr(c, "co_code") else repr(c).encode())
    return b"\0".join(parts)


def code_fingerprint() -> str:
    h = hashlib.sha1()
    for fn in _mirrored():
        h.update(_code_bytes(fn.__code__, fn.__doc__))
    return h.hexdigest()


@lru_cache(maxsize=1)
def mirrored_code_unchanged() -> bool:
    return code_fingerprint() == MIRRORED_FINGERPRINT


def _caller_codes():
    return (BlockQueue._complete.__code__, HDD._finish.__code__, Simulator.run.__code__)


class FusedLoop:
    """The fast path of one ``FioJob``; ``advance(job)`` replaces a refill."""

    LAT_CAPACITY = 1 << 16   # latency samples buffered per direction between drains

    def __init__(self, fio) -> None:
        self.fio = fio
        self.reason = self._static_reason()
        self.handovers = 0       # times the compiled loop took over
        self.events = 0          # simulator events it ran
        self._skip = 0
        self._backoff = 0
        if self.reason is None:
            dev = fio.queue.device
            self.K, self.Q, self.FREE, self.LAT = L.new_state(dev.queue_depth,
                                                              self.LAT_CAPACITY)

    @property
    def enabled(self) -> bool:
        return self.reason is None

    def _static_reason(self) -> str | None:
        fio = self.fio
        cfg, queue = fio.cfg, fio.queue
        if not mirrored_code_unchanged():
            return "the Python code the fused loop mirrors has changed"
        if len(fio.jobs) != 1:
            return "numjobs > 1"
        job = fio.jobs[0]
        if job.batch != 1:
            return "iodepth_batch_submit > 1"
        if type(queue) is not BlockQueue:
            return "not a BlockQueue"
        if type(queue.sched) is not Noop:
            return f"elevator {queue.sched.name} (only noop is fused)"
        if type(queue.device) is not HDD:
            return f"device kind {queue.device.kind} (only hdd is fused)"
        if job.bs > queue.max_bytes:
            return "bs > max_sectors_kb (requests are split)"
        return None

    # -- hand-over ------------------------------------------------------------------
    def advance(self, job) -> bool:
        """Called by ``_Job.on_done`` where it would refill. Runs the closed loop
        (refill included) up to the next foreign event and returns True, or returns
        False (the caller refills in Python) when the job does not qualify now."""
        if self.reason is not None:
            return False
        if self._skip:
            self._skip -= 1
            return False
        fio = self.fio
        if job.blocked or fio.stopping:
            return False
        # only from a completion the simulator is delivering: on_done <- BlockQueue.
        # _complete <- HDD._finish <- Simulator.run, which holds ``until_ns``
        f = sys._getframe(2)
        codes = _caller_codes()
        for code in codes:
            if f is None or f.f_code is not code:
                return False
            if code is not codes[-1]:
                f = f.f_back
        run_locals = f.f_locals
        sim = fio.sim
        if run_locals.get("self") is not sim or sim._stopped:
            return False
        until = run_locals.get("until_ns")
        queue = fio.queue
        dev = queue.device
        if (queue.waiting or queue.flushes or queue.sched.count
                or queue.allocated != job.in_flight or queue.nr_requests < job.iodepth
                or dev.queue_depth < job.iodepth or dev.inflight != job.in_flight
                or dev.queue or dev.on_complete != queue._complete
                or job.bs > queue.max_bytes):
            return False
        fin, dd = self._own_events(sim._heap, dev, job)
        if fin is False:
            return False
        if not self._load(sim, dev, queue, job, fin, dd, until):
            return False
        self._remove(sim._heap, fin, dd)
        self._run(job)
        self._store(sim, dev, queue, job)
        self.handovers += 1
        n = int(self.K[L.NEV])
        self.events += n
        if n < _MIN_CHUNK:
            self._backoff = min(max(1, 2 * self._backoff), _MAX_BACKOFF)
            self._skip = self._backoff
        else:
            self._backoff = 0
        return True

    @staticmethod
    def _own_events(heap, dev, job):
        """The drive's pending completion and destage-end heap entries, or
        (False, None) if the drive has an event the loop does not know."""
        fin = dd = None
        for e in heap:
            fn = e[2]
            if getattr(fn, "__self__", None) is not dev:
                continue
            if fn.__func__ is HDD._finish and fin is None:
                fin = e
            elif fn.__func__ is HDD._destage_done and dd is None:
                dd = e
            else:
                return False, None
        if (fin is None) != bool(dev.free_servers) or (dd is not None) != dev._bg_destage:
            return False, None
        return fin, dd

    @staticmethod
    def _ours(req, job) -> bool:
        parts = req.parts
        return (req.op <= WRITE and not req.fua and req.size_bytes == job.bs
                and parts is not None and len(parts) == 1 and parts[0].on_done == job.on_done)

    def _load(self, sim, dev, queue, job, fin, dd, until) -> bool:
        K, Q, FREE = self.K, self.Q, self.FREE
        K[:] = 0
        n_slots = 0
        for i, req in enumerate(dev._slots):
            if req is None:
                continue
            if not self._ours(req, job):
                return False
            Q[i] = (req.op, req.offset_bytes, req.parts[0].submit_ns, req.queue_ns,
                    req.dispatch_ns)
            n_slots += 1
        if n_slots + (fin is not None) != dev.inflight:
            return False
        if fin is not None:
            req = fin[3]
            if not self._ours(req, job):
                return False
            K[L.FIN_ON] = 1
            K[L.FIN_T], K[L.FIN_SEQ] = fin[0], fin[1]
            K[L.FIN_OP], K[L.FIN_OFF] = req.op, req.offset_bytes
            K[L.FIN_SUB], K[L.FIN_Q], K[L.FIN_DISP] = (req.parts[0].submit_ns, req.queue_ns,
                                                       req.dispatch_ns)
            K[L.FIN_HIT] = 1 if req.cache_hit else 0
        if dd is not None:
            K[L.DD_ON] = 1
            K[L.DD_T], K[L.DD_SEQ] = dd[0], dd[1]
        K[L.T_NOW] = sim.now_ns
        K[L.SEQ] = sim._seq
        K[L.UNTIL] = _NO_LIMIT if until is None else until
        K[L.RESUME] = 1
        # the drive
        free = dev._free
        FREE[:len(free)] = free
        K[L.NFREE] = len(free)
        K[L.DEV_INFLIGHT] = dev.inflight
        K[L.FREE_SERVER] = dev.free_servers
        K[L.WCE] = 1 if dev._wce else 0
        K[L.DESTAGING] = dev._destaging_bytes
        K[L.UNACKED] = dev._unacked_bytes
        K[L.BG] = 1 if dev._bg_destage else 0
        K[L.BG_DESTAGING] = dev._bg_destaging_bytes
        K[L.COMPLETED:L.COMPLETED + 4] = dev.completed
        K[L.BYTES_DONE:L.BYTES_DONE + 4] = dev.bytes_done
        K[L.BUSY] = dev.busy_ns
        K[L.CACHE_HITS] = dev.cache_hits
        # the block queue
        c = queue.counters
        K[L.ALLOCATED] = queue.allocated
        K[L.C_INFLIGHT] = c.in_flight
        K[L.C_LAST] = c.last_ns
        K[L.C_IOT] = c.io_ticks_ns
        K[L.C_TIQ] = c.time_in_queue_ns
        K[L.C_IOS:L.C_IOS + 3] = c.ios
        K[L.C_SEC:L.C_SEC + 3] = c.sectors
        K[L.C_TCK:L.C_TCK + 3] = c.ticks_ns
        # the job
        K[L.J_INFLIGHT] = job.in_flight
        K[L.J_REAPED] = job.reaped
        K[L.J_ISSUED] = job.issued
        K[L.J_LIMIT] = job.limit or 0
        K[L.J_IODEPTH] = job.iodepth
        K[L.J_CMIN] = job.complete_min
        K[L.J_MEASURE] = self.fio.measure_from_ns
        K[L.J_BS] = job.bs
        K[L.J_REGION] = job.region_start
        K[L.J_NBLOCKS] = job.n_blocks
        K[L.J_RANDOM] = 1 if job.random else 0
        K[L.J_MIXED] = 1 if job.mixed else 0
        K[L.J_FIXEDOP] = job.fixed_op
        K[L.J_NEXT] = job.next_block
        K[L.J_POS] = job._pos
        K[L.J_N] = job._n
        heap = sim._heap
        others = [e for e in heap if e is not fin and e is not dd]
        if others:
            h = min(others)[:2] if len(others) < len(heap) else heap[0][:2]
            K[L.H_T], K[L.H_SEQ] = h
        else:
            K[L.H_T] = K[L.H_SEQ] = _NO_LIMIT
        return True

    @staticmethod
    def _remove(heap, fin, dd) -> None:
        # in place: Simulator.run holds this list
        if fin is None and dd is None:
            return
        heap[:] = [e for e in heap if e is not fin and e is not dd]
        heapq.heapify(heap)

    def _run(self, job) -> None:
        K, LAT = self.K, self.LAT
        loop, deps = L.loop_entry()
        S = job.fio.queue.device.S
        while True:
            status = loop(S, K, self.Q, self.FREE, job._blocks, job._reads, LAT, deps)
            if status == L.NEED_DRAW:
                job._new_chunk()
                K[L.J_POS], K[L.J_N] = job._pos, job._n
            elif status == L.LAT_FULL:
                self._drain(job)
            else:
                self._drain(job)
                return

    def _drain(self, job) -> None:
        K, LAT, fio = self.K, self.LAT, self.fio
        for op in (READ, WRITE):
            n = int(K[L.LAT_N + op])
            if n:
                fio.lat[op].samples.frombytes(LAT[op, :n].tobytes())
                fio.bytes_done[op] += int(K[L.J_BYTES + op])
            K[L.LAT_N + op] = 0
            K[L.J_BYTES + op] = 0

    def _request(self, job, op, off, sub, qns, disp) -> IORequest:
        """The block request (and its bio) of an I/O in flight, as the event path
        builds them."""
        bio = IORequest(op, off, job.bs, job.on_done, True, False, job.index)
        bio.submit_ns = sub
        req = IORequest(op, off, job.bs, None, True, False, job.index)
        req.parts = [bio]
        req.submit_ns = sub
        req.queue_ns = qns
        req.dispatch_ns = disp
        return req

    def _store(self, sim, dev, queue, job) -> None:
        k = self.K.tolist()
        sim.now_ns = k[L.T_NOW]
        sim._seq = k[L.SEQ]
        sim.events_processed += k[L.NEV]
        # the drive
        nfree = k[L.NFREE]
        free = self.FREE[:nfree].tolist()
        dev._free = free
        busy = set(range(dev.queue_depth)) - set(free)
        slots = [None] * dev.queue_depth
        for i in busy:
            slots[i] = self._request(job, *self.Q[i].tolist())
        dev._slots = slots
        heap = sim._heap
        if k[L.FIN_ON]:
            req = self._request(job, k[L.FIN_OP], k[L.FIN_OFF], k[L.FIN_SUB], k[L.FIN_Q],
                                k[L.FIN_DISP])
            req.cache_hit = bool(k[L.FIN_HIT])
            heapq.heappush(heap, (k[L.FIN_T], k[L.FIN_SEQ], dev._finish, req))
        if k[L.DD_ON]:
            heapq.heappush(heap, (k[L.DD_T], k[L.DD_SEQ], dev._destage_done, None))
        dev.inflight = k[L.DEV_INFLIGHT]
        dev.free_servers = k[L.FREE_SERVER]
        dev._destaging_bytes = k[L.DESTAGING]
        dev._unacked_bytes = k[L.UNACKED]
        dev._bg_destage = bool(k[L.BG])
        dev._bg_destaging_bytes = k[L.BG_DESTAGING]
        dev.completed[:] = k[L.COMPLETED:L.COMPLETED + 4]
        dev.bytes_done[:] = k[L.BYTES_DONE:L.BYTES_DONE + 4]
        dev.busy_ns = k[L.BUSY]
        dev.cache_hits = k[L.CACHE_HITS]
        # the block queue
        c = queue.counters
        queue.allocated = k[L.ALLOCATED]
        c.in_flight = k[L.C_INFLIGHT]
        c.last_ns = k[L.C_LAST]
        c.io_ticks_ns = k[L.C_IOT]
        c.time_in_queue_ns = k[L.C_TIQ]
        c.ios[:] = k[L.C_IOS:L.C_IOS + 3]
        c.sectors[:] = k[L.C_SEC:L.C_SEC + 3]
        c.ticks_ns[:] = k[L.C_TCK:L.C_TCK + 3]
        # the job
        job.in_flight = k[L.J_INFLIGHT]
        job.reaped = k[L.J_REAPED]
        job.issued = k[L.J_ISSUED]
        job.next_block = k[L.J_NEXT]
        job._pos = k[L.J_POS]
