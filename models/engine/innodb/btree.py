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
- Leaves hold whole records of a fixed size; the record stream decides where each
  goes. Three insert patterns:
  ``runs`` - a primary key such as (user_id, object_id): each record goes right after
  the user's last record, so a leaf is a list of (user, count) runs;
  ``right`` - an ever-increasing key (AUTO_INCREMENT, a timestamp): the last leaf;
  ``random`` - uniformly random keys (a UUID, a hash): a leaf chosen in proportion to
  its records, a random position in it.
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

from .tablespace import (FSP_NO_DIR, FSP_UP, H_FAILED, H_SIZE, HEADER_SLOTS, O_PAGE,
                         PAGE_FIELDS, PAGE_SIZE, fseg_alloc_free_page, init_space,
                         space_words)

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
def _alloc(M, idx, level, hint, direction):
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
def _raise_root(M, idx, pending):
    """``btr_root_raise_and_insert``: move the root's records to a new page of the
    root's level and make the root its parent. ``pending`` counts a new child already
    linked in the level below but not yet counted in the root. Returns the new page."""
    r = ix(M, idx, I_ROOT)
    lev = pg(M, r, G_LEVEL)
    z = _alloc(M, idx, lev, 0, FSP_NO_DIR)
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
def _split_point(last_is_insert_point, pos, cap):
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
    k = _split_point(pg(M, x, G_LAST) == left, pos, cap)
    n = cap + 1
    y = _alloc(M, idx, pg(M, x, G_LEVEL), x + 1, FSP_UP)
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
        if pg(M, x, G_PARENT) < 0:
            x = _raise_root(M, idx, 1)
            if x < 0:
                return False
        y = _split_node(M, idx, x, left, new)
        if y < 0:
            return False
        left = x
        new = y


@numba.njit(cache=True)
def _new_leaf_after(M, idx, p, q):
    _link_after(M, p, q)
    _add_leaf(M, idx, q)
    if ix(M, idx, I_RIGHT) == p:
        set_ix(M, idx, I_RIGHT, q)
    M[C_SPLITS] += 1
    return _parent_insert(M, idx, p, q)


# -- leaf inserts ----------------------------------------------------------------------
@numba.njit(cache=True)
def _new_run(M, u, cnt):
    q = M[C_RUNS]
    M[C_RUNS] = q + 1
    set_rn(M, q, R_USER, u)
    set_rn(M, q, R_CNT, cnt)
    set_rn(M, q, R_NEXT, -1)
    return q


@numba.njit(cache=True)
def new_user(M, idx, u):
    """A user whose key sorts after every existing one: an empty run at the end of the
    last leaf."""
    p = ix(M, idx, I_RIGHT)
    r = _new_run(M, u, 0)
    q = pg(M, p, G_FRUN)
    if q < 0:
        set_pg(M, p, G_FRUN, r)
    else:
        while rn(M, q, R_NEXT) >= 0:
            q = rn(M, q, R_NEXT)
        set_rn(M, q, R_NEXT, r)
    set_us(M, u, U_PAGE, p)
    set_us(M, u, U_RUN, r)
    if u + 1 > M[C_USERS]:
        M[C_USERS] = u + 1


@numba.njit(cache=True)
def insert_runs(M, idx, u):
    """One record right after user ``u``'s last record."""
    p = us(M, u, U_PAGE)
    r = us(M, u, U_RUN)
    cap = ix(M, idx, I_CAPL)
    nrec = pg(M, p, G_NREC)
    if nrec < cap:
        set_pg(M, p, G_NREC, nrec + 1)
        set_rn(M, r, R_CNT, rn(M, r, R_CNT) + 1)
        set_pg(M, p, G_LAST, u)
        return True
    if pg(M, p, G_PARENT) < 0:
        p = _raise_root(M, idx, 0)
        if p < 0:
            return False
    pos = 0
    q = pg(M, p, G_FRUN)
    while q != r:
        pos += rn(M, q, R_CNT)
        q = rn(M, q, R_NEXT)
    pos += rn(M, r, R_CNT)
    k = _split_point(pg(M, p, G_LAST) == u, pos, cap)
    new_left = pos < k
    keep = k - 1 if new_left else k
    nq = _alloc(M, idx, 0, p + 1, FSP_UP)
    if nq < 0:
        return False
    # cut the run list of p after ``keep`` records
    acc = 0
    prev = -1
    q = pg(M, p, G_FRUN)
    while q >= 0 and acc + rn(M, q, R_CNT) <= keep:
        acc += rn(M, q, R_CNT)
        prev = q
        q = rn(M, q, R_NEXT)
    if q >= 0 and acc < keep:
        # the boundary falls inside run q: its left part stays, as a new run
        lp = _new_run(M, rn(M, q, R_USER), keep - acc)
        set_rn(M, q, R_CNT, rn(M, q, R_CNT) - (keep - acc))
        if prev >= 0:
            set_rn(M, prev, R_NEXT, lp)
        else:
            set_pg(M, p, G_FRUN, lp)
        prev = lp
    if prev >= 0:
        set_rn(M, prev, R_NEXT, -1)
    else:
        set_pg(M, p, G_FRUN, -1)
    set_pg(M, nq, G_FRUN, q)
    while q >= 0:
        v = rn(M, q, R_USER)
        if us(M, v, U_RUN) == q:
            set_us(M, v, U_PAGE, nq)
        q = rn(M, q, R_NEXT)
    set_pg(M, p, G_NREC, keep)
    set_pg(M, nq, G_NREC, cap - keep)
    # the new record
    if new_left:
        set_rn(M, r, R_CNT, rn(M, r, R_CNT) + 1)
        set_pg(M, p, G_NREC, keep + 1)
        set_pg(M, p, G_LAST, u)
    else:
        if us(M, u, U_PAGE) == nq:
            set_rn(M, r, R_CNT, rn(M, r, R_CNT) + 1)
        else:
            # u's run ended exactly at the split: the record starts the new page
            h = _new_run(M, u, 1)
            set_rn(M, h, R_NEXT, pg(M, nq, G_FRUN))
            set_pg(M, nq, G_FRUN, h)
            set_us(M, u, U_PAGE, nq)
            set_us(M, u, U_RUN, h)
        set_pg(M, nq, G_NREC, cap - keep + 1)
        set_pg(M, nq, G_LAST, u)
        set_pg(M, p, G_LAST, -1)
    return _new_leaf_after(M, idx, p, nq)


@numba.njit(cache=True)
def insert_right(M, idx):
    """One record with a key above all others: the last leaf, split at the new record."""
    p = ix(M, idx, I_RIGHT)
    nrec = pg(M, p, G_NREC)
    if nrec < ix(M, idx, I_CAPL):
        set_pg(M, p, G_NREC, nrec + 1)
        return True
    if pg(M, p, G_PARENT) < 0:
        p = _raise_root(M, idx, 0)
        if p < 0:
            return False
    q = _alloc(M, idx, 0, p + 1, FSP_UP)
    if q < 0:
        return False
    set_pg(M, q, G_NREC, 1)
    return _new_leaf_after(M, idx, p, q)


@numba.njit(cache=True)
def insert_random(M, idx):
    """One record with a uniformly random key: a leaf chosen in proportion to its
    records (rejection sampling), split in the middle when full."""
    cap = ix(M, idx, I_CAPL)
    nl = ix(M, idx, I_NLEAVES)
    base = M[O_LEAFLIST] + idx * M[LL_WIDTH]
    p = M[base]
    if nl > 1:
        while True:
            p = M[base + np.random.randint(nl)]
            if np.random.random() * cap < pg(M, p, G_NREC):
                break
    nrec = pg(M, p, G_NREC)
    if nrec < cap:
        set_pg(M, p, G_NREC, nrec + 1)
        return True
    if pg(M, p, G_PARENT) < 0:
        p = _raise_root(M, idx, 0)
        if p < 0:
            return False
    q = _alloc(M, idx, 0, p + 1, FSP_UP)
    if q < 0:
        return False
    n = cap + 1
    set_pg(M, p, G_NREC, n // 2)
    set_pg(M, q, G_NREC, n - n // 2)
    return _new_leaf_after(M, idx, p, q)


@numba.njit(cache=True)
def seed_build(seed):
    np.random.seed(seed)


@numba.njit(cache=True)
def insert_sessions(M, users, lens, target_pages, max_rows):
    """Insert sessions of ``lens[s]`` rows by user ``users[s]`` (a user id equal to the
    number of users seen so far is a new user) into every index, until the file
    reaches ``target_pages`` pages or ``max_rows`` rows. Returns the sessions done, or
    -1 when the state ran out of room."""
    n_idx = M[N_IDX]
    runs_mode = ix(M, 0, I_MODE) == MODE_RUNS
    for s in range(users.shape[0]):
        u = users[s]
        if runs_mode and u >= M[C_USERS]:
            new_user(M, 0, u)
        for _ in range(lens[s]):
            for idx in range(n_idx):
                m = ix(M, idx, I_MODE)
                if m == MODE_RUNS:
                    ok = insert_runs(M, idx, u)
                elif m == MODE_RIGHT:
                    ok = insert_right(M, idx)
                else:
                    ok = insert_random(M, idx)
                if not ok:
                    return -1
            M[C_ROWS] += 1
            if M[C_ROWS] >= max_rows:
                return s + 1
        if M[H_SIZE] >= target_pages:
            return s + 1
        if M[H_FAILED] != 0:
            return -1
    return users.shape[0]


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
