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

State lives in a few arrays (``K`` int64 scalars at the slots below, ``Q`` the
queued commands per tag slot, ``FREE`` the free-slot stack, ``LAT`` latency
buffers); ``models.workload.fio_fast`` fills them from the Python objects and
writes them back. Not covered (the event path runs instead): FLUSH/DISCARD/FUA
commands, merges, requests waiting for nr_requests, batched submission.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numba
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher

from .hdd_cache import hdd_destage_idle, hdd_dispatch, hdd_submit
from .hdd_mech import D_N, D_SECT

# -- K slots (int64) ---------------------------------------------------------------------
T_NOW, SEQ, NEV, H_T, H_SEQ, UNTIL, RESUME = 0, 1, 2, 3, 4, 5, 6
# the command in service (its completion is pending) and the background destage
FIN_ON, FIN_T, FIN_SEQ, FIN_OP, FIN_OFF, FIN_SUB, FIN_Q, FIN_DISP, FIN_HIT = range(7, 16)
DD_ON, DD_T, DD_SEQ = 16, 17, 18
# the drive's Python-side fields
DEV_INFLIGHT, FREE_SERVER, NFREE, WCE = 19, 20, 21, 22
DESTAGING, UNACKED, BG, BG_DESTAGING = 23, 24, 25, 26
COMPLETED, BYTES_DONE = 27, 31          # 4 each (read, write, flush, discard)
BUSY, CACHE_HITS = 35, 36
# the block queue and its /proc/diskstats counters
ALLOCATED, C_INFLIGHT, C_LAST, C_IOT, C_TIQ = 37, 38, 39, 40, 41
C_IOS, C_SEC, C_TCK = 42, 45, 48        # 3 each (read, write, flush)
# the fio job
J_INFLIGHT, J_REAPED, J_ISSUED, J_LIMIT, J_IODEPTH, J_CMIN, J_MEASURE = 51, 52, 53, 54, 55, 56, 57
J_BS, J_REGION, J_NBLOCKS, J_RANDOM, J_MIXED, J_FIXEDOP, J_NEXT, J_POS, J_N = range(58, 67)
J_BYTES = 67                            # 2 (read, write): bytes measured in this call
LAT_N = 69                              # 2: latencies in LAT[op] from this call
KSIZE = 72

# Q columns (one row per tag slot)
Q_OP, Q_OFF, Q_SUB, Q_QUEUE, Q_DISP = range(5)
QSIZE = 5

# return codes
HORIZON, NEED_DRAW, LAT_FULL, FINISHED, IDLE = 0, 1, 2, 3, 4

READ, WRITE = 0, 1
SECTOR = 512


def new_state(queue_depth: int, lat_capacity: int = 1 << 16):
    """Empty (K, Q, FREE, LAT) arrays for a drive of ``queue_depth`` tags."""
    return (np.zeros(KSIZE, np.int64), np.zeros((queue_depth, QSIZE), np.int64),
            np.zeros(queue_depth, np.int64), np.zeros((2, lat_capacity), np.int64))


@numba.njit(cache=False)
def _advance(K, now):
    # IostatCounters._advance
    dt = now - K[C_LAST]
    if dt != 0 and K[C_INFLIGHT] != 0:
        K[C_IOT] += dt
        K[C_TIQ] += dt * K[C_INFLIGHT]
    K[C_LAST] = now


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
    """_Job.refill with iodepth_batch_submit = 1: one bio per submit() until iodepth
    are in flight. Returns NEED_DRAW (nothing half done) when the chunk is used up."""
    K[J_REAPED] = 0
    while K[J_INFLIGHT] < K[J_IODEPTH]:
        if K[J_LIMIT] > 0 and K[J_ISSUED] >= K[J_LIMIT]:
            return HORIZON
        # _Job._draw
        if (K[J_RANDOM] != 0 or K[J_MIXED] != 0) and K[J_POS] >= K[J_N]:
            return NEED_DRAW
        i = K[J_POS]
        K[J_POS] += 1
        if K[J_RANDOM] != 0:
            block = blocks[i]
        else:
            block = K[J_NEXT]
            K[J_NEXT] = (block + 1) % K[J_NBLOCKS]
        if K[J_MIXED] != 0:
            op = READ if reads[i] else WRITE
        else:
            op = K[J_FIXEDOP]
        K[J_INFLIGHT] += 1
        K[J_ISSUED] += 1
        off = K[J_REGION] + block * K[J_BS]
        # BlockQueue.submit -> _place -> _new_request (no merge: the elevator is empty)
        K[ALLOCATED] += 1
        _advance(K, now)
        K[C_INFLIGHT] += 1
        # _run_queue -> HDD.submit
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
    return HORIZON


@numba.njit(cache=False)
def _job_done(K):
    return K[J_INFLIGHT] == 0 and K[J_LIMIT] > 0 and K[J_ISSUED] >= K[J_LIMIT]


@numba.njit(cache=True)
def hdd_fio_loop(S, K, Q, FREE, blocks, reads, LAT, deps):
    """Run the closed loop from ``K[T_NOW]``; returns one of HORIZON, NEED_DRAW,
    LAT_FULL, FINISHED, IDLE. With ``K[RESUME]`` set it first (re)does the refill of
    the completion at ``K[T_NOW]`` (fio's ``on_done``). ``deps`` is
    ``deps_fingerprint()``, a compile-time constant (see ``loop_entry``)."""
    numba.literally(deps)
    cap = LAT.shape[1]
    if K[RESUME] != 0:
        if _refill(S, K, Q, FREE, blocks, reads, K[T_NOW]) == NEED_DRAW:
            return NEED_DRAW
        K[RESUME] = 0
        if _job_done(K):
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
        if t > K[UNTIL] or t > K[H_T] or (t == K[H_T] and s > K[H_SEQ]):
            return HORIZON
        if K[LAT_N] >= cap or K[LAT_N + 1] >= cap:
            return LAT_FULL
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
        hit = K[FIN_HIT]
        bs = K[J_BS]
        K[UNACKED] = 0
        K[DESTAGING] = 0
        K[FREE_SERVER] = 1
        K[DEV_INFLIGHT] -= 1
        K[COMPLETED + op] += 1
        K[BYTES_DONE + op] += bs
        if hit != 0:
            K[CACHE_HITS] += 1
        _start_next(S, K, Q, FREE, t)
        # BlockQueue._complete
        _advance(K, t)
        K[C_INFLIGHT] -= 1
        K[C_IOS + op] += 1
        K[C_SEC + op] += bs // SECTOR
        K[C_TCK + op] += t - qns
        K[ALLOCATED] -= 1
        # _Job.on_done
        K[J_INFLIGHT] -= 1
        K[J_REAPED] += 1
        if sub >= K[J_MEASURE]:
            LAT[op, K[LAT_N + op]] = t - sub
            K[LAT_N + op] += 1
            K[J_BYTES + op] += bs
        if K[J_REAPED] >= K[J_CMIN] or K[J_INFLIGHT] == 0:
            K[RESUME] = 1
            if _refill(S, K, Q, FREE, blocks, reads, t) == NEED_DRAW:
                return NEED_DRAW
            K[RESUME] = 0
        if _job_done(K):
            return FINISHED


# -- compiling and caching -----------------------------------------------------------
# numba's on-disk cache is keyed on this file only: an edit to a drive kernel it calls
# (hdd_cache, hdd_mech) would leave a stale compiled loop behind. So the loop takes the
# fingerprint of everything it reaches as a literal argument: the cache holds one entry
# per fingerprint, and a changed drive kernel means a fresh compile, never a stale one.
def _code_bytes(code) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for c in code.co_consts:
        parts.append(_code_bytes(c) if hasattr(c, "co_code") else repr(c).encode())
    return b"\0".join(parts)


def deps_fingerprint() -> int:
    """Hash of the bytecode of every compiled function ``hdd_fio_loop`` reaches and
    of the module constants they read (numba freezes globals at compile time)."""
    h = hashlib.sha1()
    seen = set()
    todo = [hdd_fio_loop]
    while todo:
        disp = todo.pop()
        fn = disp.py_func
        if fn in seen:
            continue
        seen.add(fn)
        h.update(fn.__module__.encode() + b"." + fn.__qualname__.encode())
        h.update(_code_bytes(fn.__code__))
        g = fn.__globals__
        for name in sorted(set(fn.__code__.co_names)):
            v = g.get(name)
            if isinstance(v, CPUDispatcher):
                todo.append(v)
            elif isinstance(v, (bool, int, float, str, tuple)):
                h.update(f"{name}={v!r}".encode())
            elif isinstance(v, np.ndarray):
                h.update(name.encode() + v.tobytes())
    return int(h.hexdigest()[:15], 16)


@lru_cache(maxsize=1)
def loop_entry():
    """The compiled ``hdd_fio_loop`` for the current drive kernels, as a plain
    callable ``(S, K, Q, FREE, blocks, reads, LAT, deps)`` (loaded from numba's cache
    when this fingerprint was compiled before), and the ``deps`` value to pass."""
    deps = deps_fingerprint()
    f64 = types.Array(types.float64, 1, "C")
    i64 = types.Array(types.int64, 1, "C")
    i64_2 = types.Array(types.int64, 2, "C")
    b1 = types.Array(types.boolean, 1, "C")
    sig = (f64, i64, i64_2, i64, i64, b1, i64_2, types.literal(deps))
    return hdd_fio_loop.compile(sig), deps
