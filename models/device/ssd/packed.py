"""The packed state of the SSD's compiled kernels: the geometry and flash timings in
the int64 buffer's header, the arrays of the FTL, the calendars and the write buffer
laid out in one int32 and one int64 buffer (``ftl.FTLState`` builds them; one
compiled call per command unpacks them with ``views``), the counters, and ``kernel``,
the decorator every SSD kernel is compiled with."""
from __future__ import annotations

from numba import njit

# Every kernel works in place on the packed state and allocates nothing, so it is
# compiled without numba's runtime (NRT): with it, each array view (``views`` makes 32)
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
G_SLC_UNITS = 13     # SLC cache capacity in mapping units (0: no SLC cache)
P_TPROG_SLC = 14     # effective program time of one unit in SLC mode (P_TPROG without a cache)
_HDR = 15
# arrays in the int32 buffer, then in the int64 buffer (the tuple order of ``views``)
_I32 = ("l2p", "p2l", "valid", "bstate", "erases", "free_list", "free_n", "active", "wptr",
        "head", "nxt", "prv", "dvalid")
_I64 = ("counters", "die_free", "iv_s", "iv_e", "iv_n", "hk", "hb", "hs", "out", "misc",
        "sensed", "bnd", "bnd_n", "rd_end", "rd_page", "w_end", "slc", "fill")
(S_HDR, S_L2P, S_P2L, S_VALID, S_BSTATE, S_ERASES, S_FREE_LIST, S_FREE_N, S_ACTIVE, S_WPTR,
 S_HEAD, S_NXT, S_PRV, S_DVALID, S_COUNTERS, S_DIE_FREE, S_IV_S, S_IV_E, S_IV_N, S_HK, S_HB,
 S_HS, S_OUT, S_MISC, S_SENSED, S_BND, S_BND_N, S_RD_END, S_RD_PAGE, S_W_END, S_SLC,
 S_FILL) = range(32)
_N_ARR = len(_I32) + len(_I64)

# counters
C_HOST_PAGES, C_GC_PAGES, C_ERASES, C_READ_PAGES, C_UNMAPPED_READS, C_RMW, C_TRIMMED = range(7)
N_COUNTERS = 7
# the SLC cache's state (``slc``): units it holds, the time up to which idle folding is
# credited, units programmed in SLC mode (host data and open pages' padding)
SLC_USED, SLC_MARK, SLC_PAGES = range(3)
# the write stream's open NAND page (``fill``): host units in it, its die, when the last
# unit's program ends; units programmed as padding, in all; when the page's first unit
# went to its die; of the last page padded, the padding units host data may still take,
# the time by which that data must be in the controller, when the page is programmed
(FILL_UNITS, FILL_DIE, FILL_END, FILL_PADDED, FILL_START, FILL_PAD_LEFT, FILL_PAD_BY,
 FILL_PAD_END) = range(8)
N_FILL = 8
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
            i64[o[52]:o[52] + o[53]], i64[o[54]:o[54] + o[55]], i64[o[56]:o[56] + o[57]],
            i64[o[58]:o[58] + o[59]], i64[o[60]:o[60] + o[61]])
