"""The SSD's FTL, compiled (``ftl.py`` describes the mechanism and lays the state
out): per-die bucket lists of sealed blocks by valid-page count, invalidation,
appending a page to a die's open block (host or GC stream), greedy garbage
collection, the choice of die for a host write, untimed bulk writes and TRIM, and
the rebuild of the free lists and buckets after preconditioning."""
from __future__ import annotations

import numpy as np

from .packed import (C_ERASES, C_GC_PAGES, C_HOST_PAGES, C_TRIMMED, G_BPD, G_DYNAMIC,
                     G_MINFREE, G_NDIE, G_PPB, G_UPP, S_ACTIVE, S_BSTATE, S_COUNTERS,
                     S_DIE_FREE, S_DVALID, S_ERASES, S_FREE_LIST, S_FREE_N, S_HDR, S_HEAD,
                     S_L2P, S_MISC, S_NXT, S_P2L, S_PRV, S_VALID, S_WPTR, kernel, views)


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

    Returns (pages copied, blocks erased). With NAND pages of several units it leaves
    the senses the copies need - one per NAND page holding a valid unit - in
    ``misc[1]`` (read by the GC's timing when there are copies)."""
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
        st[S_MISC][1] = senses
    return copies, erased


@kernel
def valid_limit(g):
    """The valid units above which a die takes no more host writes under dynamic
    allocation: its GC needs room to work."""
    return (g[G_BPD] - g[G_MINFREE] - 3) * g[G_PPB]


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
    limit = valid_limit(g)
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
