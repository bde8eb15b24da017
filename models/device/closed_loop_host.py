"""The host side of the fused closed loops (``hdd_closed_loop``, ``ssd_closed_loop``):
a fio job's draws and accounting and the block queue's request accounting, compiled.

Each function mirrors Python it stands for, line for line, on int64 scalars in one
array ``K`` (slots below; a device loop keeps its own fields from ``DEV`` on):

- ``next_io``: ``_Job.refill``'s loop body with ``iodepth_batch_submit`` = 1 (one bio
  per ``submit``), ``_Job._draw`` over the chunk fio drew in Python, and the block
  layer's ``_new_request`` (a request is in flight for iostat from allocation;
  nothing waits or merges because the elevator is empty) and, with ``deadline``,
  its bookkeeping when it adds and dispatches the request (``_deadline``);
- ``host_complete``: ``BlockQueue._complete`` (``IostatCounters.done``, ``allocated``)
  then ``_Job.on_done`` (latency and bytes of I/Os submitted in the measured window).

It also holds what every fused loop needs around that: the stop rule (the horizon,
``until``), and compiling a loop once per fingerprint of everything it calls (numba's
own cache does not see edits in other files).
"""
from __future__ import annotations

import hashlib

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

# -- K slots (int64) ---------------------------------------------------------------------
T_NOW, SEQ, NEV, H_T, H_SEQ, UNTIL, RESUME = range(7)
# the block queue and its /proc/diskstats counters
ALLOCATED, C_INFLIGHT, C_LAST, C_IOT, C_TIQ = 7, 8, 9, 10, 11
C_IOS, C_SEC, C_TCK = 12, 15, 18        # 3 each (read, write, flush)
# the fio job
J_INFLIGHT, J_REAPED, J_ISSUED, J_LIMIT, J_IODEPTH, J_CMIN, J_MEASURE = range(21, 28)
J_BS, J_REGION, J_NBLOCKS, J_RANDOM, J_MIXED, J_FIXEDOP, J_NEXT, J_POS, J_N = range(28, 37)
J_OFF = 37                              # offset of the I/O next_io just drew
J_BYTES = 38                            # 2 (read, write): bytes measured in this call
LAT_N = 40                              # 2: latencies in LAT[op] from this call
# the deadline elevator's state (Deadline, and its two SortedQueues)
DL_ON, DL_BATCH_DIR, DL_BATCHING, DL_STARVED, DL_FIFO_BATCH = range(42, 47)
DL_LK_SET, DL_LK_OFF, DL_LK_SEQ = 47, 49, 51   # 2 each: last_key per direction
DL_SQSEQ = 53                                   # 2: SortedQueue._seq per direction
DEV = 64                                # first slot of the device loop's own fields

# return codes of the loops
HORIZON, NEED_DRAW, LAT_FULL, FINISHED, IDLE, GROW = 0, 1, 2, 3, 4, 5

READ, WRITE = 0, 1
SECTOR = 512
NO_IO, DRAW = -1, -2


@numba.njit(cache=False)
def advance(K, now):
    # IostatCounters._advance
    dt = now - K[C_LAST]
    if dt != 0 and K[C_INFLIGHT] != 0:
        K[C_IOT] += dt
        K[C_TIQ] += dt * K[C_INFLIGHT]
    K[C_LAST] = now


@numba.njit(cache=False)
def next_io(K, blocks, reads, now):
    """The next bio of a refill: its op (offset in ``K[J_OFF]``), allocated in the
    block layer; NO_IO when the refill is over, DRAW when fio must draw a chunk
    first (nothing done yet)."""
    if K[J_INFLIGHT] >= K[J_IODEPTH]:
        return NO_IO
    if K[J_LIMIT] > 0 and K[J_ISSUED] >= K[J_LIMIT]:
        return NO_IO
    # _Job._draw
    if (K[J_RANDOM] != 0 or K[J_MIXED] != 0) and K[J_POS] >= K[J_N]:
        return DRAW
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
    K[J_OFF] = K[J_REGION] + block * K[J_BS]
    # BlockQueue.submit -> _place -> _new_request
    K[ALLOCATED] += 1
    advance(K, now)
    K[C_INFLIGHT] += 1
    if K[DL_ON] != 0:
        _deadline(K, op, K[J_OFF])
    return op


@numba.njit(cache=False)
def _deadline(K, op, off):
    """Deadline._add, then Deadline._pop with this request the only one queued: it is
    taken either way, but the batch state and the sort keys (``offset << SEQ_BITS |
    seq``, kept here as the pair) move as in the Python elevator."""
    d = READ if op == READ else WRITE
    K[DL_SQSEQ + d] += 1
    seq = K[DL_SQSEQ + d]
    after_last = K[DL_LK_SET + d] != 0 and (
        off > K[DL_LK_OFF + d] or (off == K[DL_LK_OFF + d] and seq > K[DL_LK_SEQ + d]))
    if not (K[DL_BATCH_DIR] == d and after_last and K[DL_BATCHING] < K[DL_FIFO_BATCH]):
        # a new batch (the request is not the next in sector order of this one)
        if d == WRITE:
            K[DL_STARVED] = 0
        K[DL_BATCH_DIR] = d
        K[DL_BATCHING] = 0
    K[DL_LK_SET + d] = 1
    K[DL_LK_OFF + d] = off
    K[DL_LK_SEQ + d] = seq
    K[DL_BATCHING] += 1


@numba.njit(cache=False)
def host_complete(K, LAT, op, sub, qns, t):
    """BlockQueue._complete and _Job.on_done for a request of the job that completed
    at ``t``; True if on_done refills now."""
    bs = K[J_BS]
    advance(K, t)
    K[C_INFLIGHT] -= 1
    K[C_IOS + op] += 1
    K[C_SEC + op] += bs // SECTOR
    K[C_TCK + op] += t - qns
    K[ALLOCATED] -= 1
    K[J_INFLIGHT] -= 1
    K[J_REAPED] += 1
    if sub >= K[J_MEASURE]:
        LAT[op, K[LAT_N + op]] = t - sub
        K[LAT_N + op] += 1
        K[J_BYTES + op] += bs
    return K[J_REAPED] >= K[J_CMIN] or K[J_INFLIGHT] == 0


@numba.njit(cache=False)
def job_done(K):
    # on_done's last test (numjobs = 1: the job group then stops)
    return K[J_INFLIGHT] == 0 and K[J_LIMIT] > 0 and K[J_ISSUED] >= K[J_LIMIT]


@numba.njit(cache=False)
def stop_before(K, LAT, t, s):
    """Return code if the event (t, s) must not run in this call, else -1."""
    if t > K[UNTIL] or t > K[H_T] or (t == K[H_T] and s > K[H_SEQ]):
        return HORIZON
    cap = LAT.shape[1]
    if K[LAT_N] >= cap or K[LAT_N + 1] >= cap:
        return LAT_FULL
    return -1


# -- compiling and caching -----------------------------------------------------------
# numba's on-disk cache is keyed on the file a function is defined in: an edit to a
# device kernel a loop calls (hdd_cache, ssd_kernels, ...) would leave a stale compiled
# loop behind. So each loop takes the fingerprint of everything it reaches as a literal
# argument: the cache holds one entry per fingerprint, and a changed kernel means a
# fresh compile, never a stale one.
def _code_bytes(code) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for c in code.co_consts:
        parts.append(_code_bytes(c) if hasattr(c, "co_code") else repr(c).encode())
    return b"\0".join(parts)


def deps_fingerprint(entry: CPUDispatcher) -> int:
    """Hash of the bytecode of every compiled function ``entry`` reaches and of the
    module constants they read (numba freezes globals at compile time)."""
    h = hashlib.sha1()
    seen = set()
    todo = [entry]
    while todo:
        fn = todo.pop().py_func
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


def compile_loop(entry: CPUDispatcher, arg_types: tuple):
    """``entry`` compiled (or loaded from numba's cache) for ``arg_types`` plus the
    literal fingerprint; returns (callable, fingerprint to pass as last argument,
    None) or, if it does not compile (a kernel it calls changed its signature),
    (None, None, why)."""
    from numba.core import types
    deps = deps_fingerprint(entry)
    try:
        return entry.compile(tuple(arg_types) + (types.literal(deps),)), deps, None
    except Exception as ex:     # numba's typing/lowering errors: report, run the event path
        first = str(ex).strip().splitlines()[0] if str(ex).strip() else ""
        return None, None, f"{entry.__name__} does not compile: {type(ex).__name__} {first}"


def array_type(dtype, ndim: int):
    from numba.core import types
    return types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")
