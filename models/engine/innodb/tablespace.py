"""An InnoDB file-per-table tablespace (.ibd): 16 KB pages, 64-page extents, the
space's free lists and the file's growth.

Modelled after MySQL 5.6 ``fsp0fsp.cc`` (names kept so the code can be read side by
side with it):

- Pages 0, 1, 2 are the FSP header / extent descriptor page, the insert-buffer bitmap
  and the segment inode page; every ``XDES_PAGES`` (16,384) pages another descriptor
  and bitmap page pair starts an extent, which is put on ``FSP_FREE_FRAG``.
- Extent states ``FREE``, ``FREE_FRAG`` / ``FULL_FRAG`` (single pages handed out to
  segments one by one) and ``FSEG`` (owned whole by one segment), on the space's
  ``FSP_FREE`` / ``FSP_FREE_FRAG`` / ``FSP_FULL_FRAG`` lists; ``FSP_FREE_LIMIT`` marks
  how far extents have been initialised (``fsp_fill_free_list`` adds four at a time).
- File growth (``fsp_try_extend_data_file``): one extent at a time below 32 extents,
  then four (``FSP_FREE_ADD``); ``fsp_reserve_free_extents`` keeps
  ``2 + size_in_extents / 100`` extents in reserve before every page allocation, so
  the end of the file always holds free extents.
- File segments and where a new page lands: ``fseg`` (each index has a leaf and a
  non-leaf segment).

The state is one flat int32 array (``M``: a header of scalars and offsets, then
per-page, per-extent, per-list and per-segment records; the B-tree of ``btree`` adds
its records to the same array) and the functions are compiled with numba, because a
10 GB table is 655,360 pages and the build places every one.

Deliberately not modelled: page freeing (no deletes or merges: the table grew by
inserts only), compressed pages, the system tablespace and undo segments, the
insert-buffer bitmap contents, ``innodb_autoextend_increment`` (it applies to the
system tablespace only).
"""
from __future__ import annotations

import numba
import numpy as np

PAGE_SIZE = 16384
EXTENT_PAGES = 64                # FSP_EXTENT_SIZE for 16 KB pages
XDES_PAGES = PAGE_SIZE           # pages described by one extent descriptor page
FSEG_FRAG_LIMIT = 32             # FSEG_FRAG_ARR_N_SLOTS
FSEG_FILLFACTOR = 8
FSEG_FREE_LIST_LIMIT = 40        # extents; smaller segments get no pre-assigned extents
FSEG_FREE_LIST_MAX_LEN = 4
FSP_FREE_ADD = 4
EXTEND_THRESHOLD_PAGES = 32 * EXTENT_PAGES

# directions of fseg_alloc_free_page
FSP_NO_DIR = 0
FSP_UP = 1
FSP_DOWN = 2

# extent states; -1 = above FSP_FREE_LIMIT, not initialised
XDES_FREE = 1
XDES_FREE_FRAG = 2
XDES_FULL_FRAG = 3
XDES_FSEG = 4

# lists: 0..2 the space's, then three per segment
L_FSP_FREE = 0
L_FSP_FREE_FRAG = 1
L_FSP_FULL_FRAG = 2
L_SEG_FREE = 0
L_SEG_NOT_FULL = 1
L_SEG_FULL = 2

# page owners besides segment ids
OWNER_FREE = -1
OWNER_SYSTEM = -2

# -- the state array M -----------------------------------------------------------------
# header slots
H_SIZE = 0          # FSP_SIZE, pages in the file
H_FREE_LIMIT = 1    # FSP_FREE_LIMIT
H_MAX_PAGES = 2     # room in the page records
H_FAILED = 3        # 1 if something ran out of room
O_PAGE = 4          # offset of the page records
O_XDES = 5          # extent records
O_LIST = 6          # list records
O_SEG = 7           # segment records
HEADER_SLOTS = 32   # slots 8.. belong to users of the array (btree)
# page record: field 0 is the owning segment; btree uses the rest
PAGE_FIELDS = 12
G_SEG = 0
# extent record
X_STATE = 0
X_SEG = 1
X_NUSED = 2
X_LIST = 3
X_NEXT = 4
X_PREV = 5
XDES_FIELDS = 6
# list record
LS_FIRST = 0
LS_LAST = 1
LS_LEN = 2
LIST_FIELDS = 3
# segment record
SG_NFRAG = 0
SG_NF_USED = 1      # FSEG_NOT_FULL_N_USED
SEG_FIELDS = 2


def space_words(max_pages: int, n_segments: int) -> int:
    """int32 words the tablespace part of the state needs."""
    n_ext = max_pages // EXTENT_PAGES
    return (max_pages * PAGE_FIELDS + n_ext * XDES_FIELDS
            + (3 + 3 * n_segments) * LIST_FIELDS + n_segments * SEG_FIELDS)


def init_space(M: np.ndarray, base: int, max_pages: int, n_segments: int) -> int:
    """Lay the tablespace records out in ``M`` from ``base``; returns the end offset.
    The file starts as one extent with pages 0-2 (FSP header, insert-buffer bitmap,
    inode page) in use."""
    assert max_pages % EXTENT_PAGES == 0
    n_ext = max_pages // EXTENT_PAGES
    n_lists = 3 + 3 * n_segments
    M[O_PAGE] = base
    M[O_XDES] = M[O_PAGE] + max_pages * PAGE_FIELDS
    M[O_LIST] = M[O_XDES] + n_ext * XDES_FIELDS
    M[O_SEG] = M[O_LIST] + n_lists * LIST_FIELDS
    end = M[O_SEG] + n_segments * SEG_FIELDS
    M[base:end] = 0
    M[M[O_PAGE] + G_SEG:M[O_XDES]:PAGE_FIELDS] = OWNER_FREE
    xrec = M[M[O_XDES]:M[O_LIST]].reshape(n_ext, XDES_FIELDS)
    xrec[:, X_STATE] = -1
    xrec[:, X_SEG] = -1
    xrec[:, X_LIST:] = -1
    ls = M[M[O_LIST]:M[O_SEG]].reshape(n_lists, LIST_FIELDS)
    ls[:, LS_FIRST:LS_LAST + 1] = -1
    M[H_MAX_PAGES] = max_pages
    M[H_SIZE] = EXTENT_PAGES
    # fsp_header_init -> fsp_fill_free_list(init_space=TRUE): only extent 0, which
    # holds the descriptor and bitmap pages, goes on FSP_FREE_FRAG
    M[H_FREE_LIMIT] = EXTENT_PAGES
    set_owner(M, 0, OWNER_SYSTEM)
    set_owner(M, 1, OWNER_SYSTEM)
    set_xd(M, 0, X_STATE, XDES_FREE_FRAG)
    set_xd(M, 0, X_NUSED, 2)
    flst_add_last(M, L_FSP_FREE_FRAG, 0)
    fsp_alloc_free_page(M, 2)
    return end


def page_owners(M: np.ndarray) -> np.ndarray:
    """The owning segment (or OWNER_*) of every page of the file."""
    return M[M[O_PAGE] + G_SEG:M[O_XDES]:PAGE_FIELDS][:M[H_SIZE]]


# -- small accessors -------------------------------------------------------------------
@numba.njit(cache=True)
def owner(M, page):
    return M[M[O_PAGE] + page * PAGE_FIELDS + G_SEG]


@numba.njit(cache=True)
def set_owner(M, page, seg):
    M[M[O_PAGE] + page * PAGE_FIELDS + G_SEG] = seg


@numba.njit(cache=True)
def xd(M, e, f):
    return M[M[O_XDES] + e * XDES_FIELDS + f]


@numba.njit(cache=True)
def set_xd(M, e, f, v):
    M[M[O_XDES] + e * XDES_FIELDS + f] = v


@numba.njit(cache=True)
def lst(M, li, f):
    return M[M[O_LIST] + li * LIST_FIELDS + f]


@numba.njit(cache=True)
def seg_list(seg, which):
    return 3 + 3 * seg + which


# -- lists (flst_*) --------------------------------------------------------------------
@numba.njit(cache=True)
def flst_add_last(M, li, e):
    ol = M[O_LIST] + li * LIST_FIELDS
    last = M[ol + LS_LAST]
    set_xd(M, e, X_PREV, last)
    set_xd(M, e, X_NEXT, -1)
    if last >= 0:
        set_xd(M, last, X_NEXT, e)
    else:
        M[ol + LS_FIRST] = e
    M[ol + LS_LAST] = e
    M[ol + LS_LEN] += 1
    set_xd(M, e, X_LIST, li)


@numba.njit(cache=True)
def flst_remove(M, e):
    li = xd(M, e, X_LIST)
    ol = M[O_LIST] + li * LIST_FIELDS
    p = xd(M, e, X_PREV)
    n = xd(M, e, X_NEXT)
    if p >= 0:
        set_xd(M, p, X_NEXT, n)
    else:
        M[ol + LS_FIRST] = n
    if n >= 0:
        set_xd(M, n, X_PREV, p)
    else:
        M[ol + LS_LAST] = p
    M[ol + LS_LEN] -= 1
    set_xd(M, e, X_LIST, -1)
    set_xd(M, e, X_NEXT, -1)
    set_xd(M, e, X_PREV, -1)


# -- extents and file growth -----------------------------------------------------------
@numba.njit(cache=True)
def xdes_find_free(M, e, hint_off):
    """First free page of extent ``e`` at or after offset ``hint_off``, wrapping
    around (``xdes_find_bit``); -1 if the extent is full."""
    base = e * EXTENT_PAGES
    for k in range(EXTENT_PAGES):
        page = base + (hint_off + k) % EXTENT_PAGES
        if owner(M, page) == OWNER_FREE:
            return page
    return -1


@numba.njit(cache=True)
def fsp_try_extend_data_file(M):
    """Grow the file: one extent at a time below 32 extents, then FSP_FREE_ADD."""
    size = M[H_SIZE]
    inc = EXTENT_PAGES if size < EXTEND_THRESHOLD_PAGES else FSP_FREE_ADD * EXTENT_PAGES
    if size + inc > M[H_MAX_PAGES]:
        M[H_FAILED] = 1
        return 0
    M[H_SIZE] = size + inc
    return inc


@numba.njit(cache=True)
def fsp_fill_free_list(M):
    """Initialise up to FSP_FREE_ADD extents above FSP_FREE_LIMIT (extending the file
    if needed); an extent holding a descriptor page goes on FSP_FREE_FRAG."""
    if M[H_SIZE] < M[H_FREE_LIMIT] + EXTENT_PAGES * FSP_FREE_ADD:
        fsp_try_extend_data_file(M)
    size = M[H_SIZE]
    count = 0
    i = M[H_FREE_LIMIT]
    while i + EXTENT_PAGES <= size and count < FSP_FREE_ADD:
        e = i // EXTENT_PAGES
        M[H_FREE_LIMIT] = i + EXTENT_PAGES
        set_xd(M, e, X_STATE, XDES_FREE)
        set_xd(M, e, X_NUSED, 0)
        if i % XDES_PAGES == 0:
            # descriptor page and insert-buffer bitmap page
            set_owner(M, i, OWNER_SYSTEM)
            set_owner(M, i + 1, OWNER_SYSTEM)
            set_xd(M, e, X_NUSED, 2)
            set_xd(M, e, X_STATE, XDES_FREE_FRAG)
            flst_add_last(M, L_FSP_FREE_FRAG, e)
        else:
            flst_add_last(M, L_FSP_FREE, e)
            count += 1
        i += EXTENT_PAGES


@numba.njit(cache=True)
def fsp_reserve_free_extents(M, n_ext):
    """Keep ``2 + size/100`` extents (plus ``n_ext``) free, extending the file."""
    for _ in range(64):
        size = M[H_SIZE]
        n_free_up = (size - M[H_FREE_LIMIT]) // EXTENT_PAGES
        if n_free_up > 0:
            n_free_up -= 1
            n_free_up -= n_free_up // (PAGE_SIZE // EXTENT_PAGES)
        n_free = lst(M, L_FSP_FREE, LS_LEN) + n_free_up
        reserve = 2 + ((size // EXTENT_PAGES) * 2) // 200
        if n_free > reserve + n_ext:
            return True
        if fsp_try_extend_data_file(M) == 0:
            return False
    return False


@numba.njit(cache=True)
def fsp_alloc_free_extent(M, hint):
    """A free extent: the hinted one if free, else the first of FSP_FREE."""
    e = hint // EXTENT_PAGES
    if hint < M[H_FREE_LIMIT] and xd(M, e, X_STATE) == XDES_FREE:
        flst_remove(M, e)
        return e
    if lst(M, L_FSP_FREE, LS_LEN) == 0:
        fsp_fill_free_list(M)
        if lst(M, L_FSP_FREE, LS_LEN) == 0:
            M[H_FAILED] = 1
            return -1
    e = lst(M, L_FSP_FREE, LS_FIRST)
    flst_remove(M, e)
    return e


@numba.njit(cache=True)
def fsp_alloc_free_page(M, hint):
    """A single (fragment) page: from the hinted extent if it is FREE_FRAG, else the
    first FREE_FRAG extent, else a new extent put on FREE_FRAG. The page is marked
    OWNER_SYSTEM; the caller sets the owner."""
    e = hint // EXTENT_PAGES
    if not (hint < M[H_FREE_LIMIT] and xd(M, e, X_STATE) == XDES_FREE_FRAG):
        if lst(M, L_FSP_FREE_FRAG, LS_LEN) == 0:
            e = fsp_alloc_free_extent(M, hint)
            if e < 0:
                return -1
            set_xd(M, e, X_STATE, XDES_FREE_FRAG)
            flst_add_last(M, L_FSP_FREE_FRAG, e)
        else:
            e = lst(M, L_FSP_FREE_FRAG, LS_FIRST)
        hint = 0
    page = xdes_find_free(M, e, hint % EXTENT_PAGES)
    set_owner(M, page, OWNER_SYSTEM)
    set_xd(M, e, X_NUSED, xd(M, e, X_NUSED) + 1)
    if xd(M, e, X_NUSED) == EXTENT_PAGES:
        flst_remove(M, e)
        set_xd(M, e, X_STATE, XDES_FULL_FRAG)
        flst_add_last(M, L_FSP_FULL_FRAG, e)
    return page


def check_space(M: np.ndarray, n_segments: int) -> None:
    """Consistency of the lists and counters (used by tests)."""
    size = int(M[H_SIZE])
    limit = int(M[H_FREE_LIMIT])
    assert limit <= size <= M[H_MAX_PAGES]
    n_ext = int(M[H_MAX_PAGES]) // EXTENT_PAGES
    X = M[M[O_XDES]:M[O_LIST]].reshape(n_ext, XDES_FIELDS)
    n_lists = 3 + 3 * n_segments
    L = M[M[O_LIST]:M[O_LIST] + n_lists * LIST_FIELDS].reshape(n_lists, LIST_FIELDS)
    for li in range(n_lists):
        n, e, prev = 0, int(L[li, LS_FIRST]), -1
        while e >= 0:
            assert X[e, X_LIST] == li and X[e, X_PREV] == prev
            prev, e, n = e, int(X[e, X_NEXT]), n + 1
        assert n == L[li, LS_LEN] and prev == L[li, LS_LAST]
    owners = M[M[O_PAGE] + G_SEG:M[O_XDES]:PAGE_FIELDS]
    used = (owners[:limit] != OWNER_FREE).reshape(-1, EXTENT_PAGES).sum(axis=1)
    assert np.array_equal(used, X[:limit // EXTENT_PAGES, X_NUSED])
    assert (owners[limit:] == OWNER_FREE).all()
    for seg in range(n_segments):
        for which in (L_SEG_FREE, L_SEG_NOT_FULL, L_SEG_FULL):
            e = int(L[3 + 3 * seg + which, LS_FIRST])
            while e >= 0:
                assert X[e, X_STATE] == XDES_FSEG and X[e, X_SEG] == seg
                n_used = X[e, X_NUSED]
                assert (which == L_SEG_FREE) == (n_used == 0)
                assert (which == L_SEG_FULL) == (n_used == EXTENT_PAGES)
                e = int(X[e, X_NEXT])
