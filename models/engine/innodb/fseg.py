"""File segments of an InnoDB tablespace and the page allocator that decides where a
B+tree's new page lands (MySQL 5.6 ``fsp0fsp.cc``, ``fseg_*``).

- A segment (each index has a leaf and a non-leaf one) owns up to 32 fragment pages
  (``FSEG_FRAG_LIMIT``) and then whole extents on its ``FREE`` / ``NOT_FULL`` /
  ``FULL`` lists. ``fseg_alloc_free_page_low`` chooses the page for a hint (the split
  page + 1 for a B-tree split going up) in this order: (1) the hinted page if its
  extent is the segment's and the page is free; (2) the hinted extent if it is free
  and the segment is nearly full (less than 1/``FSEG_FILLFACTOR`` of its reserved
  pages free); (3) with a direction and a nearly full segment, a new extent (the
  segment's free list, else the space's) at its low end (up) or high end (down);
  (4) a free page of the hinted extent if the segment owns it (first free at or after
  the hint, wrapping); (5) any free page of the segment (first ``NOT_FULL`` extent,
  else first ``FREE`` one); (6) a fragment page while the segment uses fewer than 32;
  (7) a new extent's first page. ``fseg_fill_free_list`` pre-assigns up to four
  following free extents to a segment of 40+ extents.

The functions work on the tablespace state array of ``tablespace`` (per-segment
records: fragment pages in use, ``FSEG_NOT_FULL_N_USED``; three extent lists per
segment) and are compiled with numba.

Deliberately not modelled: freeing pages and segments, the inode page's capacity
(segments are numbered, not stored in inode pages), the fragment page array's slot
positions (only their count matters for the choices above).
"""
from __future__ import annotations

import numba

from .tablespace import (EXTENT_PAGES, FSEG_FILLFACTOR, FSEG_FRAG_LIMIT, FSEG_FREE_LIST_LIMIT,
                         FSEG_FREE_LIST_MAX_LEN, FSP_DOWN, FSP_NO_DIR, H_FAILED, H_FREE_LIMIT,
                         H_SIZE, L_SEG_FREE, L_SEG_FULL, L_SEG_NOT_FULL, LS_FIRST, LS_LEN,
                         O_SEG, OWNER_FREE, SEG_FIELDS, SG_NF_USED, SG_NFRAG, X_NUSED, X_SEG,
                         X_STATE, XDES_FREE, XDES_FSEG, flst_add_last, flst_remove,
                         fsp_alloc_free_extent, fsp_alloc_free_page, fsp_fill_free_list,
                         fsp_reserve_free_extents, lst, owner, seg_list, set_owner, set_xd,
                         xd, xdes_find_free)


@numba.njit(cache=True)
def fseg_n_reserved(M, seg):
    """(reserved, used) pages of a segment (``fseg_n_reserved_pages_low``)."""
    og = M[O_SEG] + seg * SEG_FIELDS
    nfrag = M[og + SG_NFRAG]
    n_ext = (lst(M, seg_list(seg, L_SEG_FREE), LS_LEN)
             + lst(M, seg_list(seg, L_SEG_NOT_FULL), LS_LEN)
             + lst(M, seg_list(seg, L_SEG_FULL), LS_LEN))
    reserved = nfrag + EXTENT_PAGES * n_ext
    used = M[og + SG_NF_USED] + EXTENT_PAGES * lst(M, seg_list(seg, L_SEG_FULL), LS_LEN) + nfrag
    return reserved, used


@numba.njit(cache=True)
def fseg_fill_free_list(M, seg, hint):
    """Pre-assign up to four free extents from ``hint`` on to a segment of 40+
    extents whose free list is empty."""
    reserved, used = fseg_n_reserved(M, seg)
    if reserved < FSEG_FREE_LIST_LIMIT * EXTENT_PAGES:
        return
    if lst(M, seg_list(seg, L_SEG_FREE), LS_LEN) > 0:
        return
    for _ in range(FSEG_FREE_LIST_MAX_LEN):
        e = hint // EXTENT_PAGES
        if hint >= M[H_FREE_LIMIT] or xd(M, e, X_STATE) != XDES_FREE:
            return
        flst_remove(M, e)
        set_xd(M, e, X_STATE, XDES_FSEG)
        set_xd(M, e, X_SEG, seg)
        flst_add_last(M, seg_list(seg, L_SEG_FREE), e)
        hint += EXTENT_PAGES


@numba.njit(cache=True)
def fseg_alloc_free_extent(M, seg):
    """An extent for the segment: its free list's first, else one from the space."""
    li = seg_list(seg, L_SEG_FREE)
    if lst(M, li, LS_LEN) > 0:
        return lst(M, li, LS_FIRST)
    e = fsp_alloc_free_extent(M, 0)
    if e < 0:
        return -1
    set_xd(M, e, X_STATE, XDES_FSEG)
    set_xd(M, e, X_SEG, seg)
    flst_add_last(M, li, e)
    fseg_fill_free_list(M, seg, (e + 1) * EXTENT_PAGES)
    return e


@numba.njit(cache=True)
def fseg_mark_page_used(M, seg, e, page):
    og = M[O_SEG] + seg * SEG_FIELDS
    if xd(M, e, X_NUSED) == 0:
        flst_remove(M, e)
        flst_add_last(M, seg_list(seg, L_SEG_NOT_FULL), e)
    set_owner(M, page, seg)
    n = xd(M, e, X_NUSED) + 1
    set_xd(M, e, X_NUSED, n)
    M[og + SG_NF_USED] += 1
    if n == EXTENT_PAGES:
        flst_remove(M, e)
        flst_add_last(M, seg_list(seg, L_SEG_FULL), e)
        M[og + SG_NF_USED] -= EXTENT_PAGES


@numba.njit(cache=True)
def fseg_alloc_free_page(M, seg, hint, direction):
    """The page a segment hands out for ``hint`` (``fseg_alloc_free_page_general``);
    -1 if the state array is out of room."""
    if not fsp_reserve_free_extents(M, 2):
        M[H_FAILED] = 1
        return -1
    reserved, used = fseg_n_reserved(M, seg)
    if hint < 0 or hint >= M[H_SIZE]:
        hint = 0
    if hint >= M[H_FREE_LIMIT]:
        # the descriptor above the free limit is not initialised yet
        fsp_fill_free_list(M)
    e = hint // EXTENT_PAGES
    state = xd(M, e, X_STATE) if hint < M[H_FREE_LIMIT] else -1
    mine = state == XDES_FSEG and xd(M, e, X_SEG) == seg
    nearly_full = (reserved - used < reserved // FSEG_FILLFACTOR) and used >= FSEG_FRAG_LIMIT
    if mine and owner(M, hint) == OWNER_FREE:
        # 1. the hinted page
        ret_e = e
        ret_page = hint
    elif state == XDES_FREE and nearly_full:
        # 2. the hinted extent is free: take it and the hinted page
        flst_remove(M, e)
        set_xd(M, e, X_STATE, XDES_FSEG)
        set_xd(M, e, X_SEG, seg)
        flst_add_last(M, seg_list(seg, L_SEG_FREE), e)
        fseg_fill_free_list(M, seg, hint + EXTENT_PAGES)
        ret_e = e
        ret_page = hint
    elif direction != FSP_NO_DIR and nearly_full:
        # 3. a new extent, its low (up) or high (down) end
        ret_e = fseg_alloc_free_extent(M, seg)
        if ret_e < 0:
            return -1
        ret_page = ret_e * EXTENT_PAGES
        if direction == FSP_DOWN:
            ret_page += EXTENT_PAGES - 1
    elif mine and xd(M, e, X_NUSED) < EXTENT_PAGES:
        # 4. a free page of the hinted extent, first at or after the hint
        ret_e = e
        ret_page = xdes_find_free(M, e, hint % EXTENT_PAGES)
    elif reserved - used > 0:
        # 5. any free page of the segment
        li = seg_list(seg, L_SEG_NOT_FULL)
        if lst(M, li, LS_LEN) == 0:
            li = seg_list(seg, L_SEG_FREE)
        ret_e = lst(M, li, LS_FIRST)
        ret_page = xdes_find_free(M, ret_e, 0)
    elif used < FSEG_FRAG_LIMIT:
        # 6. a fragment page from the space
        page = fsp_alloc_free_page(M, hint)
        if page < 0:
            return -1
        set_owner(M, page, seg)
        M[M[O_SEG] + seg * SEG_FIELDS + SG_NFRAG] += 1
        return page
    else:
        # 7. a new extent, its first page
        ret_e = fseg_alloc_free_extent(M, seg)
        if ret_e < 0:
            return -1
        ret_page = ret_e * EXTENT_PAGES
    if owner(M, ret_page) != OWNER_FREE:
        # the low/high end of a pre-assigned extent may be taken: first free page
        ret_page = xdes_find_free(M, ret_e, ret_page % EXTENT_PAGES)
    fseg_mark_page_used(M, seg, ret_e, ret_page)
    return ret_page
