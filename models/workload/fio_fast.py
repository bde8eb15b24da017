"""The fused fast path of a fio job: the same closed loop, run as one compiled loop.

A fio job whose I/Os go straight through an empty elevator into a drive spends
nearly all of its wall time crossing Python calls (fio refill/on_done, the block
layer's submit/place/run_queue/complete, the drive's submit/start/finish, the event
heap) around a few microseconds of compiled drive model. ``FusedLoop`` takes over
such a job between *other* events: at a completion, instead of refilling in Python,
it moves the job's, the queue's and the drive's state into arrays, runs the
drive's fused loop (``models.device.hdd_closed_loop`` / ``ssd_closed_loop``, which
replay exactly the events the Python path would run, in the same order, with the
same random draws, against the same drive state), and writes everything back:
counters, latency samples, the in-flight requests as ``IORequest`` objects where
the drive keeps them and its pending events in the simulator's heap with their
original insertion numbers. After
it returns, the simulation is in the state the event path would have reached.

The loop stops before anything else that is scheduled (the job's own ramp/stop
events, other workloads, samplers), at ``Simulator.run(until_ns)``, and when the job
finishes; the event path then runs that event and the next completion hands control
back. So eligibility is re-checked at every hand-over, and a job that never
qualifies simply runs the event path. A job qualifies when (all of):

- one job (``numjobs=1``), ``iodepth_batch_submit`` = 1 (or ``ioengine=psync``);
- the queue is a ``BlockQueue`` with the ``noop`` or ``deadline`` elevator,
  ``nr_requests`` >= iodepth and ``bs`` <= ``max_sectors_kb`` (no split); nothing
  waits for a request, no FLUSH is pending, the elevator is empty, every allocated
  request is the job's;
- the device is an ``HDD`` or an ``SSD`` whose ``queue_depth`` >= iodepth, completing
  into this queue, holding only the job's commands (no FLUSH); its only pending
  events are the completion / background-destage events the loop knows.

With the device's command queue at least ``iodepth`` deep and ``nr_requests`` at
least ``iodepth``, every request is dispatched in the ``_run_queue`` call that
allocated it (``Device.can_accept`` holds: the drive has fewer than ``iodepth``
commands whenever fio submits), so the elevator is empty whenever a bio arrives: no
merge candidate exists (the merge hashes are empty) and the scheduler always
dispatches the one request it holds. noop keeps no other state; deadline does (the
batch direction and count, its sort position ``last_key`` and the sort keys' sequence
numbers), and the loop keeps that too. cfq's
time slices and idling make decisions even with one request: it runs the event path.

Guard: the compiled loop mirrors a handful of Python methods (``_host_mirrored``,
``_deadline_mirrored`` and the device loop's ``MIRRORED``). Their bytecode is
fingerprinted; if any changed since the loop was written, the fast path switches
itself off (and a test says so) rather than silently diverging.
``FioJob(..., fused=False)`` opts out explicitly.

What it takes from the simulator: the fast-path interface of ``Simulator``
(``entries`` / ``remove`` / ``restore`` / ``advance``: the drive's pending events come
off the heap and go back with the same insertion numbers; ``until_ns`` of the ``run``
in progress, which the loop must not pass). The one piece of introspection left is
the call-stack check that the hand-over happens inside a completion the simulator is
delivering (nothing else of the caller's may run after the loop moved the clock).
"""
from __future__ import annotations

import hashlib
import sys

from ..block.base import BlockQueue
from ..block.deadline import Deadline
from ..block.noop import Noop
from ..block.sorted_queue import SEQ_BITS, SortedQueue
from ..block.scheduler import Scheduler
from ..device import closed_loop_host as H
from ..device.request import READ, WRITE, IORequest
from ..metrics.iostat import IostatCounters
from ..sim.kernel import Simulator

_NO_LIMIT = (1 << 63) - 1
SEQ_MASK = (1 << SEQ_BITS) - 1
_MIN_CHUNK = 64          # events per hand-over below which hand-overs back off
_MAX_BACKOFF = 1024      # completions run in Python before trying again, at most


def _device_loops() -> dict:
    from ..device.hdd import HDD
    from ..device.hdd_closed_loop import HDDLoop
    from ..device.ssd import SSD
    from ..device.ssd_closed_loop import SSDLoop
    return {HDD: HDDLoop, SSD: SSDLoop}


def _host_mirrored() -> tuple:
    from . import fio
    return (BlockQueue.submit, BlockQueue._place, BlockQueue._new_request,
            BlockQueue._elevator_merge, BlockQueue._run_queue, BlockQueue._complete,
            Scheduler.add, Scheduler.dispatch, Scheduler._unhash, Scheduler.pass_through,
            Scheduler.back_merge_candidate, Scheduler.front_merge_candidate, Noop._add,
            Noop.pass_through,
            Noop._pop, IostatCounters._advance, IostatCounters.start, IostatCounters.done,
            Simulator.at, Simulator.after, fio._Job.refill, fio._Job.on_done,
            fio._Job._draw, fio._Job._new_chunk)


def _deadline_mirrored() -> tuple:
    return (Deadline._add, Deadline._pop, Deadline._take, Deadline._expired, Deadline._dir,
            SortedQueue.add, SortedQueue.remove, SortedQueue.oldest, SortedQueue.next_after)


# sha1 of the bytecode of the Python each loop mirrors, when the loop was last checked
# against it (Python 3.11); ``code_fingerprint(name)`` gives the current one
MIRRORED_FINGERPRINTS = {
    "host": "f6637e9c8cd27b6504063f5fc2881b8c8f10231d",
    "deadline": "307c6f5239fe7ad0087960b09843259ba7140c3f",
    "HDD": "7ed9a5fe5bb5cddc668caf13ce88fd6463e42cbb",
    "SSD": "18c78b93a49c8ff20da7f53720f17cac15737627",
}


def _code_bytes(code, doc) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for i, c in enumerate(code.co_consts):
        if i == 0 and doc is not None and c == doc:
            continue            # a docstring edit changes nothing
        parts.append(_code_bytes(c, None) if hasattr(c, "co_code") else repr(c).encode())
    return b"\0".join(parts)


def code_fingerprint(name: str) -> str:
    """Fingerprint of the mirrored Python: ``"host"``, ``"deadline"`` or a device
    class name."""
    if name == "host":
        fns = _host_mirrored()
    elif name == "deadline":
        fns = _deadline_mirrored()
    else:
        fns = next(loop.MIRRORED for cls, loop in _device_loops().items()
                   if cls.__name__ == name)
    h = hashlib.sha1()
    for fn in fns:
        h.update(_code_bytes(fn.__code__, fn.__doc__))
    return h.hexdigest()


_unchanged: dict = {}


def mirrored_code_unchanged(name: str) -> bool:
    if name not in _unchanged:
        _unchanged[name] = code_fingerprint(name) == MIRRORED_FINGERPRINTS.get(name)
    return _unchanged[name]


class FusedLoop:
    """The fast path of one ``FioJob``; ``advance(job)`` replaces a refill."""

    LAT_CAPACITY = 1 << 16   # latency samples buffered per direction between drains

    def __init__(self, fio) -> None:
        self.fio = fio
        self.dev_loop = None
        self.reason = self._static_reason()
        self.handovers = 0       # times the compiled loop took over
        self.events = 0          # simulator events it ran
        self._skip = 0
        self._backoff = 0
        if self.reason is None:
            import numpy as np
            self.K = np.zeros(self.dev_loop.KSIZE, np.int64)
            self.LAT = np.zeros((2, self.LAT_CAPACITY), np.int64)
            sched = fio.queue.sched
            self._expire = sched.expire_ns if type(sched) is Deadline else None
            self._codes = tuple(fn.__code__ for fn in (BlockQueue._complete,
                                                       *self.dev_loop.FINISH, Simulator.run))

    @property
    def enabled(self) -> bool:
        return self.reason is None

    def _static_reason(self) -> str | None:
        fio = self.fio
        queue = fio.queue
        if len(fio.jobs) != 1:
            return "numjobs > 1"
        job = fio.jobs[0]
        if job.batch != 1:
            return "iodepth_batch_submit > 1"
        if type(queue) is not BlockQueue:
            return "not a BlockQueue"
        if type(queue.sched) not in (Noop, Deadline):
            return f"elevator {queue.sched.name} (noop and deadline are fused)"
        if job.bs > queue.max_bytes:
            return "bs > max_sectors_kb (requests are split)"
        dev = queue.device
        loop_cls = _device_loops().get(type(dev))
        if loop_cls is None:
            return f"device kind {dev.kind} (hdd and ssd are fused)"
        names = ["host", type(dev).__name__]
        if type(queue.sched) is Deadline:
            names.append("deadline")
        for name in names:
            if not mirrored_code_unchanged(name):
                return f"the {name} code the fused loop mirrors has changed"
        why = loop_cls.reason(dev)      # compiles (or loads) the loop
        if why is not None:
            return why
        self.dev_loop = loop_cls(dev)
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
        # _complete <- the drive's completion <- Simulator.run
        f = sys._getframe(2)
        codes = self._codes
        last = len(codes) - 1
        for i, code in enumerate(codes):
            if f is None or f.f_code is not code:
                return False
            if i < last:
                f = f.f_back
        sim = fio.sim
        if not sim.running or sim.stopped:
            return False
        queue = fio.queue
        dev = queue.device
        if (queue.waiting or queue.flushes or queue.sched.count
                or queue.allocated != job.in_flight or queue.nr_requests < job.iodepth
                or dev.queue_depth < job.iodepth or dev.inflight != job.in_flight
                or dev.queue or dev.on_complete != queue._complete
                or job.bs > queue.max_bytes):
            return False
        events = self.dev_loop.own_events(sim.entries())
        if events is None:
            return False
        K = self.K
        K[:] = 0

        def ours(req):
            parts = req.parts
            if (req.op > WRITE or req.fua or req.size_bytes != job.bs or parts is None
                    or len(parts) != 1 or parts[0].on_done != job.on_done):
                return None
            return req.op, req.offset_bytes, parts[0].submit_ns, req.queue_ns, req.dispatch_ns

        if not self.dev_loop.load(K, events, ours):
            return False
        if type(queue.sched) is Deadline and not self._load_deadline(queue.sched):
            return False
        self._load_host(sim, queue, job, sim.until_ns)
        if events:
            sim.remove(events)
        head = sim.next_key()
        if head is not None:
            K[H.H_T], K[H.H_SEQ] = head
        else:
            K[H.H_T] = K[H.H_SEQ] = _NO_LIMIT
        self._run(job)
        self._store(sim, queue, job)
        self.handovers += 1
        n = int(K[H.NEV])
        self.events += n
        if n < _MIN_CHUNK:
            self._backoff = min(max(1, 2 * self._backoff), _MAX_BACKOFF)
            self._skip = self._backoff
        else:
            self._backoff = 0
        return True

    def _load_host(self, sim, queue, job, until) -> None:
        K = self.K
        K[H.T_NOW] = sim.now_ns
        K[H.SEQ] = sim.seq
        K[H.UNTIL] = _NO_LIMIT if until is None else until
        K[H.RESUME] = 1
        c = queue.counters
        K[H.ALLOCATED] = queue.allocated
        K[H.C_INFLIGHT] = c.in_flight
        K[H.C_LAST] = c.last_ns
        K[H.C_IOT] = c.io_ticks_ns
        K[H.C_TIQ] = c.time_in_queue_ns
        K[H.C_IOS:H.C_IOS + 3] = c.ios
        K[H.C_SEC:H.C_SEC + 3] = c.sectors
        K[H.C_TCK:H.C_TCK + 3] = c.ticks_ns
        K[H.J_INFLIGHT] = job.in_flight
        K[H.J_REAPED] = job.reaped
        K[H.J_ISSUED] = job.issued
        K[H.J_LIMIT] = job.limit or 0
        K[H.J_IODEPTH] = job.iodepth
        K[H.J_CMIN] = job.complete_min
        K[H.J_MEASURE] = self.fio.measure_from_ns
        K[H.J_BS] = job.bs
        K[H.J_REGION] = job.region_start
        K[H.J_NBLOCKS] = job.n_blocks
        K[H.J_RANDOM] = 1 if job.random else 0
        K[H.J_MIXED] = 1 if job.mixed else 0
        K[H.J_FIXEDOP] = job.fixed_op
        K[H.J_NEXT] = job.next_block
        K[H.J_POS] = job._pos
        K[H.J_N] = job._n

    def _load_deadline(self, dl: Deadline) -> bool:
        if dl.by_end or dl.by_start:
            return False
        K = self.K
        K[H.DL_ON] = 1
        K[H.DL_BATCH_DIR] = dl.batch_dir
        K[H.DL_BATCHING] = dl.batching
        K[H.DL_STARVED] = dl.starved
        K[H.DL_FIFO_BATCH] = dl.fifo_batch
        for d in (READ, WRITE):
            q = dl.queues[d]
            if len(q) or q.keys or q.by_key:
                return False
            key = dl.last_key[d]
            if key is not None:
                K[H.DL_LK_SET + d] = 1
                K[H.DL_LK_OFF + d], K[H.DL_LK_SEQ + d] = key >> SEQ_BITS, key & SEQ_MASK
            K[H.DL_SQSEQ + d] = q._seq
        return True

    def _store_deadline(self, dl: Deadline, k: list, job) -> None:
        dl.batch_dir = k[H.DL_BATCH_DIR]
        dl.batching = k[H.DL_BATCHING]
        dl.starved = k[H.DL_STARVED]
        for d in (READ, WRITE):
            dl.last_key[d] = (k[H.DL_LK_OFF + d] << SEQ_BITS | k[H.DL_LK_SEQ + d]
                              if k[H.DL_LK_SET + d] else None)
            dl.queues[d]._seq = k[H.DL_SQSEQ + d]

    def _run(self, job) -> None:
        K = self.K
        while True:
            status = self.dev_loop.run(K, job._blocks, job._reads, self.LAT)
            if status == H.NEED_DRAW:
                job._new_chunk()
                K[H.J_POS], K[H.J_N] = job._pos, job._n
            elif status == H.LAT_FULL:
                self._drain()
            else:
                self._drain()
                return

    def _drain(self) -> None:
        K, LAT, fio = self.K, self.LAT, self.fio
        for op in (READ, WRITE):
            n = int(K[H.LAT_N + op])
            if n:
                fio.lat[op].samples.frombytes(LAT[op, :n].tobytes())
                fio.bytes_done[op] += int(K[H.J_BYTES + op])
            K[H.LAT_N + op] = 0
            K[H.J_BYTES + op] = 0

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
        if self._expire is not None:
            req.deadline_ns = qns + self._expire[READ if op == READ else WRITE]
        return req

    def _store(self, sim, queue, job) -> None:
        k = self.K.tolist()
        sim.advance(k[H.T_NOW], k[H.SEQ], k[H.NEV])
        self.dev_loop.store(k, sim.restore, lambda *row: self._request(job, *row))
        if self._expire is not None:
            self._store_deadline(queue.sched, k, job)
        c = queue.counters
        queue.allocated = k[H.ALLOCATED]
        c.in_flight = k[H.C_INFLIGHT]
        c.last_ns = k[H.C_LAST]
        c.io_ticks_ns = k[H.C_IOT]
        c.time_in_queue_ns = k[H.C_TIQ]
        c.ios[:] = k[H.C_IOS:H.C_IOS + 3]
        c.sectors[:] = k[H.C_SEC:H.C_SEC + 3]
        c.ticks_ns[:] = k[H.C_TCK:H.C_TCK + 3]
        job.in_flight = k[H.J_INFLIGHT]
        job.reaped = k[H.J_REAPED]
        job.issued = k[H.J_ISSUED]
        job.next_block = k[H.J_NEXT]
        job._pos = k[H.J_POS]
