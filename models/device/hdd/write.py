"""HDD firmware, the write side: write-through and cached writes, the write cache's
destaging, FLUSH (SYNCHRONIZE CACHE) and zero-latency transfers, compiled over the
drive's state vector (``mech``). Called by the dispatch step in ``cache``.

Modelled:
- A media (write-through) write positions for at least the minimum seek delay; sector
  i is written once it crossed the link; after the last the drive reconnects to send
  status. A queued write that starts where the media write under way ends continues
  it (``combine_seq_writes``, DiskSim's BUFFER_APPEND): the controller took its
  command and data in while the other was on the platter, one command after another,
  so it pays no overhead, minimum seek or lost revolution when its data is in time.
- Zero-latency write (``write_zero_latency``, DiskSim's Immediate buffer write): a
  media write whose data is all in the buffer when the head lands on its first track
  (a destage of cached writes; a write-through write whose data crossed the link
  during the seek) writes from the next sector boundary in its sectors, then the ones
  before it as they come round; a write still arriving over the link goes in LBA
  order. Zero-latency reads use the same routine.
- Write cache (WCE): writes complete once transferred into the buffer; dirty extents
  (sequential writes coalesce, up to a segment's size: DiskSim's write segments) are
  destaged oldest-window SPTF (the drive considers the ``P_DWIN`` oldest extents); an
  extent that continues the last destage's sectors at the instant it ended is written
  on without a new positioning. A write that does not fit under the dirty limit waits
  for destages; FLUSH waits for every dirty extent and for a destage under way. FUA
  writes and writes larger than the cache go to the media.

Deliberately not modelled: overlap of a rewrite with older dirty data (each is
destaged), a partial destage (a write that finds the cache full waits for a whole
extent - up to a segment - to be written, not for just the room it needs).
"""
from __future__ import annotations

import math

import numba

from .buffer import seg_write, stream_stop
from .layout import locate, track_run
from .mech import appends, arrive, reach, xfer
from .state import (C_DESTAGES, C_SEEKS, D_LAST_END, D_LAST_T, D_N, D_SECT, DCOLS, H_CYL,
                        H_HEAD, H_TFREE, O_DIRTY, O_EXT, P_DCAP, P_DWIN, P_OVH_FL, P_OVH_WH,
                        P_OVH_WM, P_REV, P_SEGSEC, P_WCE, P_WCMAX, W_CTL, X_BUSW, X_MINSEEK,
                        X_OVH_PREP, X_OVH_RESEL, X_OVH_WCOMP, X_ZERO_LAT_W, EPS_NS)


@numba.njit(cache=True)
def zero_latency(S, a, n, c0, h0, t0, ts, te, write, t_min):
    """Zero-latency access (DiskSim Immediate buffer read / write, disksim_diskctlr.c
    disk_buffer_seekdone / disk_buffer_sector_done; mech_g1 dm_latency): the head,
    landed on the first track of an access of n sectors at a (arm free from ``t0``, on
    the track no earlier than ``t_min``, ``ts``/``te`` its in-order first sector start
    and last sector end), reads or writes from the next sector boundary when that
    falls inside the access's sectors on the track, then the ones before it as they
    come round. Returns (when the head has read or written every sector, when the
    first track's sectors are all done - 0 if the head did not land inside - and how
    many of them went in order and how many before).

    Tracks after the first follow as usual (head switch, skewed first sector) from
    the end of the first track's part. Slipped sectors inside the track are counted as
    LBAs when sizing the part read first (the time is the physical one)."""
    c1, h1, s1, spt1, ang1, k, span = track_run(S, a, n)
    sect = S[P_REV] / spt1
    ta = max(arrive(S, c0, h0, t0, c1, h1, write), t_min)
    wait = ts - ta
    if wait <= EPS_NS or wait >= S[P_REV]:
        return te, 0.0, 0.0, 0.0
    q = math.ceil((S[P_REV] - wait) / sect - 1e-9)   # sector boundary past a's start
    if q < 1.0 or q >= span:
        return te, 0.0, 0.0, 0.0
    t1 = ts + q * sect          # [a + q, end of track part) was read before ts
    t_arm = t1
    if k < n:
        t_arm = xfer(S, a + k, n - k, c1, h1, t1, write, 0.0)[2]
    return t_arm, t1, q, min(k, span) - q


@numba.njit(cache=True)
def destage_one(S, t):
    """Write one dirty extent to the media from time ``t`` (SPTF over the oldest
    ``P_DWIN`` extents); returns when it is on the platter."""
    t_free, c0, h0 = stream_stop(S, t)
    od = int(S[O_DIRTY])
    dn = int(S[D_N])
    win = min(dn, int(S[P_DWIN]))
    best = 0
    best_t = math.inf
    for i in range(win):
        c, h, s, spt, ang = locate(S, S[od + i * DCOLS])
        tt = reach(S, c0, h0, t_free, c, h, ang, True, 0.0)
        if tt < best_t:
            best_t = tt
            best = i
    a = S[od + best * DCOLS]
    n = S[od + best * DCOLS + 1]
    ext = int(S[O_EXT])
    if S[D_LAST_T] > 0.0 and a == S[D_LAST_END] and t_free == S[D_LAST_T] == S[H_TFREE]:
        # the extent starts where the last destage ended, at the instant it ended (the
        # arm did nothing since): the head writes on, as through a track switch
        ts, tf, te, c, h = xfer(S, a, n, c0, h0, t_free, False, 0.0)
    else:
        t_min = t_free + S[ext + X_MINSEEK]
        ts, tf, te, c, h = xfer(S, a, n, c0, h0, t_free, True, t_min)
        if S[ext + X_ZERO_LAT_W] > 0.0:       # the extent's data is all in the buffer
            te = zero_latency(S, a, n, c0, h0, t_free, ts, te, True, t_min)[0]
    S[D_LAST_END] = a + n
    S[D_LAST_T] = te
    for j in range(od + best * DCOLS, od + (dn - 1) * DCOLS):
        S[j] = S[j + DCOLS]
    S[D_N] = dn - 1
    S[D_SECT] -= n
    S[H_CYL] = c
    S[H_HEAD] = h
    S[H_TFREE] = te
    S[C_DESTAGES] += 1.0
    return te


@numba.njit(cache=True)
def write_cacheable(S, n, fua):
    return S[P_WCE] > 0.0 and fua == 0.0 and n <= S[P_WCMAX]


@numba.njit(cache=True)
def write_data(S, a, n, t_start):
    """A write-through command the controller starts on at ``t_start``: its overhead,
    data preparation and data over the link. Returns (when its first sector may go to
    the platter - a link slower than the media delays it so that the last is in before
    its turn -, when all of it is in)."""
    ext = int(S[O_EXT])
    busw = S[ext + X_BUSW]
    spt = locate(S, a)[3]
    t = t_start + S[P_OVH_WM] + S[ext + X_OVH_PREP]
    return t + busw + (n - 1.0) * max(busw - S[P_REV] / spt, 0.0), t + n * busw


@numba.njit(cache=True)
def serve_write(S, a, n, fua, now, t_arrived):
    """A write: into the write cache (the command's overhead, data preparation, the
    data over the link, status), or to the media (the arm positions for at least the
    minimum seek delay; sector i is written once it crossed the link; after the last
    the drive reconnects to send status). A media write that ``appends`` to the last
    one was handled while that one was on the platter (DiskSim's BUFFER_APPEND): its
    sectors follow on from the instant the other ended, once its data is in."""
    ext = int(S[O_EXT])
    busw = S[ext + X_BUSW]
    cacheable = write_cacheable(S, n, fua)
    if not cacheable and appends(S, a, t_arrived):
        # the controller takes commands in one at a time: this one once it arrived and
        # the one before was in
        c0, h0 = S[H_CYL], S[H_HEAD]
        seg_write(S, a, a + n)
        data, taken_in = write_data(S, a, n, max(t_arrived, S[W_CTL]))
        S[W_CTL] = taken_in
        ts, tf, te, c, h = xfer(S, a, n, c0, h0, S[H_TFREE], False, data)
        return media_written(S, a, n, te, c, h)
    t_free, c0, h0 = stream_stop(S, now)     # a write stops read-ahead on arrival
    seg_write(S, a, a + n)
    if cacheable:
        t = now + S[P_OVH_WH] + S[ext + X_OVH_PREP] + n * busw
        while S[D_N] > 0.0 and (S[D_SECT] + n > S[P_WCMAX] or S[D_N] >= S[P_DCAP]):
            t = destage_one(S, t)
        od = int(S[O_DIRTY])
        dn = int(S[D_N])
        last = od + (dn - 1) * DCOLS
        if dn > 0 and S[last] + S[last + 1] == a and (
                S[P_SEGSEC] <= 0.0 or S[last + 1] + n <= S[P_SEGSEC]):
            S[last + 1] += n      # sequential writes coalesce, up to a segment's size
        else:
            S[od + dn * DCOLS] = a
            S[od + dn * DCOLS + 1] = n
            S[D_N] = dn + 1
        S[D_SECT] += n
        return t + S[ext + X_OVH_WCOMP], 1
    t_free = max(t_free, now + S[P_OVH_WM])
    # the first sector may go once it is in
    data, taken_in = write_data(S, a, n, now)
    S[W_CTL] = taken_in
    t_min = t_free + S[ext + X_MINSEEK]
    ts, tf, te, c, h = xfer(S, a, n, c0, h0, t_free, True, max(data, t_min))
    if S[ext + X_ZERO_LAT_W] > 0.0:
        # zero-latency write only when every sector is in the buffer as the head lands
        c1, h1, s1, spt1, ang1 = locate(S, a)
        if taken_in <= max(arrive(S, c0, h0, t_free, c1, h1, True), t_min):
            te = zero_latency(S, a, n, c0, h0, t_free, ts, te, True, t_min)[0]
    return media_written(S, a, n, te, c, h)


@numba.njit(cache=True)
def media_written(S, a, n, te, c, h):
    """A write-through write of [a, a + n) ended on the platter at ``te``, the head on
    (c, h): the arm's state, and (completion time, 0) - the drive reconnects to send
    status."""
    ext = int(S[O_EXT])
    S[D_LAST_END] = a + n
    S[D_LAST_T] = te
    S[H_CYL] = c
    S[H_HEAD] = h
    S[H_TFREE] = te
    S[C_SEEKS] += 1.0
    return te + S[ext + X_OVH_RESEL] + S[ext + X_OVH_WCOMP], 0


@numba.njit(cache=True)
def serve_flush(S, now):
    """FLUSH CACHE: done when every cached write is on the platter - the ones still
    dirty destaged now, and an extent a background destage is writing (the arm busy
    until ``H_TFREE``) finished."""
    t = max(now + S[P_OVH_FL], S[H_TFREE])
    while S[D_N] > 0.0:
        t = destage_one(S, t)
    return t
