"""Calendars of the SSD's compiled kernels: a channel's (and the host link's) future
busy intervals, where a transfer takes the earliest gap that fits at or after the time
it could start (back-filling) or cuts in behind the transfer in progress (a read
with priority); and the write buffer, a min-heap of page program ends and their bytes,
which says when enough of it is free."""
from __future__ import annotations

from .packed import S_HB, S_HK, S_HS, kernel, views


# -- calendars: busy intervals with back-filling -----------------------------------------

@kernel
def _first_end_after(iv_e, row, n, t):
    """Index of the first of ``row``'s first ``n`` ends (sorted: a calendar's interval
    ends, a die's booked operation ends) that is after ``t`` (``n``: none is)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if iv_e[row, mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def _drop_ended(iv_s, iv_e, row, n, now):
    """Drop ``row``'s first ``n`` intervals that ended by ``now``; returns how many are
    left."""
    k = _first_end_after(iv_e, row, n, now)
    if k:
        for i in range(k, n):
            iv_s[row, i - k] = iv_s[row, i]
            iv_e[row, i - k] = iv_e[row, i]
        n -= k
    return n


@kernel
def _reserve(iv_s, iv_e, iv_n, row, t, dur, now):
    """Earliest start >= t of a ``dur`` ns gap in ``row``'s busy intervals; books it.

    Intervals are kept sorted and disjoint (touching ones merged); those that ended by
    ``now`` are dropped. When the row is full the booking goes after the last one."""
    n = _drop_ended(iv_s, iv_e, row, iv_n[row], now)
    # first interval still busy at t, then the first gap of dur from there on
    lo = _first_end_after(iv_e, row, n, t)
    cand = t
    pos = n
    for i in range(lo, n):
        if iv_s[row, i] >= cand + dur:
            pos = i
            break
        cand = iv_e[row, i]
    end = cand + dur
    if dur > 0:
        if pos > 0 and iv_e[row, pos - 1] == cand:
            iv_e[row, pos - 1] = end
            if pos < n and iv_s[row, pos] == end:      # closes the gap: merge
                iv_e[row, pos - 1] = iv_e[row, pos]
                for i in range(pos + 1, n):
                    iv_s[row, i - 1] = iv_s[row, i]
                    iv_e[row, i - 1] = iv_e[row, i]
                n -= 1
        elif pos < n and iv_s[row, pos] == end:
            iv_s[row, pos] = cand
        elif n < iv_s.shape[1]:
            for i in range(n, pos, -1):
                iv_s[row, i] = iv_s[row, i - 1]
                iv_e[row, i] = iv_e[row, i - 1]
            iv_s[row, pos] = cand
            iv_e[row, pos] = end
            n += 1
        else:                                           # full: book after the last
            cand = iv_e[row, n - 1] if iv_e[row, n - 1] > t else t
            end = cand + dur
            iv_e[row, n - 1] = end
    iv_n[row] = n
    return cand


@kernel
def _cut_in(iv_s, iv_e, iv_n, row, t, dur, now):
    """Book ``dur`` ns on ``row`` for a transfer that goes before the queued ones (a
    host read's, with read priority): it waits for the transfer in progress at ``t``
    (one page at most: ``dur``), and the busy time booked from its start on moves back
    by ``dur``, the gaps after it absorbing the shift. Returns its start."""
    n = iv_n[row] = _drop_ended(iv_s, iv_e, row, iv_n[row], now)
    lo = _first_end_after(iv_e, row, n, t)      # first interval still busy after t
    if lo == n or iv_s[row, lo] >= t + dur or n == iv_s.shape[1]:
        return _reserve(iv_s, iv_e, iv_n, row, t, dur, now)     # a gap that fits
    if iv_s[row, lo] <= t:              # a transfer in progress: wait for its end
        p = iv_e[row, lo] if iv_e[row, lo] < t + dur else t + dur
        iv_e[row, lo] += dur
    else:                               # a gap too short: a new interval, then the push
        p = t
        for i in range(n, lo, -1):
            iv_s[row, i] = iv_s[row, i - 1]
            iv_e[row, i] = iv_e[row, i - 1]
        iv_s[row, lo] = p
        iv_e[row, lo] = p + dur
        n += 1
    end = iv_e[row, lo]
    k = lo + 1
    while k < n and iv_s[row, k] <= end:   # pushed back until it touches: merged
        end = iv_e[row, k] + (end - iv_s[row, k])
        k += 1
    iv_e[row, lo] = end
    m = k - lo - 1
    if m:
        for i in range(k, n):
            iv_s[row, i - m] = iv_s[row, i]
            iv_e[row, i - m] = iv_e[row, i]
        n -= m
    iv_n[row] = n
    return p


# -- write buffer: min-heap of (page program end, bytes) ---------------------------------

@kernel
def _heap_push(hk, hb, hs, key, nbytes):
    i = hs[0]
    if i == hk.shape[0]:
        raise RuntimeError("ssd write buffer heap overflow")
    hs[0] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if hk[parent] <= key:
            break
        hk[i] = hk[parent]
        hb[i] = hb[parent]
        i = parent
    hk[i] = key
    hb[i] = nbytes


@kernel
def _heap_pop(hk, hb, hs):
    n = hs[0] - 1
    key = hk[0]
    nbytes = hb[0]
    hs[0] = n
    if n > 0:
        lk = hk[n]
        lb = hb[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and hk[c + 1] < hk[c]:
                c += 1
            if hk[c] >= lk:
                break
            hk[i] = hk[c]
            hb[i] = hb[c]
            i = c
        hk[i] = lk
        hb[i] = lb
    return key, nbytes


@kernel
def buffer_reserve(i32, i64, cap, need, t):
    """Earliest time >= t at which ``need`` bytes of the write buffer are free (pages
    leave it when their program ends); ``hs[1]`` is the bytes in use."""
    st = views(i32, i64)
    hk, hb, hs = st[S_HK], st[S_HB], st[S_HS]
    used = hs[1]
    while hs[0] > 0 and hk[0] <= t:
        k, b = _heap_pop(hk, hb, hs)
        used -= b
    while used + need > cap and hs[0] > 0:
        k, b = _heap_pop(hk, hb, hs)
        used -= b
        if k > t:
            t = k
    hs[1] = used
    return t
