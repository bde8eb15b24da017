"""A fused closed loop: one fio job -> block queue (nothing ever waits in the
elevator) -> SSD, compiled in one numba loop. The HDD's twin (``hdd_closed_loop``
says what "fused" means); here the drive's side mirrors:

- a submission (``SSD.submit`` -> ``Device.submit`` -> ``Device._start_next`` ->
  ``SSD.service_ns``): every accepted command is in service at once (one server per
  NCQ tag); the controller is a calendar (``_ctrl_free``); ``read_cmd`` /
  ``write_cmd`` of ``ssd_kernels`` reserve flash, channels and the host link; a
  cached write is acknowledged when its data is in the buffer and stays volatile
  (the ``_volatile`` heap, kept with ``heapq``'s exact algorithm) until programmed;
  the completion is scheduled ``int(done - now)`` later;
- a completion (``SSD._finish`` -> ``Device._finish``), then the block layer and
  fio (``closed_loop_host``).

Pending completions are one per command in flight; the next is the least (time,
insertion number), as in the simulator's heap. Not covered (the event path runs
instead): FLUSH, DISCARD, FUA.
"""
from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np

from . import closed_loop_host as H
from . import ssd_kernels as SK
from .base import Device
from .closed_loop_host import (DEV, DRAW, FINISHED, GROW, HORIZON, IDLE, J_BS, J_OFF,
                               NEED_DRAW, NEV, NO_IO, READ, RESUME, SEQ, T_NOW,
                               host_complete, job_done, next_io, stop_before)
from .ssd import SSD

# -- the drive's K slots ---------------------------------------------------------------
DEV_INFLIGHT, FREE_SERVERS, CTRL_FREE, LAST_DONE, LAST_DURABLE = range(DEV, DEV + 5)
META_DIRTY, FULL_WAITS, WAIT_NS, BUSY_SINCE, BUSY_TOTAL = range(DEV + 5, DEV + 10)
BUSY, CACHE_HITS, WCE, READ_CMD, WRITE_CMD, CAP, NVOL, NPEND = range(DEV + 10, DEV + 18)
COMPLETED, BYTES_DONE = DEV + 18, DEV + 22       # 4 each
NEGATIVE = DEV + 26                              # a negative service time was computed
NWAIT = DEV + 27                                 # open buffer-wait intervals (rows of W)
KSIZE = DEV + 28
# F (float64): link rates in bytes per ns
F_CH, F_HOST = 0, 1
# P columns: one row per pending completion (rows 0..NPEND-1)
P_T, P_SEQ, P_OP, P_OFF, P_SUB, P_Q, P_DISP, P_HIT = range(8)
PSIZE = 8


@numba.njit(cache=False)
def _vol_less(V, i, j):
    # tuple order of (durable_ns, bytes, ack_ns)
    for c in range(3):
        if V[i, c] != V[j, c]:
            return V[i, c] < V[j, c]
    return False


@numba.njit(cache=False)
def _vol_swap(V, i, j):
    for c in range(3):
        V[i, c], V[j, c] = V[j, c], V[i, c]


@numba.njit(cache=False)
def _vol_siftdown(V, start, pos):
    # heapq._siftdown, by swaps (same final layout)
    while pos > start:
        parent = (pos - 1) >> 1
        if _vol_less(V, pos, parent):
            _vol_swap(V, pos, parent)
            pos = parent
        else:
            break


@numba.njit(cache=False)
def _vol_siftup(V, pos, end):
    # heapq._siftup: move the smaller child up to a leaf, then sift down
    start = pos
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not _vol_less(V, child, right):
            child = right
        _vol_swap(V, pos, child)
        pos = child
        child = 2 * pos + 1
    _vol_siftdown(V, start, pos)


@numba.njit(cache=False)
def _service(I32, I64, OUT, F, K, V, W, op, off, size, now):
    """SSD.service_ns (read or non-FUA write); returns the completion's delay."""
    if op == READ:
        t = max(now, K[CTRL_FREE]) + K[READ_CMD]
        K[CTRL_FREE] = t
        done = SK.read_cmd(I32, I64, F[F_CH], F[F_HOST], off, size, t, now)
    else:
        t = max(now, K[CTRL_FREE]) + K[WRITE_CMD]
        K[CTRL_FREE] = t
        ack = SK.write_cmd(I32, I64, F[F_CH], F[F_HOST], K[CAP], off, size, t, now)
        durable = OUT[1]
        waited = OUT[2]
        if waited > 0:
            K[FULL_WAITS] += 1
            n = K[NWAIT]
            k = 0
            for i in range(n):                       # intervals ended by now are done
                if W[i, 1] <= now:
                    K[WAIT_NS] += W[i, 1] - W[i, 0]
                else:
                    W[k, 0] = W[i, 0]
                    W[k, 1] = W[i, 1]
                    k += 1
            W[k, 0] = t
            W[k, 1] = t + waited
            K[NWAIT] = k + 1
        if K[WCE] != 0:
            done = ack
            n = K[NVOL]
            while n > 0 and V[0, 0] <= now:          # heappop
                n -= 1
                if n > 0:
                    for c in range(3):
                        V[0, c] = V[n, c]
                    _vol_siftup(V, 0, n)
            V[n, 0] = durable                        # heappush
            V[n, 1] = size
            V[n, 2] = done
            _vol_siftdown(V, 0, n)
            K[NVOL] = n + 1
        else:
            done = max(ack, durable)
        if durable > K[LAST_DURABLE]:
            K[LAST_DURABLE] = durable
        K[META_DIRTY] = 1
    if done > K[LAST_DONE]:
        K[LAST_DONE] = done
    return done - now


@numba.njit(cache=False)
def _refill(I32, I64, OUT, F, K, P, V, W, blocks, reads, now):
    """_Job.refill, each bio through BlockQueue._run_queue into SSD.submit."""
    K[H.J_REAPED] = 0
    while True:
        if K[NVOL] >= V.shape[0] or K[NWAIT] >= W.shape[0]:
            return GROW
        op = next_io(K, blocks, reads, now)
        if op == DRAW:
            return NEED_DRAW
        if op == NO_IO:
            return HORIZON
        off = K[J_OFF]
        size = K[J_BS]
        if K[DEV_INFLIGHT] == 0:
            K[BUSY_SINCE] = now
        K[DEV_INFLIGHT] += 1
        # Device._start_next (a server is free: the command was accepted)
        delay = _service(I32, I64, OUT, F, K, V, W, op, off, size, now)
        if delay < 0:
            K[NEGATIVE] = 1
        K[FREE_SERVERS] -= 1
        K[BUSY] += delay
        K[SEQ] += 1
        r = K[NPEND]
        K[NPEND] = r + 1
        P[r, P_T] = now + delay
        P[r, P_SEQ] = K[SEQ]
        P[r, P_OP] = op
        P[r, P_OFF] = off
        P[r, P_SUB] = now
        P[r, P_Q] = now
        P[r, P_DISP] = now
        P[r, P_HIT] = 0


@numba.njit(cache=True)
def ssd_fio_loop(I32, I64, OUT, F, K, P, V, W, blocks, reads, LAT, deps):
    """Run the closed loop from ``K[T_NOW]``; returns HORIZON, NEED_DRAW, LAT_FULL,
    FINISHED, IDLE or GROW (the volatile-write heap ``V`` needs more rows)."""
    numba.literally(deps)
    if K[RESUME] != 0:
        st = _refill(I32, I64, OUT, F, K, P, V, W, blocks, reads, K[T_NOW])
        if st != HORIZON:
            return st
        K[RESUME] = 0
        if job_done(K):
            return FINISHED
    while True:
        n = K[NPEND]
        if n == 0:
            return IDLE
        r = 0
        for i in range(1, n):
            if P[i, P_T] < P[r, P_T] or (P[i, P_T] == P[r, P_T] and P[i, P_SEQ] < P[r, P_SEQ]):
                r = i
        t = P[r, P_T]
        stop = stop_before(K, LAT, t, P[r, P_SEQ])
        if stop >= 0:
            return stop
        if K[NEGATIVE] != 0:
            return IDLE
        K[T_NOW] = t
        K[NEV] += 1
        op = P[r, P_OP]
        sub = P[r, P_SUB]
        qns = P[r, P_Q]
        hit = P[r, P_HIT]
        for c in range(PSIZE):
            P[r, c] = P[n - 1, c]
        K[NPEND] = n - 1
        # SSD._finish, Device._finish
        if K[DEV_INFLIGHT] == 1:
            K[BUSY_TOTAL] += t - K[BUSY_SINCE]
        K[FREE_SERVERS] += 1
        K[DEV_INFLIGHT] -= 1
        K[COMPLETED + op] += 1
        K[BYTES_DONE + op] += K[J_BS]
        if hit != 0:
            K[CACHE_HITS] += 1
        # BlockQueue._complete, then _Job.on_done
        if host_complete(K, LAT, op, sub, qns, t):
            K[RESUME] = 1
            st = _refill(I32, I64, OUT, F, K, P, V, W, blocks, reads, t)
            if st != HORIZON:
                return st
            K[RESUME] = 0
        if job_done(K):
            return FINISHED


@lru_cache(maxsize=1)
def _entry():
    i32, i64, f64, i64_2, b1 = (H.array_type(np.int32, 1), H.array_type(np.int64, 1),
                                H.array_type(np.float64, 1), H.array_type(np.int64, 2),
                                H.array_type(np.bool_, 1))
    return H.compile_loop(ssd_fio_loop, (i32, i64, i64, f64, i64, i64_2, i64_2, i64_2, i64, b1,
                                         i64_2))


class SSDLoop:
    """The drive's side of a hand-over (see ``HDDLoop``)."""

    MIRRORED = (SSD.submit, SSD._finish, SSD.can_accept, SSD.service_ns, SSD._read,
                SSD._write, Device.submit, Device._start_next, Device._finish, Device.pick)
    FINISH = (Device._finish, SSD._finish)
    KSIZE = KSIZE

    def __init__(self, dev: SSD) -> None:
        self.dev = dev
        self.P = np.zeros((dev.queue_depth, PSIZE), np.int64)
        self.V = np.zeros((max(64, 2 * dev.queue_depth), 3), np.int64)
        self.W = np.zeros((dev.queue_depth + 2, 2), np.int64)
        self.F = np.array([dev._ch_bpns, dev._host_bpns], np.float64)

    @staticmethod
    def reason(dev) -> str | None:
        """Why this drive cannot take the loop (None: it can); compiles the loop."""
        return _entry()[2] if type(dev) is SSD else f"device kind {dev.kind}"

    def own_events(self, heap):
        dev = self.dev
        out = []
        for e in heap:
            fn = e[2]
            if getattr(fn, "__self__", None) is not dev:
                continue
            if fn.__func__ is not SSD._finish:
                return None
            out.append(e)
        if len(out) != dev.n_servers - dev.free_servers or dev._flush_pending or dev.queue:
            return None
        return out

    def load(self, K, events, ours) -> bool:
        dev, P = self.dev, self.P
        if len(events) != dev.inflight:
            return False
        for r, (t, seq, fn, req) in enumerate(events):
            row = ours(req)
            if row is None:
                return False
            P[r, :P_OP] = t, seq
            P[r, P_OP:P_HIT] = row
            P[r, P_HIT] = 1 if req.cache_hit else 0
        vol = dev._volatile
        if len(vol) > self.V.shape[0]:
            self.V = np.zeros((2 * len(vol), 3), np.int64)
        if vol:
            self.V[:len(vol)] = vol
        K[NVOL] = len(vol)
        waits = dev._waits
        if len(waits) >= self.W.shape[0]:
            self.W = np.zeros((2 * len(waits) + 2, 2), np.int64)
        if waits:
            self.W[:len(waits)] = waits
        K[NWAIT] = len(waits)
        K[NPEND] = len(events)
        K[DEV_INFLIGHT] = dev.inflight
        K[FREE_SERVERS] = dev.free_servers
        K[CTRL_FREE] = dev._ctrl_free
        K[LAST_DONE] = dev._last_done
        K[LAST_DURABLE] = dev._last_durable
        K[META_DIRTY] = 1 if dev._meta_dirty else 0
        K[FULL_WAITS] = dev.cache_full_waits
        K[WAIT_NS] = dev._wait_done
        K[BUSY_SINCE] = dev._busy_since
        K[BUSY_TOTAL] = dev._busy_total
        K[BUSY] = dev.busy_ns
        K[CACHE_HITS] = dev.cache_hits
        K[WCE] = 1 if dev.cfg.write_cache else 0
        K[READ_CMD] = dev._read_cmd
        K[WRITE_CMD] = dev._write_cmd
        K[CAP] = dev._cache_cap
        K[COMPLETED:COMPLETED + 4] = dev.completed
        K[BYTES_DONE:BYTES_DONE + 4] = dev.bytes_done
        K[NEGATIVE] = 0
        return True

    def run(self, K, blocks, reads, LAT) -> int:
        loop, deps, _ = _entry()
        dev = self.dev
        while True:
            st = loop(dev._i32, dev._i64, dev._out, self.F, K, self.P, self.V, self.W, blocks,
                      reads, LAT, deps)
            if st != GROW:
                return st
            if K[NVOL] >= self.V.shape[0]:
                V = np.zeros((2 * self.V.shape[0], 3), np.int64)
                V[:self.V.shape[0]] = self.V
                self.V = V
            if K[NWAIT] >= self.W.shape[0]:
                W = np.zeros((2 * self.W.shape[0], 2), np.int64)
                W[:self.W.shape[0]] = self.W
                self.W = W

    def store(self, k: list, restore, make_request) -> None:
        dev = self.dev
        for row in self.P[:k[NPEND]].tolist():
            req = make_request(*row[P_OP:P_HIT])
            req.cache_hit = bool(row[P_HIT])
            restore(row[P_T], row[P_SEQ], dev._finish, req)
        dev._volatile = [tuple(v) for v in self.V[:k[NVOL]].tolist()]
        dev.inflight = k[DEV_INFLIGHT]
        dev.free_servers = k[FREE_SERVERS]
        dev._ctrl_free = k[CTRL_FREE]
        dev._last_done = k[LAST_DONE]
        dev._last_durable = k[LAST_DURABLE]
        dev._meta_dirty = bool(k[META_DIRTY])
        dev.cache_full_waits = k[FULL_WAITS]
        dev._wait_done = k[WAIT_NS]
        dev._waits = [tuple(w) for w in self.W[:k[NWAIT]].tolist()]
        dev._busy_since = k[BUSY_SINCE]
        dev._busy_total = k[BUSY_TOTAL]
        dev.busy_ns = k[BUSY]
        dev.cache_hits = k[CACHE_HITS]
        dev.completed[:] = k[COMPLETED:COMPLETED + 4]
        dev.bytes_done[:] = k[BYTES_DONE:BYTES_DONE + 4]
        if k[NEGATIVE]:
            raise RuntimeError(f"{dev.name}: negative service time")
