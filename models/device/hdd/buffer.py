"""HDD buffer: segments and the read-ahead stream, compiled over the drive's state
vector (slot numbers in ``state``; what is modelled is described in
``cache``, which serves commands with these functions).

- Segments hold LBA ranges that were read or written (LRU replacement); a write
  empties every other segment holding any of its sectors.
- The read-ahead stream: its anchor (sector, start time), its stop (per
  ``read_ahead_scheme``) and the layout give its position at any time; the segment it
  fills is circular (the last ``cache_segment_bytes`` read).
"""
from __future__ import annotations

import numba

from .layout import cylinder_end, locate, track_span
from .mech import begin_time, reach, stream_pos, stream_times
from .state import (G_END, G_STAMP, G_START, H_CYL, H_HEAD, H_TFREE, O_EXT, O_SEG,
                        P_NSECT, P_NSEG, P_RAMAX, P_RAMIN, P_SEGSEC, RA_CYLINDER, RA_TRACK,
                        RA_TRACK_STREAM, SEG_CLOCK, SEGCOLS, ST_LBA, ST_LO, ST_MIN, ST_ON,
                        ST_SEG, ST_STOP, ST_T, X_RA_SCHEME, X_WRITE_HITS)


# -- buffer segments ------------------------------------------------------------------
@numba.njit(cache=True)
def seg_lookup(S, a, b, skip):
    """Index of a segment (other than ``skip``) holding all of [a, b), or -1."""
    og = int(S[O_SEG])
    for k in range(int(S[P_NSEG])):
        r = og + k * SEGCOLS
        if k != skip and S[r + G_START] >= 0.0 and S[r + G_START] <= a and b <= S[r + G_END]:
            return k
    return -1


@numba.njit(cache=True)
def seg_touch(S, k):
    S[SEG_CLOCK] += 1.0
    S[int(S[O_SEG]) + k * SEGCOLS + G_STAMP] = S[SEG_CLOCK]


@numba.njit(cache=True)
def seg_victim(S, skip):
    og = int(S[O_SEG])
    best = -1
    best_stamp = 0.0
    for k in range(int(S[P_NSEG])):
        if k == skip:
            continue
        st = S[og + k * SEGCOLS + G_STAMP]
        if best < 0 or st < best_stamp:
            best = k
            best_stamp = st
    return best


@numba.njit(cache=True)
def seg_put(S, a, b):
    """Record [a, b) as held in the buffer: extend a segment ending at ``a`` or take
    the least recently used one. Returns the segment (-1: no buffer)."""
    segsec = S[P_SEGSEC]
    if segsec <= 0.0:
        return -1
    skip = int(S[ST_SEG]) if S[ST_ON] > 0.0 else -1
    og = int(S[O_SEG])
    for k in range(int(S[P_NSEG])):
        r = og + k * SEGCOLS
        if k != skip and S[r + G_START] >= 0.0 and S[r + G_END] == a:
            S[r + G_END] = b
            S[r + G_START] = max(S[r + G_START], b - segsec)
            seg_touch(S, k)
            return k
    k = seg_victim(S, skip)
    if k < 0:
        return -1
    r = og + k * SEGCOLS
    S[r + G_START] = max(a, b - segsec)
    S[r + G_END] = b
    seg_touch(S, k)
    return k


@numba.njit(cache=True)
def seg_write(S, a, b):
    """A write of [a, b) takes a segment (read-ahead already stopped): every other
    segment holding any of its sectors is emptied (disksim_diskcache.c clears clean
    overlapping segments), and the written sectors are readable only with read hits
    on write data."""
    k = seg_put(S, a, b)
    og = int(S[O_SEG])
    for j in range(int(S[P_NSEG])):
        r = og + j * SEGCOLS
        if j != k and S[r + G_START] >= 0.0 and S[r + G_START] < b and a < S[r + G_END]:
            S[r + G_START] = -1.0
            S[r + G_END] = -1.0
    if k >= 0 and S[int(S[O_EXT]) + X_WRITE_HITS] == 0.0:
        r = og + k * SEGCOLS
        S[r + G_START] = -1.0
        S[r + G_END] = -1.0


# -- read-ahead stream ----------------------------------------------------------------
@numba.njit(cache=True)
def stream_peek(S, t):
    """Where the arm is when it can leave the stream, wanted from time ``t``:
    (free time, cylinder, head, first sector the stream has not read). No state
    change."""
    if S[ST_ON] == 0.0:
        return max(t, S[H_TFREE]), S[H_CYL], S[H_HEAD], -1.0
    t_free = t
    if S[ST_MIN] > S[ST_LBA]:
        t_min_begin, t_min_end = stream_times(S, S[ST_LBA], S[ST_T], S[ST_MIN])
        if t_min_end > t_free:
            t_free = t_min_end
    x, c, h = stream_pos(S, S[ST_LBA], S[ST_T], t_free, S[ST_STOP])
    return t_free, c, h, x


@numba.njit(cache=True)
def stream_stop(S, t):
    """The arm is needed elsewhere from ``t``: end the stream, keep what it read in
    its segment, and return (free time, cylinder, head)."""
    if S[ST_ON] == 0.0:
        return max(t, S[H_TFREE]), S[H_CYL], S[H_HEAD]
    t_free, c, h, x = stream_peek(S, t)
    k = int(S[ST_SEG])
    r = int(S[O_SEG]) + k * SEGCOLS
    S[r + G_START] = max(S[ST_LO], x - S[P_SEGSEC])
    S[r + G_END] = x
    seg_touch(S, k)
    S[ST_ON] = 0.0
    S[ST_SEG] = -1.0
    S[H_CYL] = c
    S[H_HEAD] = h
    return t_free, c, h


@numba.njit(cache=True)
def ra_stop(S, lo, a, b):
    """Where read-ahead after a read of [a, b) stops, for a segment holding sectors
    from ``lo`` on (disksim_diskcache.c: disk_buffer_get_max_readahead)."""
    nsect = S[P_NSECT]
    if b >= nsect:
        return nsect
    scheme = S[int(S[O_EXT]) + X_RA_SCHEME]
    if scheme == RA_TRACK_STREAM:
        # to the end of the track holding b, one track further when the segment
        # already held sectors from before that track (a sequential stream)
        first, end = track_span(S, b)
        if lo < first:
            c, h, s, spt, ang = locate(S, a)
            end += spt
        return min(end, nsect)
    stop = b + S[P_RAMAX]
    if scheme == RA_TRACK:
        first, end = track_span(S, b - 1)
        stop = min(stop, end)
    elif scheme == RA_CYLINDER:
        stop = min(stop, cylinder_end(S, b - 1))
    return min(stop, nsect)


@numba.njit(cache=True)
def stream_begin(S, k, lo, x, t_x, stop, min_stop):
    """Read ahead into segment k (holding [lo, x)) from sector ``x``, which starts
    under the head at ``t_x``, up to ``stop``."""
    S[ST_ON] = 1.0
    S[ST_SEG] = k
    S[ST_LO] = lo
    S[ST_LBA] = x
    S[ST_T] = t_x
    S[ST_STOP] = stop
    S[ST_MIN] = min_stop


@numba.njit(cache=True)
def stream_start(S, a, b, c, h, t_end, first):
    """After a media read of [a, b) that ended at ``t_end`` on track (c, h), whose
    sectors from ``first`` (<= a: sectors read while waiting for a) are buffered:
    keep reading from ``b``."""
    nsect = S[P_NSECT]
    stop = ra_stop(S, a, a, b)
    if stop <= b or S[P_SEGSEC] <= 0.0:
        seg_put(S, max(first, b - S[P_SEGSEC]), b)
        return
    k = seg_victim(S, -1)
    r = int(S[O_SEG]) + k * SEGCOLS
    lo = max(first, b - S[P_SEGSEC])
    S[r + G_START] = lo
    S[r + G_END] = b
    seg_touch(S, k)
    stream_begin(S, k, lo, b, begin_time(S, b, c, h, t_end), stop, min(b + S[P_RAMIN], nsect))


@numba.njit(cache=True)
def stream_resume(S, c, h, t, stop):
    """A paused stream (head on track (c, h), reached its end) reads on from its end
    once the sector comes round (from time ``t``) up to ``stop``."""
    old = S[ST_STOP]
    c2, h2, s2, spt2, a2 = locate(S, old)
    S[ST_LBA] = old
    S[ST_T] = reach(S, c, h, t, c2, h2, a2, False, 0.0)
    S[ST_STOP] = stop


@numba.njit(cache=True)
def idle_hit_restart(S, k, a, b, t):
    """Read-ahead on idle hit: a hit on segment k, whose read-ahead had ended, starts
    reading ahead again from the segment's end (the arm repositions from ``t``)."""
    r = int(S[O_SEG]) + k * SEGCOLS
    lo = S[r + G_START]
    end = S[r + G_END]
    stop = ra_stop(S, lo, a, b)
    if end >= stop or end >= S[P_NSECT]:
        return
    t_free, c0, h0 = stream_stop(S, t)
    c2, h2, s2, spt2, a2 = locate(S, end)
    stream_begin(S, k, lo, end, reach(S, c0, h0, t_free, c2, h2, a2, False, 0.0), stop, end)
