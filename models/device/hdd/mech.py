"""HDD mechanics as compiled pure functions over one float64 state vector.

What is modelled here (the LBA -> (cylinder, head, sector, angle) map is in
``layout``, the slot numbers of the state vector in ``state``): seek time by
cylinder distance (a per-distance table built
once from a measured curve or from three data-sheet points); head switch and write
settle; the platter angle as a function of absolute time (``t mod revolution``);
positioning time (arm movement, then the rotational wait until the target sector
comes under the head); media transfer across tracks and zones (each track switch
waits for the skewed first sector of the next track); the position of a read-ahead
stream at a given time; and the shortest-positioning-time-first choice among queued
commands.

Everything a compiled function needs lives in one float64 array ``S`` (a numba
call costs ~0.2 us per array argument, so the drive passes a single array): a header
of parameters and small mutable state at fixed slots, then the zone table, the seek
table, the command queue, the buffer segments, the dirty list and the extension block
(later parameters, the zones' sparing rows and the slip rows) at offsets recorded in
the header. Times in ``S`` are float nanoseconds (absolute
simulated time); LBAs and counts are exact integers stored as floats (< 2**53).
The command queue is ``queue_depth`` tag slots (rows of QCOLS); a row is occupied
while Q_CAND is set and Q_SEQ (arrival number) gives the queue order, so picking
never moves rows.

Deliberately not modelled: seek-time variance, zero-latency (out-of-order) reads
of a track, the acceleration profile beyond the seek table.
"""
from __future__ import annotations

import functools
import math

import numba
import numpy as np

from .layout import (cylinder_end, locate, lba_at, phys_of, spt_for_rate,  # noqa: F401
                         synthetic_zones, track_run, track_span, zone_index, zone_tables)
from .state import *  # noqa: F403  (the slot constants, re-exported for callers)


# -- building the state vector (plain numpy, once per drive) -----------------------------
@functools.lru_cache(maxsize=16)
def _seek_table_ns_cached(*args) -> np.ndarray:
    out = _seek_table_ns(*args)
    out.flags.writeable = False
    return out


def seek_table_ns(n_cyl: int, single_ms: float, avg_ms: float, full_ms: float,
                  curve_cyl: tuple = (), curve_ms: tuple = ()) -> np.ndarray:
    """Seek time in ns for every distance 0..n_cyl-1 (see ``_seek_table_ns``). The fit
    takes ~30 ms; drives of one model share it (an array of twelve builds it once)."""
    return _seek_table_ns_cached(int(n_cyl), float(single_ms), float(avg_ms), float(full_ms),
                                 tuple(curve_cyl), tuple(curve_ms)).copy()


def _seek_table_ns(n_cyl: int, single_ms: float, avg_ms: float, full_ms: float,
                   curve_cyl: tuple = (), curve_ms: tuple = ()) -> np.ndarray:
    """Seek time in ns for every distance 0..n_cyl-1.

    A measured curve is interpolated linearly (seek(0) = 0, flat past its last point).
    Otherwise the three data-sheet points define seek(d) = single + b*(sqrt(d) - 1)
    up to a knee K and a straight line from there to ``full_ms`` at n_cyl - 1; b and
    K are solved so that the line continues the square-root part smoothly (equal
    slope at K) and the mean over uniformly random start and end cylinders (distance
    density 2(N-d)/N^2) equals ``avg_ms``. Short seeks are acceleration-limited
    (time ~ sqrt(distance)), long ones coast at top speed (time ~ distance): Ruemmler
    & Wilkes 1994.
    """
    d = np.arange(n_cyl, dtype=np.float64)
    if len(curve_cyl):
        xs = np.concatenate(([0.0], np.asarray(curve_cyl, dtype=np.float64)))
        ys = np.concatenate(([0.0], np.asarray(curve_ms, dtype=np.float64)))
        return np.interp(d, xs, ys) * 1e6
    n = float(n_cyl)
    dmax = max(2.0, n - 1.0)
    # the fit works on a grid of distances (the mean is an integral over d)
    dg = np.unique(np.concatenate((np.arange(1.0, min(dmax, 256.0) + 1.0),
                                   np.linspace(1.0, dmax, 4096))))
    wg = np.gradient(dg) * 2.0 * (n - dg) / (n * n)
    wg /= wg.sum()

    def shape_base(k, x):
        frac = np.clip((x - k) / (dmax - k), 0.0, None)
        shape = np.where(x <= k, np.sqrt(np.minimum(x, k)) - 1.0, (np.sqrt(k) - 1.0) * (1.0 - frac))
        base = np.where(x <= k, single_ms, single_ms + (full_ms - single_ms) * frac)
        return shape, base

    best = None
    for k in np.unique(np.geomspace(2.0, dmax - 1.0, 300).astype(np.int64)).astype(np.float64):
        shape, base = shape_base(k, dg)
        mb, ms = float((wg * base).sum()), float((wg * shape).sum())
        if ms <= 0:
            continue
        b = (avg_ms - mb) / ms
        if b <= 0:
            continue
        tk = single_ms + b * (np.sqrt(k) - 1.0)
        if tk >= full_ms:
            continue
        mismatch = abs(b / (2.0 * np.sqrt(k)) - (full_ms - tk) / (dmax - k))
        if best is None or mismatch < best[0]:
            best = (mismatch, k, b)
    if best is None:
        raise ValueError("seek_avg_ms: no seek curve through these three points "
                         "(average too close to single-cylinder or full-stroke time)")
    _, k, b = best
    shape, base = shape_base(k, d)
    best = (0.0, base + b * shape)
    out = best[1]
    out[0] = 0.0
    return out * 1e6


# -- mechanics -------------------------------------------------------------------------
@numba.njit(cache=True)
def arrive(S, cyl0, head0, t_free, cyl, head, write):
    """When an arm on (cyl0, head0), free from ``t_free``, is on track (cyl, head):
    the seek or head switch, whichever is longer, plus the write settle if it moved
    (mech_g1 dm_seek_time)."""
    d = abs(cyl - cyl0)
    if d > 0:
        m = S[int(S[O_SEEK]) + int(d)]
        if head != head0 and m < S[P_HS]:
            m = S[P_HS]
    elif head != head0:
        m = S[P_HS]
    else:
        m = 0.0
    if write and m > 0.0:
        m += S[P_SETTLE]
    return t_free + m


@numba.njit(cache=True)
def reach(S, cyl0, head0, t_free, cyl, head, ang, write, t_min):
    """Absolute time at which the sector at angle ``ang`` of track (cyl, head) starts
    passing under the head, for an arm on (cyl0, head0) free from ``t_free``; the
    transfer may not start before ``t_min``."""
    ta = arrive(S, cyl0, head0, t_free, cyl, head, write)
    if ta < t_min:
        ta = t_min
    rev = S[P_REV]
    w = ang * rev - (ta % rev)
    if w < -EPS_NS:
        w += rev
    if w < 0.0:
        w = 0.0
    return ta + w


@numba.njit(cache=True)
def xfer(S, lba, n, cyl0, head0, t_free, write, t_min):
    """Position on ``lba`` and transfer ``n`` sectors to/from the media. A write
    settles after the positioning (mech_g1 dm_seek_time). Each track switch inside the
    transfer is a head switch or one-cylinder seek that waits for the skewed first
    sector - for writes too: drives are formatted with the skew that lets a sequential
    write continue on the next track in the same revolution (a sheet's sustained rate
    holds for writes), so the write settle is not paid again at each switch; slipped
    sectors inside a track pass under the head.

    Returns (first sector start, first sector end, last sector end, final cylinder,
    final head)."""
    rev = S[P_REV]
    cyl, head, sector, spt, ang, k, span = track_run(S, lba, n)
    t = reach(S, cyl0, head0, t_free, cyl, head, ang, write, t_min)
    t_start = t
    t_first = t + rev / spt
    t += span * rev / spt
    lba += k
    n -= k
    while n > 0:
        c2, h2, s2, spt2, a2, k, span = track_run(S, lba, n)
        t = reach(S, cyl, head, t, c2, h2, a2, False, 0.0)
        cyl = c2
        head = h2
        t += span * rev / spt2
        lba += k
        n -= k
    return t_start, t_first, t, cyl, head


@numba.njit(cache=True)
def begin_time(S, lba, cyl, head, t_end):
    """When sector ``lba`` starts under the head if the head just finished the sector
    before it (on track cyl/head) at ``t_end``: at once on the same track, after the
    switch and skew otherwise."""
    c2, h2, s2, spt2, a2 = locate(S, lba)
    if c2 == cyl and h2 == head:
        return t_end
    return reach(S, cyl, head, t_end, c2, h2, a2, False, 0.0)


@numba.njit(cache=True)
def stream_pos(S, lba_a, t_a, t, stop):
    """A continuous read that started sector ``lba_a`` at ``t_a`` and stops at ``stop``:
    the first sector not yet complete at time ``t`` and the track the head is on."""
    rev = S[P_REV]
    lba = lba_a
    tt = t_a
    if lba >= stop:
        c, h, s, spt, ang = locate(S, min(lba, S[P_NSECT] - 1.0))
        return stop, c, h
    cyl, head, sector, spt, ang, k, span = track_run(S, lba, stop - lba)
    while True:
        sect = rev / spt
        if tt + span * sect > t:
            done = min(math.floor((t - tt) / sect), k) if t > tt else 0.0
            return lba + done, cyl, head
        tt += span * sect
        lba += k
        if lba >= stop:
            break
        c2, h2, s2, spt2, a2, k, span = track_run(S, lba, stop - lba)
        tt2 = reach(S, cyl, head, tt, c2, h2, a2, False, 0.0)
        cyl = c2
        head = h2
        spt = spt2
        if tt2 > t:
            return lba, cyl, head
        tt = tt2
    return stop, cyl, head


@numba.njit(cache=True)
def stream_times(S, lba_a, t_a, x):
    """For the same continuous read: (time sector ``x`` starts, time sector x-1 ends)."""
    if x <= lba_a:
        return t_a, t_a
    c, h, s, spt, ang = locate(S, lba_a)
    ts, tf, te, c2, h2 = xfer(S, lba_a, x - lba_a, c, h, t_a, False, t_a)
    if x >= S[P_NSECT]:
        return te, te
    return begin_time(S, x, c2, h2, te), te


@numba.njit(cache=True)
def appends(S, a, t_arrived):
    """(``combine_seq_writes``) A media write of sector ``a`` on that arrived at
    ``t_arrived`` continues the last media write: it starts where that one ended, it
    was queued before that one ended, and the arm has done nothing since."""
    return (S[int(S[O_EXT]) + X_COMBINE] > 0.0 and S[D_LAST_T] > 0.0 and a == S[D_LAST_END]
            and t_arrived <= S[D_LAST_T] and S[H_TFREE] == S[D_LAST_T] and S[ST_ON] == 0.0)


@numba.njit(cache=True)
def sptf_pick(S, cyl0, head0, t_arm_read, t_arm_write, now, barrier_seq, x=-1.0):
    """Slot of the queued command (Q_CAND set, queued before ``barrier_seq``) that can
    start soonest. Needing no positioning, and so first: buffer hits marked at submit
    (Q_HIT0), reads inside the read-ahead window, writes the write cache takes now.
    So do media writes that continue the last one (``appends``). Others start when
    their first sector comes under the head. Ties go to the older
    command. ``x``: the first sector the read-ahead stream has not read by then (the
    buffered part of the window ends there)."""
    oq = int(S[O_Q])
    stream_on = S[ST_ON] > 0.0
    lo = S[ST_LO]
    stop = S[ST_STOP]
    busw = S[int(S[O_EXT]) + X_BUSW]
    if stream_on and x >= 0.0:
        lo = max(lo, x - S[P_SEGSEC])
        if S[int(S[O_EXT]) + X_WINDOW_HITS] == 0.0:
            stop = x
    wc_room = S[P_WCMAX] - S[D_SECT] if S[P_WCE] > 0.0 else -1.0
    best = -1
    best_t = np.inf
    best_seq = np.inf
    for i in range(int(S[P_QD])):
        r = oq + i * QCOLS
        seq = S[r + Q_SEQ]
        if S[r + Q_CAND] == 0.0 or seq >= barrier_seq:
            continue
        op = S[r + Q_OP]
        if S[r + Q_HIT0] > 0.0:
            t = now
        elif op == OP_WRITE:
            if S[r + Q_NS] <= wc_room and S[r + Q_FUA] == 0.0:
                t = now
            elif appends(S, S[r + Q_LBA], S[r + Q_T]):
                t = now     # part of the write under way (DiskSim combines on arrival)
            else:
                t = reach(S, cyl0, head0, t_arm_write, S[r + Q_CYL], S[r + Q_HEAD],
                          S[r + Q_ANG], True, t_arm_write + S[r + Q_NS] * busw)
        elif stream_on and lo <= S[r + Q_LBA] and S[r + Q_LBA] < stop:
            t = now
        else:
            t = reach(S, cyl0, head0, t_arm_read, S[r + Q_CYL], S[r + Q_HEAD], S[r + Q_ANG],
                      False, 0.0)
        if t < best_t or (t == best_t and seq < best_seq):
            best_t = t
            best_seq = seq
            best = i
    return best


def build_state(cfg, dirty_capacity: int = 0) -> np.ndarray:
    """The state vector ``S`` for one drive from an ``HDDConfig``."""
    sector_bytes = 512
    nsect = cfg.sectors
    zt, zsp, slips = zone_tables(cfg.zones, cfg.surfaces, nsect)
    seek = seek_table_ns(cfg.n_cylinders, cfg.seek_single_cyl_ms, cfg.seek_avg_ms,
                         cfg.seek_full_stroke_ms, cfg.seek_curve_cyl, cfg.seek_curve_ms)
    nseg = cfg.cache_segments
    segsec = cfg.cache_segment_bytes // sector_bytes
    wcmax = (cfg.write_cache_bytes or cfg.cache_segments * cfg.cache_segment_bytes) // sector_bytes
    dcap = dirty_capacity or max(1, min(wcmax, 1 << 16)) if cfg.write_cache else 1
    o_zone = HEADER
    o_seek = o_zone + zt.size
    o_q = o_seek + seek.size
    o_seg = o_q + cfg.queue_depth * QCOLS
    o_dirty = o_seg + nseg * SEGCOLS
    o_ext = o_dirty + dcap * DCOLS
    o_zsp = o_ext + EXT_LEN
    o_slip = o_zsp + zsp.size
    S = np.zeros(o_slip + slips.size, dtype=np.float64)
    S[P_REV] = 60e9 / cfg.rpm
    S[P_SURF] = cfg.surfaces
    S[P_NZONE] = len(zt)
    S[P_NCYL] = cfg.n_cylinders
    S[P_HS] = cfg.head_switch_ms * 1e6
    S[P_SETTLE] = cfg.write_settle_ms * 1e6
    S[P_OVH_RH] = cfg.overhead_read_hit_ms * 1e6
    S[P_OVH_RM] = cfg.overhead_read_miss_ms * 1e6
    S[P_OVH_WH] = cfg.overhead_write_hit_ms * 1e6
    S[P_OVH_WM] = cfg.overhead_write_miss_ms * 1e6
    S[P_OVH_FL] = cfg.overhead_flush_ms * 1e6
    after_read = (cfg.overhead_read_hit_ms, cfg.overhead_read_miss_ms,
                  cfg.overhead_write_hit_ms, cfg.overhead_write_miss_ms)
    after_write = (cfg.overhead_read_hit_after_write_ms, cfg.overhead_read_miss_after_write_ms,
                   cfg.overhead_write_hit_after_write_ms, cfg.overhead_write_miss_after_write_ms)
    for k in range(4):
        S[OVH_AFTER_READ + k] = after_read[k] * 1e6
        S[OVH_AFTER_WRITE + k] = (after_write[k] if after_write[k] is not None
                                  else after_read[k]) * 1e6
    S[P_BUS] = sector_bytes / (cfg.interface_mb_s * 1e6) * 1e9
    S[P_NSEG] = nseg
    S[P_SEGSEC] = segsec
    S[P_RAMAX] = cfg.read_ahead_max_bytes // sector_bytes
    S[P_RAMIN] = cfg.read_ahead_min_bytes // sector_bytes
    S[P_WCE] = 1.0 if cfg.write_cache else 0.0
    S[P_WCMAX] = wcmax
    S[P_QD] = cfg.queue_depth
    S[P_SPTF] = 1.0 if cfg.scheduler == "sptf" else 0.0
    S[P_AGE] = cfg.sptf_age_limit_ms * 1e6
    S[P_NSECT] = nsect
    S[P_DCAP] = dcap
    S[P_DWIN] = 128   # dirty extents considered per destage (the drive's sort window)
    S[O_ZONE], S[O_SEEK], S[O_Q], S[O_SEG], S[O_DIRTY] = o_zone, o_seek, o_q, o_seg, o_dirty
    S[O_EXT] = o_ext
    S[o_ext + X_RA_SCHEME] = RA_SCHEMES[cfg.read_ahead_scheme]
    S[o_ext + X_WINDOW_HITS] = 1.0 if cfg.read_ahead_window_hits else 0.0
    S[o_ext + X_IDLE_HIT] = 1.0 if cfg.read_ahead_on_idle_hit else 0.0
    S[o_ext + X_SERP] = SURFACE_ORDERS[cfg.surface_order]
    S[o_ext + X_BUSW] = sector_bytes / ((cfg.interface_write_mb_s or cfg.interface_mb_s) * 1e6) * 1e9
    S[o_ext + X_WATER] = cfg.read_watermark
    S[o_ext + X_WATER_REQ] = 1.0 if cfg.watermark_by_request else 0.0
    S[o_ext + X_OVH_RESEL] = cfg.overhead_reselect_ms * 1e6
    S[o_ext + X_OVH_PREP] = cfg.overhead_data_prep_ms * 1e6
    S[o_ext + X_OVH_RCOMP] = cfg.overhead_read_complete_ms * 1e6
    S[o_ext + X_OVH_WCOMP] = cfg.overhead_write_complete_ms * 1e6
    S[o_ext + X_MINSEEK] = cfg.min_seek_ms * 1e6
    S[o_ext + X_WRITE_HITS] = 1.0 if cfg.read_hits_on_write_data else 0.0
    S[o_ext + X_FREE_BLOCKS] = 1.0 if cfg.read_any_free_blocks else 0.0
    S[o_ext + X_ZERO_LAT] = 1.0 if cfg.read_zero_latency else 0.0
    S[o_ext + X_ZERO_LAT_W] = 1.0 if cfg.write_zero_latency else 0.0
    S[o_ext + X_COMBINE] = 1.0 if cfg.combine_seq_writes else 0.0
    S[o_ext + X_O_ZSP] = o_zsp
    S[o_ext + X_O_SLIP] = o_slip
    S[o_zsp:o_slip] = zsp.ravel()
    S[o_slip:] = slips.ravel()
    S[o_zone:o_seek] = zt.ravel()
    S[o_seek:o_q] = seek
    segs = S[o_seg:o_dirty].reshape(nseg, SEGCOLS)
    segs[:, G_START] = -1.0
    segs[:, G_END] = -1.0
    S[ST_SEG] = -1.0
    return S
