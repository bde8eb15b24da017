"""B+tree indexes grown by an insert stream, in the pages of one tablespace.

Modelled after MySQL 5.6 ``btr0btr.cc`` (``btr_page_split_and_insert``,
``btr_root_raise_and_insert``) on top of the allocator in ``tablespace``:

- Every index has a root page (a fragment page of its non-leaf segment, allocated when
  the index is created), a leaf segment and a non-leaf segment. Leaves are chained in
  key order (``FIL_PAGE_PREV`` / ``FIL_PAGE_NEXT``); every level above holds one node
  pointer per page of the level below, the pages of each level chained too.
- A full page splits when a record does not fit. The split point follows InnoDB's
  heuristics: if the page's ``PAGE_LAST_INSERT`` is the insert point (a run of
  ascending inserts here), split at the new record when at most one record follows
  it, else keep one record after it on the left page (``btr_page_get_split_rec_to_
  right``); otherwise split in the middle. The new page is the right sibling and is
  allocated with hint ``page_no + 1``, direction up - where it lands is decided by
  ``fseg_alloc_free_page``, so the physical order of leaves emerges from the insert
  order. A full root is first raised: its records move to a new page of its level's
  segment and the root becomes the parent of that page.
- Leaves hold whole records of a fixed size; where each goes is decided by the insert
  pattern (``btree_insert``).
- Non-leaf levels hold node pointers (key + child page number) and split by the same
  rules.

The state lives in the tablespace's flat int32 array ``M`` (page records extended
with B-tree fields, plus index, run and user records) and is driven by compiled
loops: a 10 GB table is about 655,000 pages and tens of millions of records.

Deliberately not modelled: deletes, purge and page merges (no page is ever freed),
variable record sizes, ``innodb_fill_factor`` (sorted index builds), page
reorganisation, BLOB pages, the adaptive hash index.
"""
from __future__ import annotations

import numba
import numpy as np

from .fseg import fseg_alloc_free_page
from .tablespace import (FSP_NO_DIR, FSP_UP, HEADER_SLOTS, O_PAGE, PAGE_FIELDS, PAGE_SIZE,
                         init_space, space_words)

MODE_RUNS = 0
MODE_RIGHT = 1
MODE_RANDOM = 2

# usable bytes of a page: 16384 - FIL header 38 - page header 56 - infimum/supremum 26
# - FIL trailer 8; each record also costs half a 2-byte page directory slot (a slot
# owns 4..8 records)
PAGE_USABLE_BYTES = PAGE_SIZE - 38 - 56 - 26 - 8
NODE_PTR_EXTRA_BYTES = 5 + 4        # record header + child page number


def records_per_page(record_bytes: float) -> int:
    """Records of ``record_bytes`` (header included) that fit in one page."""
    return max(3, int(PAGE_USABLE_BYTES // (record_bytes + 0.5)))


# header slots of M used here (the tablespace uses 0..7)
O_IDX = 8           # index records
O_LEAFLIST = 9      # per index, its leaves (random mode)
O_RUN = 10          # run records
O_USER = 11         # user records
LL_WIDTH = 12       # room per index in the leaf lists
N_IDX = 13
C_RUNS = 16         # run records in use
C_USERS = 17        # users seen
C_ROWS = 18         # rows inserted
C_SPLITS = 19       # page splits, all indexes and levels
C_RAISES = 20       # root raises
# page record fields (0 is the owning segment)
G_LEVEL = 1
G_NREC = 2          # records: rows in a leaf, node pointers above
G_NXT = 3           # FIL_PAGE_NEXT
G_PRV = 4           # FIL_PAGE_PREV
G_PARENT = 5
G_FCHILD = 6        # first child (non-leaf)
G_LAST = 7          # PAGE_LAST_INSERT: user (runs leaf) or child page (non-leaf)
G_INDEX = 8
G_FRUN = 9          # first run (runs leaf)
G_SLOT = 10         # position in the index's leaf list (random mode)
# index record
I_ROOT = 0
I_MODE = 1
I_CAPL = 2          # records per leaf
I_CAPN = 3          # node pointers per non-leaf page
I_RIGHT = 4         # last leaf
I_NLEAVES = 5
IDX_FIELDS = 6
# run record (a user's consecutive records on one leaf)
R_USER = 0
R_CNT = 1
R_NEXT = 2
RUN_FIELDS = 3
# user record
U_PAGE = 0          # leaf holding the user's last record
U_RUN = 1           # that record's run
USER_FIELDS = 2


def new_state(max_pages: int, modes, cap_leaf, cap_node, max_users: int,
              max_runs: int) -> np.ndarray:
    """The build state: a tablespace with ``2 * len(modes)`` segments and the empty
    indexes (index 0 clustered) in one int32 array."""
    n_idx = len(modes)
    ll_width = max_pages if any(m == MODE_RANDOM for m in modes) else 1
    words = (HEADER_SLOTS + space_words(max_pages, 2 * n_idx) + n_idx * IDX_FIELDS
             + n_idx * ll_width + max_runs * RUN_FIELDS + max_users * USER_FIELDS)
    M = np.zeros(words, np.int32)
    end = init_space(M, HEADER_SLOTS, max_pages, 2 * n_idx)
    pages = M[M[O_PAGE]:M[O_PAGE] + max_pages * PAGE_FIELDS].reshape(max_pages, PAGE_FIELDS)
    pages[:, G_LEVEL:] = -1
    pages[:, G_NREC] = 0
    M[O_IDX] = end
    M[O_LEAFLIST] = M[O_IDX] + n_idx * IDX_FIELDS
    M[O_RUN] = M[O_LEAFLIST] + n_idx * ll_width
    M[O_USER] = M[O_RUN] + max_runs * RUN_FIELDS
    M[LL_WIDTH] = ll_width
    M[N_IDX] = n_idx
    M[M[O_LEAFLIST]:M[O_RUN]] = -1
    M[M[O_USER]:] = -1
    for i in range(n_idx):
        o = M[O_IDX] + i * IDX_FIELDS
        M[o + I_MODE] = modes[i]
        M[o + I_CAPL] = cap_leaf[i]
        M[o + I_CAPN] = cap_node[i]
        M[o + I_ROOT] = -1
        M[o + I_RIGHT] = -1
        create_index(M, i)
    return M


def page_field(M: np.ndarray, field: int) -> np.ndarray:
    """One field of every page record (a strided view)."""
    return M[M[O_PAGE] + field:M[O_PAGE] + M[2] * PAGE_FIELDS:PAGE_FIELDS]


# -- accessors ---------------------------------------------------------------------------
@numba.njit(cache=True)
def pg(M, p, f):
    return M[M[O_PAGE] + p * PAGE_FIELDS + f]


@numba.njit(cache=True)
def set_pg(M, p, f, v):
    M[M[O_PAGE] + p * PAGE_FIELDS + f] = v


@numba.njit(cache=True)
def ix(M, i, f):
    return M[M[O_IDX] + i * IDX_FIELDS + f]


@numba.njit(cache=True)
def set_ix(M, i, f, v):
    M[M[O_IDX] + i * IDX_FIELDS + f] = v


@numba.njit(cache=True)
def rn(M, r, f):
    return M[M[O_RUN] + r * RUN_FIELDS + f]


@numba.njit(cache=True)
def set_rn(M, r, f, v):
    M[M[O_RUN] + r * RUN_FIELDS + f] = v


@numba.njit(cache=True)
def us(M, u, f):
    return M[M[O_USER] + u * USER_FIELDS + f]


@numba.njit(cache=True)
def set_us(M, u, f, v):
    M[M[O_USER] + u * USER_FIELDS + f] = v


# -- page bookkeeping --------------------------------------------------------------------
@numba.njit(cache=True)
def alloc_page(M, idx, level, hint, direction):
    seg = 2 * idx + (1 if level > 0 else 0)
    p = fseg_alloc_free_page(M, seg, hint, direction)
    if p < 0:
        return -1
    o = M[O_PAGE] + p * PAGE_FIELDS
    for f in range(1, PAGE_FIELDS):
        M[o + f] = -1
    M[o + G_LEVEL] = level
    M[o + G_NREC] = 0
    M[o + G_INDEX] = idx
    return p


@numba.njit(cache=True)
def _link_after(M, a, b):
    n = pg(M, a, G_NXT)
    set_pg(M, b, G_NXT, n)
    set_pg(M, b, G_PRV, a)
    if n >= 0:
        set_pg(M, n, G_PRV, b)
    set_pg(M, a, G_NXT, b)


@numba.njit(cache=True)
def _add_leaf(M, idx, p):
    k = ix(M, idx, I_NLEAVES)
    if ix(M, idx, I_MODE) == MODE_RANDOM:
        M[M[O_LEAFLIST] + idx * M[LL_WIDTH] + k] = p
        set_pg(M, p, G_SLOT, k)
    set_ix(M, idx, I_NLEAVES, k + 1)


@numba.njit(cache=True)
def create_index(M, idx):
    """``btr_create``: the root, a fragment page of the non-leaf segment, is an empty
    leaf."""
    p = fseg_alloc_free_page(M, 2 * idx + 1, 0, FSP_NO_DIR)
    o = M[O_PAGE] + p * PAGE_FIELDS
    for f in range(1, PAGE_FIELDS):
        M[o + f] = -1
    M[o + G_LEVEL] = 0
    M[o + G_NREC] = 0
    M[o + G_INDEX] = idx
    set_ix(M, idx, I_ROOT, p)
    set_ix(M, idx, I_RIGHT, p)
    _add_leaf(M, idx, p)
    return p


@numba.njit(cache=True)
def raise_root(M, idx, pending):
    """``btr_root_raise_and_insert``: move the root's records to a new page of the
    root's level and make the root its parent. ``pending`` counts a new child already
    linked in the level below but not yet counted in the root. Returns the new page."""
    r = ix(M, idx, I_ROOT)
    lev = pg(M, r, G_LEVEL)
    z = alloc_page(M, idx, lev, 0, FSP_NO_DIR)
    if z < 0:
        return -1
    set_pg(M, z, G_NREC, pg(M, r, G_NREC))
    set_pg(M, z, G_LAST, pg(M, r, G_LAST))
    if lev == 0:
        q = pg(M, r, G_FRUN)
        set_pg(M, z, G_FRUN, q)
        while q >= 0:
            u = rn(M, q, R_USER)
            if us(M, u, U_RUN) == q:
                set_us(M, u, U_PAGE, z)
            q = rn(M, q, R_NEXT)
        if ix(M, idx, I_MODE) == MODE_RANDOM:
            k = pg(M, r, G_SLOT)
            M[M[O_LEAFLIST] + idx * M[LL_WIDTH] + k] = z
            set_pg(M, z, G_SLOT, k)
            set_pg(M, r, G_SLOT, -1)
        if ix(M, idx, I_RIGHT) == r:
            set_ix(M, idx, I_RIGHT, z)
    else:
        c = pg(M, r, G_FCHILD)
        set_pg(M, z, G_FCHILD, c)
        for _ in range(pg(M, r, G_NREC) + pending):
            set_pg(M, c, G_PARENT, z)
            c = pg(M, c, G_NXT)
    set_pg(M, r, G_LEVEL, lev + 1)
    set_pg(M, r, G_NREC, 1)
    set_pg(M, r, G_FRUN, -1)
    set_pg(M, r, G_FCHILD, z)
    set_pg(M, r, G_LAST, z)
    set_pg(M, z, G_PARENT, r)
    M[C_RAISES] += 1
    return z


@numba.njit(cache=True)
def split_ready(M, idx, p, pending):
    """A full page ``p`` about to split: ``p`` itself when it has a parent to take the
    new sibling's node pointer; when ``p`` is the root, the page its records moved to
    (``raise_root``, ``pending`` as there). -1 when the tablespace is full."""
    if pg(M, p, G_PARENT) >= 0:
        return p
    return raise_root(M, idx, pending)


@numba.njit(cache=True)
def split_point(last_is_insert_point, pos, cap):
    """Records (of cap + 1, the new one included) that stay on the left page when the
    new record goes after the first ``pos`` records."""
    n = cap + 1
    if last_is_insert_point:
        # btr_page_get_split_rec_to_right: split at the new record when at most one
        # record follows it, else keep one record after it on the left
        k = pos if cap - pos <= 1 else pos + 2
    else:
        k = n // 2
    return max(1, min(k, n - 1))


@numba.njit(cache=True)
def _split_node(M, idx, x, left, new):
    """Split the full non-leaf page ``x`` while inserting the pointer to ``new`` (already
    linked after ``left`` in the level below). Returns the new right sibling."""
    cap = ix(M, idx, I_CAPN)
    pos = 1
    c = pg(M, x, G_FCHILD)
    while c != left:
        pos += 1
        c = pg(M, c, G_NXT)
    k = split_point(pg(M, x, G_LAST) == left, pos, cap)
    n = cap + 1
    y = alloc_page(M, idx, pg(M, x, G_LEVEL), x + 1, FSP_UP)
    if y < 0:
        return -1
    c = pg(M, x, G_FCHILD)
    for _ in range(k):
        c = pg(M, c, G_NXT)
    set_pg(M, y, G_FCHILD, c)
    for _ in range(n - k):
        set_pg(M, c, G_PARENT, y)
        c = pg(M, c, G_NXT)
    set_pg(M, x, G_NREC, k)
    set_pg(M, y, G_NREC, n - k)
    if pos < k:
        set_pg(M, new, G_PARENT, x)
        set_pg(M, x, G_LAST, new)
        set_pg(M, y, G_LAST, -1)
    else:
        set_pg(M, y, G_LAST, new)
        set_pg(M, x, G_LAST, -1)
    _link_after(M, x, y)
    M[C_SPLITS] += 1
    return y


@numba.njit(cache=True)
def _parent_insert(M, idx, left, new):
    """Insert the node pointer of ``new`` (linked right after ``left``) into the parent
    of ``left``, splitting upwards as needed."""
    cap = ix(M, idx, I_CAPN)
    while True:
        x = pg(M, left, G_PARENT)
        if pg(M, x, G_NREC) < cap:
            set_pg(M, x, G_NREC, pg(M, x, G_NREC) + 1)
            set_pg(M, new, G_PARENT, x)
            set_pg(M, x, G_LAST, new)
            return True
        x = split_ready(M, idx, x, 1)
        if x < 0:
            return False
        y = _split_node(M, idx, x, left, new)
        if y < 0:
            return False
        left = x
        new = y


@numba.njit(cache=True)
def new_leaf_after(M, idx, p, q):
    _link_after(M, p, q)
    _add_leaf(M, idx, q)
    if ix(M, idx, I_RIGHT) == p:
        set_ix(M, idx, I_RIGHT, q)
    M[C_SPLITS] += 1
    return _parent_insert(M, idx, p, q)


@numba.njit(cache=True)
def chain(M, start):
    """Pages from ``start`` following FIL_PAGE_NEXT."""
    n = 0
    p = start
    while p >= 0:
        n += 1
        p = pg(M, p, G_NXT)
    out = np.empty(n, np.int32)
    p = start
    for i in range(n):
        out[i] = p
        p = pg(M, p, G_NXT)
    return out
