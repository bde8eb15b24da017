"""Read priority in the flash kernels (``kernels.py``, whose docstring describes it):
each die's booked operation ends (``_book``) and each channel's last booked program or
GC transfer (``_w_book``); where a read goes in on its die (``_read_slot``), how the
work booked behind it moves back (``_read_insert``), its transfer ahead of the
channel's booked programs (``_priority_transfer``), and the read itself
(``_priority_read``: a host read's, or a read-modify-write's read of the old page).
The padding of an open NAND page (``kernels.pad_open_pages``) goes in the same way."""
from __future__ import annotations

import numpy as np

from .calendar import _cut_in, _first_end_after, _reserve
from .packed import (BND_SLOTS, G_NCH, G_UPP, P_TR, S_BND, S_BND_N, S_DIE_FREE, S_HDR,
                     S_IV_E, S_IV_N, S_IV_S, S_RD_END, S_RD_PAGE, S_SENSED, S_W_END, kernel)


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
def _priority_read(st, die, ppn, t, x, now):
    """A page read of physical page ``ppn`` on ``die`` from ``t`` with read priority (a
    host read's, or a read-modify-write's read of the old page): in at the die's read
    slot, its ``x`` ns transfer cutting in on the channel before booked programs;
    returns when its data is in the controller."""
    g = st[S_HDR]
    die_free = st[S_DIE_FREE]
    upp = g[G_UPP]
    sensed = st[S_SENSED]
    slot = _read_slot(st, die, t, now)
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
    ready = _priority_transfer(st, die % g[G_NCH], slot + sense, x, now)
    _read_insert(st, die, slot, ready, now)
    return ready


@kernel
def _priority_transfer(st, ch, s, x, now):
    """An ``x`` ns transfer on channel ``ch`` from ``s`` that goes before the programs and
    GC copies booked there (it waits for the transfer under way: ``_cut_in``); returns
    its end."""
    w_end = st[S_W_END]
    if w_end[ch] > s:       # programs / GC booked on the channel: cut in
        w_end[ch] += x
        return _cut_in(st[S_IV_S], st[S_IV_E], st[S_IV_N], ch, s, x, now) + x
    return _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], ch, s, x, now) + x
