"""Compiled (numba) kernels of the SSD model: the flash / host-link timing of each
command, over the packed state of ``ftl.FTLState`` (the FTL itself: ``ftl_kernels``;
``ftl.py`` describes it).
The front ends (``drive.py``, ``nvme.py``) call one kernel per command.

The compiled code is in six modules: ``packed`` (the state's layout and ``views``),
``ftl_kernels`` (the FTL: mapping, die choice, GC, TRIM, rebuilding the free lists),
``calendar`` (busy intervals with back-filling; the write buffer's heap),
``read_priority`` (reads cutting in ahead of booked work), ``open_page`` (a unit's
program, the GC after it, the open NAND page's padding) and this one (the timed
operations and one entry point per command). numba's on-disk cache
notices an edit only to a function's own module; ``pipeline.numba_cache`` keys the
cache directory by every ``models/`` source, so an edit to any of them recompiles
all (as for the HDD's kernels).

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
- The open NAND page (``fill``): host units fill NAND pages of ``G_UPP`` units in the
  order they are programmed (one stream, whatever dies the model places them on); a
  program time is a unit's share of its page's. What must be on flash before the
  page is full - a FLUSH, or a write due on flash at completion, on a drive without
  power-loss protection - pads the page (``pad_open_pages``): its missing units are
  transferred and programmed on the die of its last unit, so a lone unit costs a
  whole page program. The page goes to its die when the padding is asked for, or
  later if the die was still busy when the page's first unit came to it: host units
  whose data is in the controller by then take padding units' places
  (``_take_padding``: mapped to that die, durable with the page, no program of their
  own), so concurrent FUA writes share pages once the dies are busy. With power-loss
  protection the buffer keeps gathering.

- Read priority (header flag ``G_READ_PRIO``): a die keeps the end times of the
  operations booked on it (``bnd``); a host page read - and the read of the old page a
  partial-page write merges with (read-modify-write) - goes in at the first of them at
  or after its arrival and after the die's last queued read (``rd_end``): it waits
  for the operation in progress, not for the queue (``read_priority.py``). Everything
  booked behind it on the die then ends later by the read's time (``die_free`` and the
  recorded ends move); what was already handed out for those operations - their
  channel bookings, a write's durable time, its buffer release - is not moved, so
  while reads cut in, the queued programs free buffer space and become durable up to
  the reads' time early. On the channel likewise: when programs or GC copies are
  booked on it past the read's page (``w_end``), the read's transfer waits for the
  transfer in progress (one page at most) and the booked busy time behind it moves
  back (``_cut_in``); otherwise it takes the earliest gap as before. Pure reads and pure
  writes are booked exactly as without the flag.

- The SLC cache (header ``G_SLC_UNITS`` > 0: consumer TLC / QLC drives run part of
  their NAND in SLC mode as a write cache - Samsung's TurboWrite, others' "SLC
  cache"): a host unit's program takes ``P_TPROG_SLC`` while the cache has room and
  fills one unit of it, else ``P_TPROG`` (written directly to TLC). GC copies
  program at ``P_TPROG`` (TLC to TLC), the FTL map's pages at ``P_TPROG_SLC``.
  The cache empties by folding while the drive is idle (``slc_fold``): every die
  folds at ``P_TPROG`` a unit for as long as no booked operation remains, and a
  command's arrival stops it at once - a fold in progress does not delay it (as if
  firmware suspended it). The cache is a rate budget, not blocks of the FTL: which
  LBAs sit in SLC, and the reads of them, are not distinguished.

Deliberately not modelled: multi-plane programs (``program_us`` is already the
effective time per mapping unit), cache-program/cache-read modes (a sense does not
overlap the previous page's transfer), read-ahead into controller DRAM, program
and erase suspend (a read waits for the program, copy or erase in progress on its
die), background GC.
"""
from __future__ import annotations

import numpy as np

from .calendar import _heap_push, _reserve, buffer_reserve
from .ftl_kernels import choose_die, host_write_page, trim, write_pages
from .open_page import _gc_after, _may_take, _take_padding, _unit_program, pad_open_pages
from .packed import (C_ERASES, C_GC_PAGES, C_HOST_PAGES, C_READ_PAGES, C_RMW,
                     C_UNMAPPED_READS, FILL_DIE, FILL_END, FILL_PAD_BY, FILL_PAD_LEFT,
                     FILL_PADDED, FILL_START, FILL_UNITS, G_BPD, G_NCH, G_NDIE, G_PAGE,
                     G_PPB, G_READ_PRIO, G_UPP, IV_SLOTS, P_TPROG, P_TPROG_SLC, P_TR,
                     S_COUNTERS, S_DIE_FREE, S_FILL, S_HB, S_HDR, S_HK, S_HS, S_IV_E, S_IV_N,
                     S_IV_S, S_L2P, S_OUT, S_SENSED, S_SLC, SLC_MARK, SLC_PAGES,
                     SLC_USED, kernel, views)
from .read_priority import _book, _priority_read, _w_book

# reached through this module by the front ends and tests (``kernels.<name>``)
__all__ = ["read", "read_cmd", "write", "write_cmd", "program_serial", "slc_fold",
           "pad_open_pages", "link_reserve", "buffer_reserve", "_reserve", "trim",
           "write_pages",
           "C_HOST_PAGES", "C_GC_PAGES", "C_ERASES", "C_READ_PAGES", "C_RMW", "IV_SLOTS",
           "SLC_PAGES", "FILL_UNITS", "FILL_DIE", "FILL_PADDED", "FILL_PAD_LEFT"]

# -- timed operations (entry points: one call per command) --------------------------------

@kernel
def link_reserve(i32, i64, t, dur, now):
    """Book ``dur`` ns on the host link at the earliest gap >= t; returns the start."""
    st = views(i32, i64)
    return _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], st[S_HDR][G_NCH], t, dur, now)


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
                ready = _priority_read(st, die, ppn, t_start, x, now)
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
        # partial page: read the old page into the controller and merge (RMW) - a
        # read, with read priority taken as a host read's
        od = old // (g[G_PPB] * g[G_BPD])
        if g[G_READ_PRIO]:
            s = _priority_read(st, od, old, s, x, now)
        else:
            r = die_free[od] if die_free[od] > s else s
            s = _reserve(iv_s, iv_e, iv_n, od % nch, r + g[P_TR], x, now) + x
            _w_book(st, od % nch, s)
            die_free[od] = s
            _book(st, od, s, now)
            if g[G_UPP] > 1:
                st[S_SENSED][od] = old // g[G_UPP]
        st[S_COUNTERS][C_RMW] += 1
    upp = g[G_UPP]
    fill = st[S_FILL]
    if fill[FILL_PAD_LEFT] > 0:         # (only ever set with several units a page)
        if s <= fill[FILL_PAD_BY] and _may_take(st, g, fill[FILL_DIE]):
            return _take_padding(st, g, lpn, x, now)
        fill[FILL_PAD_LEFT] = 0         # the stream has gone on to a new page
    die = choose_die(st, lpn, s)
    st[S_SENSED][die] = -1              # a program (and its GC) overwrites the register
    ch = die % nch
    if die_free[die] > s:
        s = die_free[die]
    _die, copies, erased = host_write_page(st, lpn, die)
    s = _reserve(iv_s, iv_e, iv_n, ch, s, x, now)
    if upp > 1 and fill[FILL_UNITS] == 0:
        fill[FILL_START] = s
    s += x
    _w_book(st, ch, s)
    s += _unit_program(st, g)
    if upp > 1:                         # the write stream's open NAND page
        fill[FILL_UNITS] = (fill[FILL_UNITS] + 1) % upp
        fill[FILL_DIE] = die
        fill[FILL_END] = s
    durable = s
    _book(st, die, s, now)
    die_free[die] = _gc_after(st, g, die, s, copies, erased, x, now)
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
    """Program ``n_pages`` NAND pages one after the other on one die (FTL metadata
    commit); the die is the one free first when ``die`` < 0. Each is a program of its
    own: the page's units (``G_UPP``) go over the channel and the die is held for the
    whole page's program time, ``G_UPP`` x the effective per-unit program time (in
    SLC mode, ``P_TPROG_SLC``: the map is kept in SLC blocks; ``P_TPROG`` on a drive
    without an SLC cache) - a lone program is not shared with other data as a
    stream's programs are."""
    st = views(i32, i64)
    g = st[S_HDR]
    die_free = st[S_DIE_FREE]
    if die < 0:
        die = 0
        for d in range(g[G_NDIE]):
            if die_free[d] < die_free[die]:
                die = d
    x = np.int64(g[G_UPP] * g[G_PAGE] / ch_bpns + 0.5)
    prog = g[G_UPP] * g[P_TPROG_SLC]
    ch = die % g[G_NCH]
    st[S_SENSED][die] = -1
    s = die_free[die] if die_free[die] > t_start else t_start
    for _ in range(n_pages):
        s = _reserve(st[S_IV_S], st[S_IV_E], st[S_IV_N], ch, s, x, now) + x
        _w_book(st, ch, s)
        s += prog
        _book(st, die, s, now)
    die_free[die] = s
    return s


@kernel
def slc_fold(i32, i64, now):
    """Credit the SLC cache with the folding done since the last command: from when the
    drive last went idle (every die's booked work done) to ``now``, every die
    programs folded data into TLC at ``P_TPROG`` a unit, freeing that many units of
    the cache. Called at each command's arrival (``now``) on a drive with a cache."""
    st = views(i32, i64)
    g = st[S_HDR]
    slc = st[S_SLC]
    if slc[SLC_USED] > 0 and g[P_TPROG] > 0:
        die_free = st[S_DIE_FREE]
        idle = slc[SLC_MARK]
        for d in range(g[G_NDIE]):
            if die_free[d] > idle:
                idle = die_free[d]
        if now > idle:
            n = (now - idle) * g[G_NDIE] // g[P_TPROG]
            slc[SLC_USED] = slc[SLC_USED] - n if n < slc[SLC_USED] else 0
    if now > slc[SLC_MARK]:
        slc[SLC_MARK] = now


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
