"""HDD firmware: the segmented buffer, read-ahead and the command dispatch step,
compiled over the drive's state vector (segments and the read-ahead stream in
``buffer``, writes and the write cache in ``write``, mechanics in
``mech``, layout in ``layout``).

Modelled:
- Buffer segments hold LBA ranges that were read or written (LRU replacement). A
  read wholly inside one is a hit: controller overhead plus interface transfer. A
  write stops read-ahead on arrival and empties every other segment holding any of
  its sectors (disksim_diskctlr.c disk_activate_write, disksim_diskcache.c
  disk_buffer_set_segment); what it wrote serves read hits only with
  ``read_hits_on_write_data``.
- Read-ahead: after a media read the head keeps reading the following sectors into a
  segment until the arm is needed for another command (a new command stops it on
  arrival) or the scheme's stop is reached (disksim_diskcache.c
  disk_buffer_get_max_readahead): ``read_ahead_max_bytes`` past the read, no further
  than the track or cylinder end, or DiskSim's DEC scheme - to the end of the track
  holding the next sector, one track more once the segment already held sectors from
  an earlier track. The segment is circular: it keeps the last ``cache_segment_bytes``
  read, so a read-ahead longer than the segment scrolls the sectors just after the
  read out again. The stream is not simulated sector by sector: its anchor (sector,
  start time) and the layout give the position at any time. A read whose first
  sector is in the segment hits and waits for any later sectors as they come off the
  platter (its stop moves on, as a hit extends DiskSim's read-ahead target); with
  ``read_ahead_window_hits`` a read starting in the part of the window not yet read
  hits as well. A stream that reached its stop pauses; a hit resumes it (after a
  rotational wait) only when it needs sectors beyond the stop or with
  ``read_ahead_on_idle_hit``, which also restarts read-ahead after a hit on a stopped
  segment. ``read_ahead_min_bytes`` are read even if another command is waiting.
- Zero-latency read (``read_zero_latency``, DiskSim's Immediate buffer read): a read
  miss whose head lands inside its sectors on the first track reads from the next
  sector boundary, then the sectors before it as they come round; the data still goes
  to the host in LBA order, so the read is shorter only where the link outruns the
  platter. Later tracks follow as usual.
- Writes, the write cache and FLUSH: ``write``. The write cache is destaged when
  the arm is idle - no command queued, or only commands the buffer serves
  (``hdd_arm_wanted``).
- Dispatch: FLUSH is a barrier; with ``sptf`` the command with the earliest start
  (buffer hits at once) goes next unless the oldest is past the age limit.

Deliberately not modelled: partial hits on a stopped segment (a read only partly in
it goes to the media whole; on the read-ahead stream it waits for the rest), read
hits on data still being destaged versus already destaged (both hit), adaptive
segmentation, write-data contention with read data on the host link.
"""
from __future__ import annotations

import math

import numba

from .buffer import (idle_hit_restart, ra_stop, seg_lookup, seg_touch, stream_peek,
                         stream_resume, stream_start, stream_stop)
from .layout import locate, track_span
from .mech import arrive, sptf_pick, stream_pos, stream_times, xfer
from .state import (C_SEEKS, C_SEG_HITS, C_STREAM_HITS, H_CYL, H_HEAD, H_TFREE,
                        LAST_WRITE, O_EXT, O_Q, OP_FLUSH, OP_READ, OP_WRITE, OVH_AFTER_READ,
                        OVH_AFTER_WRITE, P_AGE, P_NSECT, P_OVH_RH, P_OVH_RM, P_OVH_WH,
                        P_OVH_WM, P_QD, P_RAMIN, P_REV, P_SEGSEC, P_SPTF, P_BUS, Q_ANG,
                        Q_CAND, Q_CYL, Q_FUA, Q_HEAD, Q_HIT, Q_HIT0, Q_LBA, Q_N, Q_NS, Q_OP,
                        Q_SEQ, Q_SEQCTR, Q_T, QCOLS, ST_LBA, ST_LO, ST_MIN, ST_ON, ST_SEG,
                        ST_STOP, ST_T, X_IDLE_HIT, X_OVH_PREP, X_OVH_RCOMP, X_OVH_RESEL,
                        X_WATER, X_WATER_REQ, X_WINDOW_HITS, X_FREE_BLOCKS, X_ZERO_LAT)
from .write import destage_one, serve_flush, serve_write, write_cacheable, zero_latency


# -- commands -------------------------------------------------------------------------
@numba.njit(cache=True)
def serve_read(S, a, n, now):
    """Serve a read of n sectors at a; returns (done time, 1 if from the buffer).

    A hit needs its first sector in a segment: a stopped segment, or the part of the
    read-ahead stream's window already read (the circular segment keeps the last
    ``P_SEGSEC`` sectors read) or, with window hits, not yet read; sectors still
    to come are waited for. A read starting elsewhere is a miss: the stream stops at
    the command's arrival and the arm repositions after the miss overhead."""
    b = a + n
    bus = S[P_BUS]
    ext = int(S[O_EXT])
    skip = int(S[ST_SEG]) if S[ST_ON] > 0.0 else -1
    k = seg_lookup(S, a, b, skip)
    if k >= 0:
        seg_touch(S, k)
        S[C_SEG_HITS] += 1.0
        done = now + S[P_OVH_RH] + S[ext + X_OVH_PREP] + n * bus + S[ext + X_OVH_RCOMP]
        if S[ext + X_IDLE_HIT] > 0.0:
            idle_hit_restart(S, k, a, b, now + S[P_OVH_RH])
        return done, 1
    if S[ST_ON] > 0.0 and S[ST_LO] <= a and a < S[ST_STOP]:
        la = S[ST_LBA]
        stop = S[ST_STOP]
        x0, c0, h0 = stream_pos(S, la, S[ST_T], now, stop)
        seg_lo = max(S[ST_LO], x0 - S[P_SEGSEC])
        if a >= seg_lo and (a < x0 or S[ext + X_WINDOW_HITS] > 0.0):
            t = now + S[P_OVH_RH]
            x, c, h = stream_pos(S, la, S[ST_T], t, stop)
            done = t + S[ext + X_OVH_PREP] + n * bus
            new_stop = max(stop, ra_stop(S, seg_lo, a, b))
            paused = x >= stop
            if b > x:
                if paused:
                    stream_resume(S, c, h, t, new_stop)
                tb_begin, tb_end = stream_times(S, S[ST_LBA], S[ST_T], b)
                if tb_end + bus > done:
                    done = tb_end + bus
                S[ST_LBA] = b
                S[ST_T] = tb_begin
                S[ST_STOP] = new_stop
            elif not paused:
                S[ST_STOP] = new_stop
            elif new_stop > stop and S[ext + X_IDLE_HIT] > 0.0:
                stream_resume(S, c, h, t, new_stop)
            S[ST_MIN] = max(S[ST_MIN], min(b + S[P_RAMIN], S[P_NSECT]))
            S[C_STREAM_HITS] += 1.0
            return done + S[ext + X_OVH_RCOMP], 1
    t = now + S[P_OVH_RM]
    t_free, c0, h0 = stream_stop(S, now)
    ts, tf, te, c, h = xfer(S, a, n, c0, h0, max(t_free, t), False, 0.0)
    t_arm = te          # the head has read every sector of the command
    t_tail = 0.0        # zero latency: the first track's sectors all buffered
    n_head = 0.0        #   ... of which the first n_head came off in order
    n_tail = 0.0        #   ... and the n_tail after them were read before
    if S[ext + X_ZERO_LAT] > 0.0:
        t_arm, t_tail, n_head, n_tail = zero_latency(S, a, n, c0, h0, max(t_free, t), ts, te,
                                                     False, 0.0)
    first = a
    if S[ext + X_FREE_BLOCKS] > 0.0:
        # read any free blocks: from landing on the track the head buffers every
        # sector passing before a (those after a on the track are not kept)
        c1, h1, s1, spt1, ang1 = locate(S, a)
        ta = arrive(S, c0, h0, max(t_free, t), c1, h1, False)
        passed = math.floor((ts - ta) / (S[P_REV] / spt1) + 1e-9)
        first = max(a - min(passed, s1), track_span(S, a)[0])
    S[H_CYL] = c
    S[H_HEAD] = h
    S[H_TFREE] = t_arm
    S[C_SEEKS] += 1.0
    # read-ahead from b: on the read's only track b passes when it would have (te)
    stream_start(S, a, b, c, h, te if n_head + n_tail >= n else t_arm, first)
    # the drive disconnected after the command; it reconnects once the watermark's
    # worth of the read is buffered, then streams at the link rate (holding the link
    # while the media catches up)
    seg = S[P_SEGSEC] if S[P_SEGSEC] > 0.0 else n
    if S[ext + X_WATER_REQ] > 0.0:
        w = max(1.0, math.floor(min(seg, n) * S[ext + X_WATER]))
    else:
        w = max(1.0, math.ceil(seg * S[ext + X_WATER]))
    t_w = tf
    if w >= n:
        t_w = t_arm
    elif w > 1.0:
        t_w = xfer(S, a, w, c0, h0, max(t_free, t), False, 0.0)[2]
        if t_tail > 0.0 and w <= n_head + n_tail and t_tail < t_w:
            t_w = t_tail
    done = t_arm + bus
    if t_tail > 0.0 and t_tail + (n - n_head + 1.0) * bus > done:
        done = t_tail + (n - n_head + 1.0) * bus   # in LBA order from the last one read
    start = t_w + S[ext + X_OVH_RESEL] + S[ext + X_OVH_PREP]
    if start + n * bus > done:
        done = start + n * bus
    return done + S[ext + X_OVH_RCOMP], 0


# -- entry points called from Python (one call per command) ---------------------------
@numba.njit(cache=True)
def hdd_submit(S, slot, off_bytes, end_bytes, opf, now):
    """Queue a command in tag ``slot`` and precompute its target (first sector).
    ``opf`` is the op, plus 4 for FUA."""
    r = int(S[O_Q]) + slot * QCOLS
    op = opf & 3
    fua = 1.0 if opf & 4 else 0.0
    lba = float(off_bytes // 512)
    n = float(-(-end_bytes // 512)) - lba
    S[r + Q_LBA] = lba
    S[r + Q_NS] = n
    S[r + Q_OP] = op
    S[r + Q_FUA] = fua
    S[r + Q_T] = now
    S[Q_SEQCTR] += 1.0
    S[r + Q_SEQ] = S[Q_SEQCTR]
    S[r + Q_CAND] = 1.0
    hit = 0.0
    if op == OP_READ:
        skip = int(S[ST_SEG]) if S[ST_ON] > 0.0 else -1
        if seg_lookup(S, lba, lba + n, skip) >= 0:
            hit = 1.0       # in the buffer on arrival (re-checked when served)
    elif op != OP_WRITE:
        hit = 1.0           # flush/discard: no positioning
    S[r + Q_HIT] = hit
    S[r + Q_HIT0] = hit
    if op == OP_READ or op == OP_WRITE:
        c, h, s, spt, ang = locate(S, lba)
        S[r + Q_CYL] = c
        S[r + Q_HEAD] = h
        S[r + Q_ANG] = ang
    S[Q_N] += 1.0


@numba.njit(cache=True)
def hdd_dispatch(S, now):
    """Choose the next queued command, serve it and free its slot.
    Returns (slot, completion time in int ns, 1 if served from the buffer)."""
    oq = int(S[O_Q])
    qd = int(S[P_QD])
    # queue order: the oldest command, and the oldest FLUSH (a barrier)
    oldest = -1
    oldest_seq = math.inf
    barrier_seq = math.inf
    ncand = 0
    for i in range(qd):
        r = oq + i * QCOLS
        if S[r + Q_CAND] == 0.0:
            continue
        ncand += 1
        seq = S[r + Q_SEQ]
        if seq < oldest_seq:
            oldest_seq = seq
            oldest = i
        if S[r + Q_OP] == OP_FLUSH and seq < barrier_seq:
            barrier_seq = seq
    slot = oldest
    if (ncand > 1 and S[P_SPTF] > 0.0 and oldest_seq != barrier_seq
            and not (S[P_AGE] > 0.0 and now - S[oq + oldest * QCOLS + Q_T] > S[P_AGE])):
        t_arm, c0, h0, x = stream_peek(S, now + S[P_OVH_RM])
        t_arm_w = max(t_arm, now + S[P_OVH_WM])
        slot = sptf_pick(S, c0, h0, t_arm, t_arm_w, now, barrier_seq, x)
    r = oq + slot * QCOLS
    op = S[r + Q_OP]
    if op == OP_READ:
        done, hit = serve_read(S, S[r + Q_LBA], S[r + Q_NS], now)
    elif op == OP_WRITE:
        done, hit = serve_write(S, S[r + Q_LBA], S[r + Q_NS], S[r + Q_FUA], now,
                                S[r + Q_T])
    elif op == OP_FLUSH:
        done, hit = serve_flush(S, now), 0
    else:
        done, hit = now + S[P_OVH_WH], 0
    S[r + Q_CAND] = 0.0
    S[Q_N] -= 1.0
    if op == OP_READ or op == OP_WRITE:
        w = 1.0 if op == OP_WRITE else 0.0
        if w != S[LAST_WRITE]:
            # the controller's next command costs depend on what it did last
            src = OVH_AFTER_WRITE if w > 0.0 else OVH_AFTER_READ
            for k in range(4):
                S[P_OVH_RH + k] = S[src + k]
            S[LAST_WRITE] = w
    d = int(math.ceil(done - 1e-6))
    if d < now:
        d = now
    return slot, d, hit


@numba.njit(cache=True)
def hdd_arm_wanted(S):
    """Does a queued command need the arm: a read not in the buffer when it arrived, a
    write that goes to the media (FUA, larger than the cache, WCE off) or a FLUSH?
    (Otherwise the commands queued are served from the buffer and the arm is free for a
    destage meanwhile.)"""
    oq = int(S[O_Q])
    for i in range(int(S[P_QD])):
        r = oq + i * QCOLS
        if S[r + Q_CAND] == 0.0:
            continue
        op = S[r + Q_OP]
        if op == OP_READ:
            if S[r + Q_HIT] == 0.0:
                return True
        elif op == OP_WRITE:
            if not write_cacheable(S, S[r + Q_NS], S[r + Q_FUA]):
                return True
        elif op == OP_FLUSH:
            return True
    return False


@numba.njit(cache=True)
def hdd_destage_idle(S, now):
    """An idle arm and dirty data: destage one extent (in the background: commands
    that need no arm are served meanwhile); returns its end (int ns)."""
    done = destage_one(S, now)
    d = int(math.ceil(done - 1e-6))
    if d < now:
        d = now
    return d
