"""The SSD's flash translation layer: page-mapped, log-structured, greedy garbage
collection over erase blocks, over-provisioning. State lives in two flat numpy
buffers (int32 and int64) so that one compiled call per command unpacks it cheaply;
the compiled FTL is in ``ftl_kernels.py``, the flash timing in ``kernels.py``, the
command protocol in ``flash.py`` (both front ends). This module lays the state out and
preconditions it.

The mechanism behind "small random writes cost more than sequential ones":

- Die allocation: a host page write goes to the die that can start it first
  (``dynamic``, among dies whose valid data still leaves GC room), or to
  ``lpn % n_dies`` (``static`` striping); both as in Agrawal et al., "Design
  tradeoffs for SSD performance", USENIX ATC 2008. Inside a die the mapping is fully
  dynamic: a write appends to the die's open erase block (out of place) and the old
  physical page becomes invalid. With dynamic allocation a die busy with a long GC
  does not hold up the writes that other dies could take.
- Over-provisioning: a die has more physical blocks than its share of logical pages.
  When its free pool drops below ``gc_min_free`` blocks, GC takes the sealed block
  with the fewest valid pages (greedy), copies the valid pages to the die's GC open
  block and erases it. Host writes and GC relocations fill separate open blocks, so
  data that survived a GC (cold) is not mixed with fresh host writes (hot).
  Sequential overwrites, and a small region rewritten over and over, leave whole
  blocks invalid (little to copy); uniform random overwrites of the whole drive leave
  victims with most pages still valid, so write amplification grows as
  over-provisioning shrinks (~7 at 7 % spare).
  Greedy selection costs O(pages_per_block) through per-die bucket lists of sealed
  blocks indexed by their valid-page count.
- TRIM/DISCARD invalidates mapped pages.

Deliberately not modelled: hot/cold separation beyond the separate GC stream, wear
levelling beyond counting erases, bad blocks, a partially cached mapping table.
"""
from __future__ import annotations

import numpy as np

from .ftl_kernels import rebuild
from .packed import (_HDR, _I32, _I64, _N_ARR, BND_SLOTS, G_BPD, G_MINFREE, G_NDIE,
                     G_PPB, G_UPP, IV_SLOTS, N_COUNTERS, N_FILL)


class FTLState:
    """Two flat buffers (``i32``, ``i64``) and named numpy views into them.

    int32: ``l2p`` (LPN -> physical page, -1 unmapped), ``p2l`` (physical page -> LPN,
    -1 free or invalid), per block ``valid`` / ``bstate`` (0 free, 1 open, 2 sealed) /
    ``erases`` / bucket links ``nxt`` ``prv``, per die ``free_list`` (stack of free
    blocks) ``free_n`` ``active`` (open block) ``wptr``, ``head[die, valid]``.
    int64: ``counters``, flash calendars ``die_free`` and busy intervals ``iv_s`` /
    ``iv_e`` / ``iv_n`` (one row per channel plus the host link), the write buffer heap
    ``hk`` / ``hb`` / ``hs``, ``out`` for multi-valued results, and for read priority
    per die the end times of its booked operations ``bnd`` / ``bnd_n`` and of its last
    queued read ``rd_end`` and the NAND page it sensed ``rd_page``, and per channel the
    end of its last booked non-read transfer ``w_end``; the SLC cache's ``slc``
    (``packed.SLC_*``); the write stream's open NAND page, ``fill`` (``packed.FILL_*``).
    """

    def __init__(self, user_pages: int, n_dies: int, n_channels: int, blocks_per_die: int,
                 pages_per_block: int, gc_min_free: int, page_bytes: int, copyback: bool,
                 dynamic: bool, timings_ns: tuple[int, int, int], buffer_slots: int,
                 units_per_nand_page: int = 1, read_priority: bool = False,
                 slc_units: int = 0, slc_program_ns: int | None = None) -> None:
        nb = n_dies * blocks_per_die
        shapes32 = {"l2p": (user_pages,), "p2l": (nb * pages_per_block,), "valid": (nb,),
                    "bstate": (nb,), "erases": (nb,), "free_list": (n_dies, blocks_per_die),
                    "free_n": (n_dies,), "active": (2 * n_dies,), "wptr": (2 * n_dies,),
                    "head": (n_dies, pages_per_block + 1), "nxt": (nb,), "prv": (nb,),
                    "dvalid": (n_dies,)}
        shapes64 = {"counters": (N_COUNTERS,), "die_free": (n_dies,),
                    "iv_s": (n_channels + 1, IV_SLOTS), "iv_e": (n_channels + 1, IV_SLOTS),
                    "iv_n": (n_channels + 1,), "hk": (buffer_slots,), "hb": (buffer_slots,),
                    "hs": (2,), "out": (4,), "misc": (4,), "sensed": (n_dies,),
                    "bnd": (n_dies, BND_SLOTS), "bnd_n": (n_dies,), "rd_end": (n_dies,),
                    "rd_page": (n_dies,), "w_end": (n_channels,), "slc": (4,),
                    "fill": (N_FILL,)}
        assert tuple(shapes32) == _I32 and tuple(shapes64) == _I64
        n32 = sum(int(np.prod(s)) for s in shapes32.values())
        hdr = _HDR + 2 * _N_ARR
        n64 = hdr + sum(int(np.prod(s)) for s in shapes64.values())
        self.i32 = np.zeros(n32, dtype=np.int32)
        self.i64 = np.zeros(n64, dtype=np.int64)
        self.i64[:_HDR] = [n_dies, n_channels, blocks_per_die, pages_per_block, gc_min_free,
                           page_bytes, int(copyback), int(dynamic), *timings_ns,
                           units_per_nand_page, int(read_priority), slc_units,
                           timings_ns[1] if slc_program_ns is None else slc_program_ns]
        k = 0
        for buf, shapes, pos in ((self.i32, shapes32, 0), (self.i64, shapes64, hdr)):
            for name, shape in shapes.items():
                size = int(np.prod(shape))
                self.i64[_HDR + 2 * k] = pos
                self.i64[_HDR + 2 * k + 1] = size
                setattr(self, name, buf[pos:pos + size].reshape(shape))
                pos += size
                k += 1
        self.g = self.i64[:_HDR]
        for name in ("l2p", "p2l", "active", "head", "nxt", "prv", "sensed", "rd_page"):
            getattr(self, name)[...] = -1
        # free stacks: the lowest block id is popped first
        self.free_list[...] = (np.arange(nb, dtype=np.int32)
                               .reshape(n_dies, blocks_per_die)[:, ::-1])
        self.free_n[...] = blocks_per_die


def precondition(st: FTLState, mode: str, rng: np.random.Generator,
                 span_pages: int | None = None) -> None:
    """Lay out a used drive whose LPNs below ``span_pages`` (default: all) were written:
    ``sequential`` (once, in order) or ``random`` (the steady state of uniform random
    page overwrites under greedy GC). LPNs from ``span_pages`` on stay unmapped.
    Written in order, each NAND page's worth of consecutive LPNs (``units per NAND
    page``) lies together on one die, the pages striped over the dies, as an FTL that
    gathers a page in its buffer lays out sequential data (the simulated write path
    does not: ``ftl_kernels.choose_die``).

    The random steady state is built directly, not by simulating a drive's worth of
    overwrites: in the fluid model of LRW/greedy cleaning under uniform random writes
    (Hu et al., "Write amplification analysis in flash-based SSDs", SYSTOR 2009;
    Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012) blocks are
    sealed at a constant rate and a block of age a (host page writes to its die since
    it was sealed) keeps a fraction exp(-a/U) of its pages valid, U = logical pages of
    the die. Ages are therefore spread uniformly up to the victim age A, with x = A/U
    fixed by the spare space: (1 + spare) (1 - e^-x) / x = 1. Each block gets that many
    valid pages, holding a random permutation of the die's LPNs; the real GC then takes
    over (``test_ssd`` checks the result against aging a drive by simulation).

    A die in that steady state is somewhere in its GC cycle: GC runs when opening a
    block leaves fewer than ``gc_min_free`` free, and stops when that many are free
    again, so between collections a die has exactly ``gc_min_free`` free blocks plus a
    partly filled open block for host writes and one for GC copies. Each die gets
    both, filled to a uniformly random page (its phase in the cycle), and
    ``bpd - gc_min_free - 2`` sealed blocks. (Sealing them all instead would leave
    every die two blocks short of its reserve: the first write to each die, on every
    die at once, would then have to collect ~two blocks' worth of victims.)"""
    g = st.g
    ndie, bpd, ppb = int(g[G_NDIE]), int(g[G_BPD]), int(g[G_PPB])
    user = st.l2p.shape[0] if span_pages is None else min(int(span_pages), st.l2p.shape[0])
    st.p2l[...] = -1
    st.l2p[...] = -1
    used = np.zeros(ndie, dtype=np.int64)
    open_fill = np.full((ndie, 2), -1, dtype=np.int64)
    upp = int(g[G_UPP])
    page_die = (np.arange(user, dtype=np.int64) // upp) % ndie if upp > 1 else None
    for die in range(ndie):
        if mode == "sequential" and page_die is not None:
            lpns = np.flatnonzero(page_die == die).astype(np.int32)
        else:
            lpns = np.arange(die, user, ndie, dtype=np.int32)
        u = lpns.shape[0]
        if u == 0:
            continue
        if mode == "sequential":
            nblk = -(-u // ppb)
            slots = np.arange(u, dtype=np.int64)
        else:
            nblk = bpd - int(g[G_MINFREE]) - 2
            host_fill = min(int(rng.integers(0, ppb)), u)
            gc_fill = min(int(rng.integers(0, ppb)), u - host_fill)
            counts = _steady_valid_counts(u - host_fill - gc_fill, nblk, ppb)
            # which slots of a block hold the valid pages does not matter to GC; the
            # open blocks (nblk: host, nblk + 1: GC) are filled from their first page
            counts = np.concatenate([counts, [host_fill, gc_fill]])
            slots = (np.repeat(np.arange(nblk + 2, dtype=np.int64) * ppb, counts)
                     + _ranks(counts))
            lpns = rng.permutation(lpns)
            open_fill[die] = host_fill, gc_fill
        st.p2l[die * bpd * ppb + slots] = lpns
        used[die] = nblk
    rebuild(st.i32, st.i64, used, open_fill)


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0..c-1 for every c in counts, concatenated."""
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(int(counts.sum())) - starts


def _steady_valid_counts(u: int, nblk: int, ppb: int) -> np.ndarray:
    """Valid pages per block (ages uniform, fraction exp(-a/U)), summing to ``u``."""
    rho = nblk * ppb / u
    lo, hi = 1e-12, 60.0
    for _ in range(200):                     # rho (1 - e^-x) / x falls from rho to 0
        x = 0.5 * (lo + hi)
        if rho * (-np.expm1(-x)) / x > 1.0:
            lo = x
        else:
            hi = x
    exact = ppb * np.exp(-x * (np.arange(nblk) + 0.5) / nblk)
    counts = np.floor(exact).astype(np.int64)
    short = u - int(counts.sum())
    if short > 0:                            # largest remainders get the missing pages
        counts[np.argsort(counts - exact)[:short]] += 1
    elif short < 0:
        counts[np.argsort(exact - counts)[:-short]] -= 1
    return np.minimum(counts, ppb)
