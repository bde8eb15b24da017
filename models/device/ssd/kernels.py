"""Compiled (numba) kernels of the SSD model: the FTL (``ftl.py`` describes it)
and the flash / host-link timing, over the packed state of ``ftl.FTLState``.
The front ends (``drive.py``, ``nvme.py``) call one kernel per command.

All compiled code of the SSD lives in this one module on purpose: numba's on-disk
cache (``cache=True``) is invalidated by changes to the module a function is defined
in, not by changes to modules it calls into, so splitting the kernels over files
would let a stale compiled FTL survive an edit.

Timing (integer ns, reserved in command arrival order):

- A die is busy-until: page reads, programs, GC copies and erases on one die run one
  after another (FIFO per die, as a flash controller queues per die).
- A channel (and the host link, the last calendar row) keeps its future busy
  intervals, and a transfer takes the earliest gap that fits at or after the time it
  could start. A transfer that must wait for its busy die therefore does not block
  transfers to the channel's other dies in the meantime, as on a real channel.
- A page read holds its die for tR, then the channel for the transfer out (the page
  register stays busy until then). One sense (tR) reads a whole NAND page - the page
  size times the planes read together, ``units per NAND page`` mapping units - into
  the die's page registers; a read of another unit of that page, in the same command
  or a later one, needs only its transfer out, until the next program or erase on the
  die overwrites the registers. With one unit per NAND page (the default) every
  unit read senses (re-reading the same unit is not served from the register).
- A page program needs the data in the controller, the die idle, the channel for the
  transfer in, then holds the die for tPROG.
  Sub-page writes to a mapped page first read the old page (read-modify-write).
- Foreground GC runs on the die right after the program that triggered it: each copy
  is tR, a transfer out (ECC check in the controller), a transfer in and tPROG (or
  tR + tPROG on the die alone with ``copyback``), then tBERS per erased block. With
  NAND pages of several units, one tR serves all the valid units of a victim's page
  (the copies of a page cost one sense, then their transfers).
- The write buffer: a page's bytes occupy it from the host transfer until its program
  ends (a min-heap of program end times in the int64 buffer). It never holds more
  than its capacity: a write larger than the buffer streams in as programs free room.

- Read priority (header flag ``G_READ_PRIO``): a die keeps the end times of the
  operations booked on it (``bnd``); a host page read goes in at the first of them at
  or after its arrival and after the die's last queued read (``rd_end``): it waits
  for the operation in progress, not for the queue. Everything booked behind it on the
  die then ends later by the read's time (``die_free`` and the recorded ends move);
  what was already handed out for those operations - their channel bookings, a
  write's durable time, its buffer release - is not moved, so while reads cut in, the
  queued programs free buffer space and become durable up to the reads' time early.
  On the channel likewise: when programs, GC copies or read-modify-writes are booked
  on it past the read's page (``w_end``), the read's transfer waits for the transfer
  in progress (one page at most) and the booked busy time behind it moves back
  (``_cut_in``); otherwise it takes the earliest gap as before. Pure reads and pure
  writes are booked exactly as without the flag.

Deliberately not modelled: multi-plane programs (``program_us`` is already the
effective time per mapping unit), cache-program/cache-read modes (a sense does not
overlap the previous page's transfer), read-ahead into controller DRAM, program
and erase suspend (a read waits for the program, copy or erase in progress on its
die), background GC.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# Every kernel works in place on the packed state and allocates nothing, so it is
# compiled without numba's runtime (NRT): with it, each array view (``views`` makes 30)
# and each array passed to a helper is reference-counted with atomic increments that
# numba's pruning pass leaves in loops and across calls - measured at ~60 % of the
# kernels' time on a flushing InnoDB server's NVMe. Without it those operations are not
# emitted; an allocation in a kernel then fails to compile rather than leak.
kernel = njit(cache=True, _nrt=False)

# -- layout of the packed state ----------------------------------------------------------
# header of the int64 buffer: geometry, flash timings (ns), then (offset, length) pairs
G_NDIE, G_NCH, G_BPD, G_PPB, G_MINFREE, G_PAGE, G_COPYBACK, G_DYNAMIC = range(8)
P_TR, P_TPROG, P_TBERS = 8, 9, 10
G_UPP = 11           # mapping units per NAND page (one sense reads them all)
G_READ_PRIO = 12
_HDR = 13
# arrays in the int32 buffer, then in the int64 buffer (the tuple order of ``views``)
_I32 = ("l2p", "p2l", "valid", "bstate", "erases", "free_list", "free_n", "active", "wptr",
        "head", "nxt", "prv", "dvalid")
_I64 = ("counters", "die_free", "iv_s", "iv_e", "iv_n", "hk", "hb", "hs", "out", "misc",
        "sensed", "bnd", "bnd_n", "rd_end", "rd_page", "w_end")
(S_HDR, S_L2P, S_P2L, S_VALID, S_BSTATE, S_ERASES, S_FREE_LIST, S_FREE_N, S_ACTIVE, S_WPTR,
 S_HEAD, S_NXT, S_PRV, S_DVALID, S_COUNTERS, S_DIE_FREE, S_IV_S, S_IV_E, S_IV_N, S_HK, S_HB,
 S_HS, S_OUT, S_MISC, S_SENSED, S_BND, S_BND_N, S_RD_END, S_RD_PAGE, S_W_END) = range(30)
_N_ARR = len(_I32) + len(_I64)

# counters
C_HOST_PAGES, C_GC_PAGES, C_ERASES, C_READ_PAGES, C_UNMAPPED_READS, C_RMW, C_TRIMMED = range(7)
N_COUNTERS = 7
IV_SLOTS = 4096      # future busy intervals kept per channel / link (then: book at the end)
BND_SLOTS = 4096     # future operation ends kept per die for read priority (then: FIFO)


@kernel
def views(i32, i64):
    """The packed state as a tuple of arrays (index with the ``S_*`` constants), for
    the kernels only: compiled without NRT, the views own no reference to the buffers,
    so Python code reads ``ftl.FTLState``'s named arrays instead."""
    h = _HDR
    nd = i64[G_NDIE]
    nch = i64[G_NCH]
    o = i64[h:h + 2 * _N_ARR]
    return (i64[:h],
            i32[o[0]:o[0] + o[1]], i32[o[2]:o[2] + o[3]], i32[o[4]:o[4] + o[5]],
            i32[o[6]:o[6] + o[7]], i32[o[8]:o[8] + o[9]],
            i32[o[10]:o[10] + o[11]].reshape((nd, i64[G_BPD])),
            i32[o[12]:o[12] + o[13]], i32[o[14]:o[14] + o[15]], i32[o[16]:o[16] + o[17]],
            i32[o[18]:o[18] + o[19]].reshape((nd, i64[G_PPB] + 1)),
            i32[o[20]:o[20] + o[21]], i32[o[22]:o[22] + o[23]], i32[o[24]:o[24] + o[25]],
            i64[o[26]:o[26] + o[27]], i64[o[28]:o[28] + o[29]],
            i64[o[30]:o[30] + o[31]].reshape((nch + 1, IV_SLOTS)),
            i64[o[32]:o[32] + o[33]].reshape((nch + 1, IV_SLOTS)),
            i64[o[34]:o[34] + o[35]], i64[o[36]:o[36] + o[37]], i64[o[38]:o[38] + o[39]],
            i64[o[40]:o[40] + o[41]], i64[o[42]:o[42] + o[43]], i64[o[44]:o[44] + o[45]],
            i64[o[46]:o[46] + o[47]],
            i64[o[48]:o[48] + o[49]].reshape((nd, BND_SLOTS)), i64[o[50]:o[50] + o[51]],
            i64[o[52]:o[52] + o[53]], i64[o[54]:o[54] + o[55]], i64[o[56]:o[56] + o[57]])


# -- FTL primitives ------------------------------------------------------------------------

@kernel
def _bucket_remove(head, nxt, prv, die, v, b):
    p = prv[b]
    n = nxt[b]
    if p >= 0:
        nxt[p] = n
    else:
        head[die, v] = n
    if n >= 0:
        prv[n] = p
    nxt[b] = -1
    prv[b] = -1


@kernel
def _bucket_insert(head, nxt, prv, die, v, b):
    h = head[die, v]
    nxt[b] = h
    prv[b] = -1
    if h >= 0:
        prv[h] = b
    head[die, v] = b


@kernel
def _invalidate(st, ppn):
    g = st[S_HDR]
    valid = st[S_VALID]
    b = ppn // g[G_PPB]
    st[S_P2L][ppn] = -1
    v = valid[b]
    die = b // g[G_BPD]
    st[S_DVALID][die] -= 1
    if st[S_BSTATE][b] == 2:
        _bucket_remove(st[S_HEAD], st[S_NXT], st[S_PRV], die, v, b)
        _bucket_insert(st[S_HEAD], st[S_NXT], st[S_PRV], die, v - 1, b)
    valid[b] = v - 1


@kernel
def _append(st, die, lpn, stream):
    """Program ``lpn`` into the die's open block of ``stream`` (0 host writes, 1 GC
    relocations); returns the new physical page."""
    g = st[S_HDR]
    ppb = g[G_PPB]
    active = st[S_ACTIVE]
    wptr = st[S_WPTR]
    bstate = st[S_BSTATE]
    valid = st[S_VALID]
    f = 2 * die + stream
    b = active[f]
    if b < 0 or wptr[f] == ppb:
        if b >= 0:
            bstate[b] = 2
            _bucket_insert(st[S_HEAD], st[S_NXT], st[S_PRV], die, valid[b], b)
        free_n = st[S_FREE_N]
        n = free_n[die] - 1
        if n < 0:
            raise RuntimeError("ssd ftl: die out of free blocks")
        free_n[die] = n
        b = st[S_FREE_LIST][die, n]
        bstate[b] = 1
        active[f] = b
        wptr[f] = 0
    ppn = b * ppb + wptr[f]
    wptr[f] += 1
    st[S_P2L][ppn] = lpn
    st[S_L2P][lpn] = ppn
    valid[b] += 1
    st[S_DVALID][die] += 1
    return ppn


@kernel
def _gc(st, die):
    """Greedy GC on one die until ``gc_min_free`` blocks are free.

    Returns (pages copied, blocks erased). With NAND pages of several units it adds
    the senses the copies need - one per NAND page holding a valid unit - to
    ``misc[1]``."""
    g = st[S_HDR]
    ppb = g[G_PPB]
    upp = g[G_UPP]
    senses = 0
    head = st[S_HEAD]
    p2l = st[S_P2L]
    valid = st[S_VALID]
    bstate = st[S_BSTATE]
    free_n = st[S_FREE_N]
    copies = 0
    erased = 0
    while free_n[die] < g[G_MINFREE]:
        victim = -1
        vv = 0
        for v in range(ppb):          # fewest valid pages first; a full block frees nothing
            if head[die, v] >= 0:
                victim = head[die, v]
                vv = v
                break
        if victim < 0:
            break
        _bucket_remove(head, st[S_NXT], st[S_PRV], die, vv, victim)
        bstate[victim] = 1            # being collected: not a bucket member any more
        base = victim * ppb
        last = -1
        for i in range(ppb):
            lpn = p2l[base + i]
            if lpn >= 0:
                if i // upp != last:
                    senses += 1
                    last = i // upp
                p2l[base + i] = -1
                valid[victim] -= 1
                st[S_DVALID][die] -= 1
                _append(st, die, lpn, 1)
                copies += 1
        bstate[victim] = 0
        st[S_ERASES][victim] += 1
        st[S_FREE_LIST][die, free_n[die]] = victim
        free_n[die] += 1
        erased += 1
    c = st[S_COUNTERS]
    c[C_GC_PAGES] += copies
    c[C_ERASES] += erased
    if upp > 1:
        st[S_MISC][1] += senses
    return copies, erased


@kernel
def choose_die(st, lpn, t):
    """The die a host page write goes to: ``(lpn // units_per_nand_page) % n_dies``
    (static striping of NAND pages), or (dynamic allocation) the die that can start it
    first, counting from a rotating pointer on ties, among dies whose valid data
    leaves GC room to work.

    Dynamic allocation places unit by unit: it does not gather a NAND page's worth of
    consecutive units on one die, so data the host writes in order during a run is
    not laid out in NAND pages (``precondition: sequential`` is). Sending the units
    that continue a page to that page's die was tried: with ``program_us`` the
    per-unit share of a page program and foreground GC run per unit, a page's
    programs and their GC then queue on one die - E8 on the S4510 (a 16 KiB InnoDB
    page is one NAND page) fell from 801 to 234 tps. A write path that programs a
    gathered page in one operation is what that needs (not modelled)."""
    g = st[S_HDR]
    nd = g[G_NDIE]
    upp = g[G_UPP]
    if g[G_DYNAMIC] == 0:
        return (lpn // upp) % nd
    die_free = st[S_DIE_FREE]
    dvalid = st[S_DVALID]
    limit = (g[G_BPD] - g[G_MINFREE] - 3) * g[G_PPB]
    misc = st[S_MISC]
    rr = misc[0]
    best = -1
    best_t = np.int64(0)
    for k in range(nd):
        d = (rr + k) % nd
        if dvalid[d] >= limit:
            continue
        td = die_free[d] if die_free[d] > t else t
        if best < 0 or td < best_t:
            best = d
            best_t = td
    misc[0] = (best + 1) % nd
    return best


@kernel
def host_write_page(st, lpn, die):
    """Map a host page write to ``die``; returns (die, gc copies, gc erases)."""
    g = st[S_HDR]
    old = st[S_L2P][lpn]
    if old >= 0:
        _invalidate(st, old)
    _append(st, die, lpn, 0)
    st[S_COUNTERS][C_HOST_PAGES] += 1
    copies = 0
    erased = 0
    if st[S_FREE_N][die] < g[G_MINFREE]:
        copies, erased = _gc(st, die)
    return die, copies, erased


# -- bulk state changes (preconditioning, TRIM) ---------------------------------------

@kernel
def write_pages(i32, i64, lpns):
    """Apply page writes without timing (tests age a drive for real with it)."""
    st = views(i32, i64)
    for i in range(lpns.shape[0]):
        host_write_page(st, lpns[i], choose_die(st, lpns[i], 0))


@kernel
def trim(i32, i64, lpn0, n):
    st = views(i32, i64)
    l2p = st[S_L2P]
    for lpn in range(lpn0, lpn0 + n):
        old = l2p[lpn]
        if old >= 0:
            _invalidate(st, old)
            l2p[lpn] = -1
            st[S_COUNTERS][C_TRIMMED] += 1


@kernel
def rebuild(i32, i64, used_blocks, open_fill):
    """Derive every other array from ``p2l`` when the first ``used_blocks[die]`` blocks
    of each die are written (sealed), then, where ``open_fill[die, stream]`` >= 0, the
    open block of the host (stream 0) and the GC stream (1) filled that far, in that
    order, and the rest are free."""
    st = views(i32, i64)
    g = st[S_HDR]
    ndie = g[G_NDIE]
    bpd = g[G_BPD]
    ppb = g[G_PPB]
    p2l = st[S_P2L]
    l2p = st[S_L2P]
    valid = st[S_VALID]
    bstate = st[S_BSTATE]
    free_list = st[S_FREE_LIST]
    st[S_DVALID][:] = 0
    for b in range(ndie * bpd):
        v = 0
        base = b * ppb
        for i in range(ppb):
            lpn = p2l[base + i]
            if lpn >= 0:
                l2p[lpn] = base + i
                v += 1
        valid[b] = v
        bstate[b] = 0
        st[S_DVALID][b // bpd] += v
    st[S_HEAD][:, :] = -1
    st[S_NXT][:] = -1
    st[S_PRV][:] = -1
    st[S_ACTIVE][:] = -1
    st[S_WPTR][:] = 0
    for die in range(ndie):
        used = used_blocks[die]
        for b in range(die * bpd, die * bpd + used):
            bstate[b] = 2
            _bucket_insert(st[S_HEAD], st[S_NXT], st[S_PRV], die, valid[b], b)
        for stream in range(2):
            if open_fill[die, stream] >= 0:
                b = die * bpd + used
                bstate[b] = 1
                st[S_ACTIVE][2 * die + stream] = b
                st[S_WPTR][2 * die + stream] = open_fill[die, stream]
                used += 1
        n = 0
        for b in range(die * bpd + bpd - 1, die * bpd + used - 1, -1):
            free_list[die, n] = b          # lowest block id is popped first
            n += 1
        st[S_FREE_N][die] = n


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


# -- timed operations (entry points: one call per command) --------------------------------

@kernel
def link_reserve(i32, i64, t, dur, now):
    """Book ``dur`` ns on the host link at the earliest gap >= t; returns the start."""
    st = views(i32, i64)
    return _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], st[S_HDR][G_NCH], t, dur, now)


@kernel
def _book(st, die, end, now):
    """Record that an operation booked on ``die`` ends at ``end`` (booked in order, so
    the row stays sorted). A full row first drops the ends that are past; if it is
    still full the end is not recorded (a read then queues as far as FIFO would)."""
    bnd = st[S_BND]
    bnd_n = st[S_BND_N]
    n = bnd_n[die]
    if n == BND_SLOTS:
        n = _drop_past(bnd, die, n, now)
        if n == BND_SLOTS:
            bnd_n[die] = n
            return
    bnd[die, n] = end
    bnd_n[die] = n + 1


@kernel
def _w_book(st, ch, end):
    """A program's, a GC copy's or a read-modify-write's transfer on channel ``ch``
    ends at ``end`` (host reads with priority cut in ahead of such transfers)."""
    w_end = st[S_W_END]
    if end > w_end[ch]:
        w_end[ch] = end


@kernel
def _drop_past(bnd, die, n, now):
    k = _first_end_after(bnd, die, n, now)      # the row is sorted
    if k:
        for i in range(k, n):
            bnd[die, i - k] = bnd[die, i]
        n -= k
    return n


@kernel
def _read_slot(st, die, t, now):
    """Where a host page read goes on ``die`` when reads have priority: at the end of
    the operation in progress at ``t`` (no suspend), after any read already queued
    there; the booked operations behind it move back by the read's time
    (``_read_insert``). With the die idle at ``t``: ``t``."""
    die_free = st[S_DIE_FREE]
    if die_free[die] <= t:
        return t
    p = st[S_RD_END][die]
    if p < t:
        p = t
    bnd = st[S_BND]
    n = _drop_past(bnd, die, st[S_BND_N][die], now)
    st[S_BND_N][die] = n
    lo, hi = 0, n                       # first recorded end >= p
    while lo < hi:
        mid = (lo + hi) >> 1
        if bnd[die, mid] < p:
            lo = mid + 1
        else:
            hi = mid
    return bnd[die, lo] if lo < n else die_free[die]


@kernel
def _read_insert(st, die, start, ready, now):
    """Book a read holding ``die`` from ``start`` to ``ready``: the operations booked
    after ``start`` end that much later (their channel transfers and the program end
    times already handed out are not moved: see the module docstring)."""
    die_free = st[S_DIE_FREE]
    bnd = st[S_BND]
    n = st[S_BND_N][die]
    st[S_RD_END][die] = ready
    if start >= die_free[die]:
        die_free[die] = ready
        _book(st, die, ready, now)
        return
    d = ready - start
    die_free[die] += d
    pos = _first_end_after(bnd, die, n, start)  # the row is sorted
    for i in range(pos, n):
        bnd[die, i] += d
    if n < BND_SLOTS:
        for i in range(n, pos, -1):
            bnd[die, i] = bnd[die, i - 1]
        bnd[die, pos] = ready
        st[S_BND_N][die] = n + 1


@kernel
def read(i32, i64, ch_bpns, off, size, t_start, now):
    """Reserve the flash reads of ``[off, off+size)`` from ``t_start``.

    Sets ``out[0]`` = when the first page's data is in the controller, ``out[1]`` = when
    the last is, ``out[2]`` = bytes of that last piece. Unwritten (unmapped) pages need
    no flash access: the drive returns zeros at once."""
    st = views(i32, i64)
    g = st[S_HDR]
    l2p = st[S_L2P]
    die_free = st[S_DIE_FREE]
    iv_s, iv_e, iv_n = st[S_IV_S], st[S_IV_E], st[S_IV_N]
    counters = st[S_COUNTERS]
    page = g[G_PAGE]
    blk_pages = g[G_PPB] * g[G_BPD]
    nch = g[G_NCH]
    upp = g[G_UPP]
    sensed = st[S_SENSED]
    first = np.int64(-1)
    last = t_start
    last_piece = np.int64(0)
    pos = off
    end = off + size
    while pos < end:
        lpn = pos // page
        nxt_b = (lpn + 1) * page
        piece = (nxt_b if nxt_b < end else end) - pos
        ppn = l2p[lpn]
        if ppn < 0:
            ready = t_start
            counters[C_UNMAPPED_READS] += 1
        else:
            die = ppn // blk_pages
            x = np.int64(piece / ch_bpns + 0.5)
            if g[G_READ_PRIO]:
                slot = _read_slot(st, die, t_start, now)
                appended = slot >= die_free[die]
                sense = g[P_TR]
                if upp > 1:
                    npg = ppn // upp
                    # the register holds the page of the last operation before the slot:
                    # the end of the booked queue's, or the read the slot follows
                    if appended:
                        hit = sensed[die] == npg
                    else:
                        hit = slot == st[S_RD_END][die] and st[S_RD_PAGE][die] == npg
                    if hit:
                        sense = np.int64(0)
                    st[S_RD_PAGE][die] = npg
                    if appended:
                        sensed[die] = npg
                s = slot + sense
                ch = die % nch
                w_end = st[S_W_END]
                if w_end[ch] > s:       # programs / GC booked on the channel: cut in
                    ready = _cut_in(iv_s, iv_e, iv_n, ch, s, x, now) + x
                    w_end[ch] += x
                else:
                    ready = _reserve(iv_s, iv_e, iv_n, ch, s, x, now) + x
                _read_insert(st, die, slot, ready, now)
            else:
                s = die_free[die] if die_free[die] > t_start else t_start
                if upp > 1 and sensed[die] == ppn // upp:
                    sense = np.int64(0)         # its NAND page is in the die's register
                else:
                    sense = g[P_TR]
                    if upp > 1:
                        sensed[die] = ppn // upp
                ready = _reserve(iv_s, iv_e, iv_n, die % nch, s + sense, x, now) + x
                die_free[die] = ready
            counters[C_READ_PAGES] += 1
        if first < 0 or ready < first:
            first = ready
        if ready >= last:
            last = ready
            last_piece = piece
        pos += piece
    out = st[S_OUT]
    out[0] = first
    out[1] = last
    out[2] = last_piece


@kernel
def _program_page(st, ch_bpns, lpn, piece, s, now):
    """Map one page write whose data is in the controller at ``s``; reserve the
    program (and any GC it triggers). Returns when the page is durable."""
    g = st[S_HDR]
    die_free = st[S_DIE_FREE]
    iv_s, iv_e, iv_n = st[S_IV_S], st[S_IV_E], st[S_IV_N]
    page = g[G_PAGE]
    nch = g[G_NCH]
    x = np.int64(page / ch_bpns + 0.5)
    old = st[S_L2P][lpn]
    if piece < page and old >= 0:
        # partial page: read the old page into the controller and merge (RMW)
        od = old // (g[G_PPB] * g[G_BPD])
        r = die_free[od] if die_free[od] > s else s
        s = _reserve(iv_s, iv_e, iv_n, od % nch, r + g[P_TR], x, now) + x
        _w_book(st, od % nch, s)
        die_free[od] = s
        _book(st, od, s, now)
        if g[G_UPP] > 1:
            st[S_SENSED][od] = old // g[G_UPP]
        st[S_COUNTERS][C_RMW] += 1
    die = choose_die(st, lpn, s)
    st[S_SENSED][die] = -1              # a program (and its GC) overwrites the register
    ch = die % nch
    if die_free[die] > s:
        s = die_free[die]
    upp = g[G_UPP]
    if upp > 1:
        st[S_MISC][1] = 0
    _die, copies, erased = host_write_page(st, lpn, die)
    # one sense per NAND page the copies come from (each copy its own with one unit
    # per page)
    senses = st[S_MISC][1] if upp > 1 else copies
    s = _reserve(iv_s, iv_e, iv_n, ch, s, x, now) + x
    _w_book(st, ch, s)
    s += g[P_TPROG]
    durable = s
    _book(st, die, s, now)
    if copies:                          # foreground GC right after this program
        if g[G_COPYBACK] != 0:
            for k in range(copies):
                s += (g[P_TR] if k < senses else 0) + g[P_TPROG]
                _book(st, die, s, now)
        else:
            for k in range(copies):     # out to the controller (ECC) and back in
                sense = g[P_TR] if k < senses else 0
                s = _reserve(iv_s, iv_e, iv_n, ch, s + sense, x, now) + x
                s = _reserve(iv_s, iv_e, iv_n, ch, s, x, now) + x
                _w_book(st, ch, s)
                s += g[P_TPROG]
                _book(st, die, s, now)
    for _ in range(erased):
        s += g[P_TBERS]
        _book(st, die, s, now)
    die_free[die] = s
    return durable


@kernel
def write(i32, i64, ch_bpns, host_bpns, off, size, t_data, now):
    """Map and reserve the programs of a write whose data arrives from the host from
    ``t_data`` on (``host_bpns`` bytes/ns). Each page's bytes stay in the write buffer
    until its program ends. Returns when the last page is durable."""
    st = views(i32, i64)
    hk, hb, hs = st[S_HK], st[S_HB], st[S_HS]
    page = st[S_HDR][G_PAGE]
    durable = t_data
    pos = off
    end = off + size
    while pos < end:
        lpn = pos // page
        pend = (lpn + 1) * page
        if pend > end:
            pend = end
        arrived = t_data + np.int64((pend - off) / host_bpns + 0.5)
        d = _program_page(st, ch_bpns, lpn, pend - pos, arrived, now)
        _heap_push(hk, hb, hs, d, pend - pos)
        hs[1] += pend - pos
        if d > durable:
            durable = d
        pos = pend
    return durable


@kernel
def program_serial(i32, i64, ch_bpns, die, n_pages, t_start, now):
    """Program ``n_pages`` one after the other on one die (FTL metadata commit); the
    die is the one free first when ``die`` < 0."""
    st = views(i32, i64)
    g = st[S_HDR]
    die_free = st[S_DIE_FREE]
    if die < 0:
        die = 0
        for d in range(g[G_NDIE]):
            if die_free[d] < die_free[die]:
                die = d
    x = np.int64(g[G_PAGE] / ch_bpns + 0.5)
    ch = die % g[G_NCH]
    st[S_SENSED][die] = -1
    s = die_free[die] if die_free[die] > t_start else t_start
    for _ in range(n_pages):
        s = _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], ch, s, x, now) + x
        _w_book(st, ch, s)
        s += g[P_TPROG]
        _book(st, die, s, now)
    die_free[die] = s
    return s


# -- whole commands: one compiled call each -----------------------------------------------

@kernel
def read_cmd(i32, i64, ch_bpns, host_bpns, off, size, t_start, now):
    """Flash reads plus the host-link transfer; returns when the data is at the host.

    The link transfer starts once the first page is in the controller and ends no
    earlier than the last page's arrival plus its own transfer."""
    read(i32, i64, ch_bpns, off, size, t_start, now)
    st = views(i32, i64)
    out = st[S_OUT]
    dur = np.int64(size / host_bpns)
    earliest = out[1] + np.int64(out[2] / host_bpns) - dur
    if out[0] > earliest:
        earliest = out[0]
    return _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], st[S_HDR][G_NCH], earliest, dur,
                    now) + dur


@kernel
def write_cmd(i32, i64, ch_bpns, host_bpns, cap, off, size, t, now):
    """Wait for buffer space, transfer over the host link, reserve the programs.

    The transfer starts once ``min(size, cap)`` bytes of the buffer are free. A write
    larger than the buffer streams: each further page needs room of its own, which
    only programs (its own earlier pages included) free, so the transfer stalls page
    by page until then and the data is not all in the buffer before that.

    Returns the time the last byte is in the buffer (the acknowledgement of a cached
    write); ``out[0]`` = when the transfer could start, ``out[1]`` = when the last page
    is durable, ``out[2]`` = ns the transfer spent waiting for buffer space in all."""
    need = size if size < cap else cap
    t_space = buffer_reserve(i32, i64, cap, need, t)
    st = views(i32, i64)
    link = st[S_HDR][G_NCH]
    out = st[S_OUT]
    if size <= cap:
        dur = np.int64(size / host_bpns)
        start = _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], link, t_space, dur, now)
        durable = write(i32, i64, ch_bpns, host_bpns, off, size, start, now)
        out[0] = t_space
        out[1] = durable
        out[2] = t_space - t
        return start + dur
    hk, hb, hs = st[S_HK], st[S_HB], st[S_HS]
    page = st[S_HDR][G_PAGE]
    waited = t_space - t
    durable = t_space
    ready = t_space          # the next piece may start on the link from here
    pos = off
    end = off + size
    while pos < end:
        lpn = pos // page
        pend = (lpn + 1) * page
        if pend > end:
            pend = end
        piece = pend - pos
        room = buffer_reserve(i32, i64, cap, piece, ready)
        waited += room - ready
        x = np.int64(piece / host_bpns + 0.5)
        arrived = _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], link, room, x, now) + x
        d = _program_page(st, ch_bpns, lpn, piece, arrived, now)
        _heap_push(hk, hb, hs, d, piece)
        hs[1] += piece
        if d > durable:
            durable = d
        ready = arrived
        pos = pend
    out[0] = t_space
    out[1] = durable
    out[2] = waited
    return ready
