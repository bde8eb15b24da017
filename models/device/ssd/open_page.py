"""Compiled (numba) kernels of the SSD model: a host unit's program and what follows
it on its die, and the write stream's open NAND page (``kernels`` describes the
timing; this module holds the parts the open page's padding shares with a host
write).

- ``_unit_program``: a host unit's (or padding's) program time, in SLC mode while the
  SLC cache has room.
- ``_gc_after``: the foreground GC a host page write triggered, booked on its die.
- ``pad_open_pages``: a FLUSH or a write due on flash, on a drive without power-loss
  protection, pads the stream's partly filled NAND page.
- ``_take_padding``: host data in the controller by the time that padded page goes to
  its die takes padding units' places (``_may_take``: only where dynamic allocation
  could have put it on that die).
"""
from __future__ import annotations

import numpy as np

from .calendar import _reserve
from .ftl_kernels import host_write_page, valid_limit
from .packed import (FILL_DIE, FILL_END, FILL_PAD_BY, FILL_PAD_END, FILL_PAD_LEFT,
                     FILL_PADDED, FILL_START, FILL_UNITS, G_COPYBACK, G_DYNAMIC, G_NCH,
                     G_PAGE, G_READ_PRIO, G_SLC_UNITS, G_UPP, P_TBERS, P_TPROG,
                     P_TPROG_SLC, P_TR, S_DIE_FREE, S_DVALID, S_FILL, S_HDR, S_IV_E, S_IV_N,
                     S_IV_S, S_MISC, S_RD_PAGE, S_SENSED, S_SLC, SLC_PAGES, SLC_USED, kernel,
                     views)
from .read_priority import (_book, _priority_transfer, _read_insert, _read_slot,
                            _w_book)


@kernel
def _unit_program(st, g):
    """The program time of one unit the host wrote (or of padding): in SLC mode while
    the SLC cache has room (a unit of it taken), else ``P_TPROG`` (always, without a
    cache)."""
    slc = st[S_SLC]
    if slc[SLC_USED] < g[G_SLC_UNITS]:
        slc[SLC_USED] += 1
        slc[SLC_PAGES] += 1
        return g[P_TPROG_SLC]
    return g[P_TPROG]


@kernel
def _gc_after(st, g, die, s, copies, erased, x, now):
    """Book the foreground GC a host page write triggered (``copies`` relocations,
    ``erased`` block erases) on ``die`` from ``s``; returns when it ends."""
    iv_s, iv_e, iv_n = st[S_IV_S], st[S_IV_E], st[S_IV_N]
    ch = die % g[G_NCH]
    # one sense per NAND page the copies come from (each copy its own with one unit
    # per page)
    senses = st[S_MISC][1] if g[G_UPP] > 1 else copies
    if copies:
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
    return s


@kernel
def _may_take(st, g, die):
    """Whether a host unit may go to ``die`` outside ``choose_die``: with dynamic
    allocation, and while the die's valid data leaves GC room (``choose_die``'s rule)."""
    if g[G_DYNAMIC] == 0:
        return False
    return st[S_DVALID][die] < valid_limit(g)


@kernel
def _take_padding(st, g, lpn, x, now):
    """A host unit whose data is in the controller by the time the last padded page
    went to its die (``FILL_PAD_BY``: when the padding was asked for, or later if the
    die was still busy when the page's first unit came) takes a padding unit's place:
    it is mapped to that page's die and programmed with it (no program of its own;
    durable when that page is), as firmware fills the page from its buffer when the
    die takes it. GC the mapping triggers is booked after the die's work."""
    fill = st[S_FILL]
    die = fill[FILL_DIE]
    fill[FILL_PAD_LEFT] -= 1
    fill[FILL_PADDED] -= 1
    _die, copies, erased = host_write_page(st, lpn, die)
    if copies or erased:
        die_free = st[S_DIE_FREE]
        st[S_SENSED][die] = -1
        die_free[die] = _gc_after(st, g, die, die_free[die], copies, erased, x, now)
    return fill[FILL_PAD_END]


@kernel
def pad_open_pages(i32, i64, ch_bpns, t, now):
    """Make the write stream's partly filled NAND page durable (a FLUSH, or a write that
    must be on flash when it completes, on a drive without power-loss protection):
    the rest of the page is padded - its missing units go over the channel and the
    die of the page's last unit programs them, so the page has cost its whole program
    time, as a full page's program does. The firmware fills pages from its buffer in
    order, so one page at most is partly filled (the units the model places on
    several dies count as one stream). From ``t`` on, and not before the last unit's
    program ends; with read priority the padding goes in as a read does (after the
    operation in progress, the work booked behind it moved back: ``_read_slot`` /
    ``_read_insert``), so a FLUSH does not wait for the foreground GC queued behind its
    data; without it, after everything booked on the die. ``now`` is when the
    padding is asked for (the command's arrival); host data in the controller by then,
    or by when the page's first unit went to its die if later, may still take the
    padding's place (``_take_padding``). Returns when the padding ends (``t`` if no
    page is open). No-op with one unit per NAND page."""
    st = views(i32, i64)
    g = st[S_HDR]
    fill = st[S_FILL]
    k = g[G_UPP] - fill[FILL_UNITS]
    if k == g[G_UPP]:
        return t
    d = fill[FILL_DIE]
    t0 = fill[FILL_END] if fill[FILL_END] > t else t
    x = np.int64(k * g[G_PAGE] / ch_bpns + 0.5)
    ch = d % g[G_NCH]
    die_free = st[S_DIE_FREE]
    if g[G_READ_PRIO]:
        slot = _read_slot(st, d, t0, now)
        s = _priority_transfer(st, ch, slot, x, now)
    else:
        slot = die_free[d] if die_free[d] > t0 else t0
        s = _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], ch, slot, x, now) + x
        _w_book(st, ch, s)
    # the page goes to its die when it is due and the die has taken its first unit:
    # data in the controller by then fills it in place of padding
    fill[FILL_PAD_BY] = fill[FILL_START] if fill[FILL_START] > now else now
    for _ in range(k):
        s += _unit_program(st, g)
    fill[FILL_PADDED] += k
    fill[FILL_PAD_LEFT] = k
    fill[FILL_PAD_END] = s
    if g[G_READ_PRIO]:
        if slot >= die_free[d]:
            st[S_SENSED][d] = -1
        _read_insert(st, d, slot, s, now)
        st[S_RD_PAGE][d] = -1           # the program overwrote the die's register
    else:
        st[S_SENSED][d] = -1
        die_free[d] = s
        _book(st, d, s, now)
    fill[FILL_UNITS] = 0
    return s
