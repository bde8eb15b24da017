"""A fused closed loop: one fio job (direct I/O, ``iodepth`` outstanding) -> block
queue (nothing ever waits in the elevator) -> HDD, compiled in one numba loop.

This is not a second model. It runs the same events the Python path runs, in the
same order, on the same state: the drive's state vector ``S`` goes through the
drive's own kernels (``hdd_submit`` / ``hdd_dispatch`` / ``hdd_destage_idle``), and
the few lines of Python around them are mirrored here step for step:

- a completion (``HDD._finish``): the drive frees its server and starts its next
  command among those already queued (or, idle with dirty data, a background
  destage); then the block layer accounts the completion (``IostatCounters.done``,
  ``allocated -= 1``); then fio's ``on_done`` records the latency and refills
  (``_Job.refill``), and each new command joins the queue after that pick;
- a submission: fio draws (op, block) from its pre-drawn chunk, the block layer
  allocates a request (``IostatCounters.start``: in flight from allocation) and,
  the elevator being empty, dispatches it at once (``HDD.submit``: tag slot from
  the free-slot stack, ``hdd_submit``, start it if the server is free);
- a background destage ends (``HDD._destage_done``).

Pending events are at most one command completion and one destage end; ties at
equal times go by the simulator's insertion number (``seq``), which the loop keeps
exactly as ``Simulator.at`` would, so the loop can hand its events back to the heap
unchanged. The loop stops before the first event that would come after a given
heap entry (the horizon: anything else scheduled in the simulation), after ``until``
(``Simulator.run(until_ns)``), when fio needs a fresh chunk of random numbers, when
the latency buffers are full, or when the job finished (``number_ios``).

State lives in a few arrays (``K`` int64 scalars: the host's slots of
``closed_loop_host`` and the drive's below, ``Q`` the queued commands per tag slot,
``FREE`` the free-slot stack, ``LAT`` latency buffers). ``HDDLoop`` moves the drive's
part between them and the ``HDD`` object (``models.workload.fio_fast`` does the
host's). Not covered (the event path runs instead): FLUSH/DISCARD/FUA commands.

Speed (fio randread 4 KB QD32 on the default 15k drive, one core): ~2.6 us per I/O,
of which the loop's own bookkeeping is ~0.3 us; the rest is the drive's kernels,
and half of it the SPTF scan (``sptf_pick``: ``reach`` for each of 32 candidates,
~38 ns each, much of it numba's out-of-line float modulo ``numba_fmod``).
"""
from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np

from . import closed_loop_host as H
from .base import Device
from .hdd import D_N, D_SECT, HDD
from .hdd_cache import hdd_destage_idle, hdd_dispatch, hdd_submit
from .closed_loop_host import (DEV, FINISHED, IDLE, NEED_DRAW, NO_IO, DRAW, HORIZON, J_BS,
                               J_OFF, RESUME, SECTOR, SEQ, T_NOW, NEV, WRITE, host_complete,
                               job_done, next_io, stop_before)

# -- the drive's K slots ---------------------------------------------------------------
# the command in service (its completion is pending) and the background destage
FIN_ON, FIN_T, FIN_SEQ, FIN_OP, FIN_OFF, FIN_SUB, FIN_Q, FIN_DISP, FIN_HIT = range(DEV, DEV + 9)
DD_ON, DD_T, DD_SEQ = DEV + 9, DEV + 10, DEV + 11
# the drive's Python-side fields
DEV_INFLIGHT, FREE_SERVER, NFREE, WCE = DEV + 12, DEV + 13, DEV + 14, DEV + 15
DESTAGING, UNACKED, BG, BG_DESTAGING = DEV + 16, DEV + 17, DEV + 18, DEV + 19
COMPLETED, BYTES_DONE = DEV + 20, DEV + 24    # 4 each (read, write, flush, discard)
BUSY, CACHE_HITS = DEV + 28, DEV + 29
KSIZE = DEV + 32

# Q columns (one row per tag slot)
Q_OP, Q_OFF, Q_SUB, Q_QUEUE, Q_DISP = range(5)
QSIZE = 5


@numba.njit(cache=False)
def _start_next(S, K, Q, FREE, now):
    # HDD._start_next: called with the server free
    if K[DEV_INFLIGHT] > 0:
        before = S[D_SECT]
        slot, done, hit = hdd_dispatch(S, now)
        FREE[K[NFREE]] = slot
        K[NFREE] += 1
        op = Q[slot, Q_OP]
        off = Q[slot, Q_OFF]
        if K[WCE] != 0:
            drained = before - S[D_SECT]
            if hit != 0 and op == WRITE:
                n = -(-(off + K[J_BS]) // SECTOR) - off // SECTOR
                drained += n
                K[UNACKED] = n * SECTOR
            K[DESTAGING] = np.int64(drained) * SECTOR
        K[FREE_SERVER] = 0
        K[BUSY] += done - now
        K[SEQ] += 1
        K[FIN_ON] = 1
        K[FIN_T] = done
        K[FIN_SEQ] = K[SEQ]
        K[FIN_OP] = op
        K[FIN_OFF] = off
        K[FIN_SUB] = Q[slot, Q_SUB]
        K[FIN_Q] = Q[slot, Q_QUEUE]
        K[FIN_DISP] = Q[slot, Q_DISP]
        K[FIN_HIT] = 1 if hit != 0 else 0
    elif K[WCE] != 0 and K[BG] == 0 and S[D_N] > 0.0:
        # HDD._start_destage: idle, write back the cache in the background
        before = S[D_SECT]
        done = hdd_destage_idle(S, now)
        K[BG_DESTAGING] = np.int64(before - S[D_SECT]) * SECTOR
        K[BG] = 1
        K[SEQ] += 1
        K[DD_ON] = 1
        K[DD_T] = done
        K[DD_SEQ] = K[SEQ]


@numba.njit(cache=False)
def _refill(S, K, Q, FREE, blocks, reads, now):
    """_Job.refill, each bio through BlockQueue._run_queue into HDD.submit."""
    K[H.J_REAPED] = 0
    while True:
        op = next_io(K, blocks, reads, now)
        if op == DRAW:
            return NEED_DRAW
        if op == NO_IO:
            return HORIZON
        off = K[J_OFF]
        K[NFREE] -= 1
        slot = FREE[K[NFREE]]
        hdd_submit(S, slot, off, off + K[J_BS], op, now)
        Q[slot, Q_OP] = op
        Q[slot, Q_OFF] = off
        Q[slot, Q_SUB] = now
        Q[slot, Q_QUEUE] = now
        Q[slot, Q_DISP] = now
        K[DEV_INFLIGHT] += 1
        if K[FREE_SERVER] != 0:
            _start_next(S, K, Q, FREE, now)


@numba.njit(cache=True)
def hdd_fio_loop(S, K, Q, FREE, blocks, reads, LAT, deps):
    """Run the closed loop from ``K[T_NOW]``; returns HORIZON, NEED_DRAW, LAT_FULL,
    FINISHED or IDLE. With ``K[RESUME]`` set it first (re)does the refill of the
    completion at ``K[T_NOW]`` (fio's ``on_done``). ``deps``: see ``compile_loop``."""
    numba.literally(deps)
    if K[RESUME] != 0:
        if _refill(S, K, Q, FREE, blocks, reads, K[T_NOW]) == NEED_DRAW:
            return NEED_DRAW
        K[RESUME] = 0
        if job_done(K):
            return FINISHED
    while True:
        fin = K[FIN_ON] != 0
        dd = K[DD_ON] != 0
        if not fin and not dd:
            return IDLE
        if fin and (not dd or K[FIN_T] < K[DD_T]
                    or (K[FIN_T] == K[DD_T] and K[FIN_SEQ] < K[DD_SEQ])):
            t = K[FIN_T]
            s = K[FIN_SEQ]
        else:
            fin = False
            t = K[DD_T]
            s = K[DD_SEQ]
        stop = stop_before(K, LAT, t, s)
        if stop >= 0:
            return stop
        K[T_NOW] = t
        K[NEV] += 1
        if not fin:
            # HDD._destage_done
            K[DD_ON] = 0
            K[BG_DESTAGING] = 0
            K[BG] = 0
            if K[FREE_SERVER] != 0:
                _start_next(S, K, Q, FREE, t)
            continue
        # HDD._finish
        K[FIN_ON] = 0
        op = K[FIN_OP]
        sub = K[FIN_SUB]
        qns = K[FIN_Q]
        K[UNACKED] = 0
        K[DESTAGING] = 0
        K[FREE_SERVER] = 1
        K[DEV_INFLIGHT] -= 1
        K[COMPLETED + op] += 1
        K[BYTES_DONE + op] += K[J_BS]
        if K[FIN_HIT] != 0:
            K[CACHE_HITS] += 1
        _start_next(S, K, Q, FREE, t)
        # BlockQueue._complete, then _Job.on_done
        if host_complete(K, LAT, op, sub, qns, t):
            K[RESUME] = 1
            if _refill(S, K, Q, FREE, blocks, reads, t) == NEED_DRAW:
                return NEED_DRAW
            K[RESUME] = 0
        if job_done(K):
            return FINISHED


@lru_cache(maxsize=1)
def _entry():
    f64, i64, i64_2, b1 = (H.array_type(np.float64, 1), H.array_type(np.int64, 1),
                           H.array_type(np.int64, 2), H.array_type(np.bool_, 1))
    return H.compile_loop(hdd_fio_loop, (f64, i64, i64_2, i64, i64, b1, i64_2))


class HDDLoop:
    """The drive's side of a hand-over: ``load`` its state (and its pending events,
    taken off the heap) into ``K``/``Q``/``FREE``, ``run`` the loop, ``store`` back
    (``IORequest`` objects in the tag slots, events in the heap with their original
    insertion numbers)."""

    # the Python the loop mirrors (fingerprinted by models.workload.fio_fast)
    MIRRORED = (HDD.submit, HDD._start_next, HDD._finish, HDD._start_destage,
                HDD._destage_done, Device.can_accept)
    # the completion's call chain below BlockQueue._complete (the hand-over runs in it)
    FINISH = (HDD._finish,)
    KSIZE = KSIZE

    def __init__(self, dev: HDD) -> None:
        self.dev = dev
        self.Q = np.zeros((dev.queue_depth, QSIZE), np.int64)
        self.FREE = np.zeros(dev.queue_depth, np.int64)

    @staticmethod
    def reason(dev) -> str | None:
        """Why this drive cannot take the loop (None: it can); compiles the loop."""
        return _entry()[2] if type(dev) is HDD else f"device kind {dev.kind}"

    def own_events(self, heap):
        """The drive's heap entries (its completion, its destage end), or None if it
        has an event the loop does not know."""
        dev = self.dev
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
                return None
        if (fin is None) != bool(dev.free_servers) or (dd is not None) != dev._bg_destage:
            return None
        return [e for e in (fin, dd) if e is not None]

    def load(self, K, events, ours) -> bool:
        """Fill the drive's slots of K; False if a command is not the job's."""
        dev, Q = self.dev, self.Q
        n = 0
        for i, req in enumerate(dev._slots):
            if req is None:
                continue
            row = ours(req)
            if row is None:
                return False
            Q[i] = row
            n += 1
        for t, seq, fn, arg in events:
            if fn.__func__ is HDD._finish:
                row = ours(arg)
                if row is None:
                    return False
                K[FIN_ON], K[FIN_T], K[FIN_SEQ] = 1, t, seq
                K[FIN_OP], K[FIN_OFF], K[FIN_SUB], K[FIN_Q], K[FIN_DISP] = row
                K[FIN_HIT] = 1 if arg.cache_hit else 0
                n += 1
            else:
                K[DD_ON], K[DD_T], K[DD_SEQ] = 1, t, seq
        if n != dev.inflight:
            return False
        free = dev._free
        self.FREE[:len(free)] = free
        K[NFREE] = len(free)
        K[DEV_INFLIGHT] = dev.inflight
        K[FREE_SERVER] = dev.free_servers
        K[WCE] = 1 if dev._wce else 0
        K[DESTAGING] = dev._destaging_bytes
        K[UNACKED] = dev._unacked_bytes
        K[BG] = 1 if dev._bg_destage else 0
        K[BG_DESTAGING] = dev._bg_destaging_bytes
        K[COMPLETED:COMPLETED + 4] = dev.completed
        K[BYTES_DONE:BYTES_DONE + 4] = dev.bytes_done
        K[BUSY] = dev.busy_ns
        K[CACHE_HITS] = dev.cache_hits
        return True

    def run(self, K, blocks, reads, LAT) -> int:
        loop, deps, _ = _entry()
        return loop(self.dev.S, K, self.Q, self.FREE, blocks, reads, LAT, deps)

    def store(self, k: list, restore, make_request) -> None:
        """Write the drive's state back from ``k`` (K as a list); pending events go
        back through ``restore`` (``Simulator.restore``)."""
        dev = self.dev
        free = self.FREE[:k[NFREE]].tolist()
        dev._free = free
        slots = [None] * dev.queue_depth
        for i in set(range(dev.queue_depth)) - set(free):
            slots[i] = make_request(*self.Q[i].tolist())
        dev._slots = slots
        if k[FIN_ON]:
            req = make_request(k[FIN_OP], k[FIN_OFF], k[FIN_SUB], k[FIN_Q], k[FIN_DISP])
            req.cache_hit = bool(k[FIN_HIT])
            restore(k[FIN_T], k[FIN_SEQ], dev._finish, req)
        if k[DD_ON]:
            restore(k[DD_T], k[DD_SEQ], dev._destage_done, None)
        dev.inflight = k[DEV_INFLIGHT]
        dev.free_servers = k[FREE_SERVER]
        dev._destaging_bytes = k[DESTAGING]
        dev._unacked_bytes = k[UNACKED]
        dev._bg_destage = bool(k[BG])
        dev._bg_destaging_bytes = k[BG_DESTAGING]
        dev.completed[:] = k[COMPLETED:COMPLETED + 4]
        dev.bytes_done[:] = k[BYTES_DONE:BYTES_DONE + 4]
        dev.busy_ns = k[BUSY]
        dev.cache_hits = k[CACHE_HITS]
