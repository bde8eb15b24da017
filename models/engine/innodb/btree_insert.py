"""Leaf inserts of the B+trees in ``btree``: where each record of an insert stream goes
and how a full leaf splits (``btr_page_split_and_insert`` at the leaf level).

Three insert patterns:

- ``runs`` (MODE_RUNS): a primary key such as (user_id, object_id). Each record goes
  right after its user's last record, so a leaf is a list of (user, count) runs; a
  user whose id is above all others starts an empty run at the end of the last leaf.
  A full leaf splits at InnoDB's split point (``btree.split_point``): the runs are cut
  there, the users whose last record moved follow it to the new page.
- ``right`` (MODE_RIGHT): an ever-increasing key (AUTO_INCREMENT, a timestamp): the
  last leaf; a full one splits at the new record (the new page holds only it).
- ``random`` (MODE_RANDOM): uniformly random keys (a UUID, a hash): a leaf chosen in
  proportion to its records (rejection sampling over the index's leaf list), split in
  the middle when full.

``insert_sessions`` drives a stream of sessions (a user and a row count) into every
index of the table: one row = one record per index. Random draws come from numba's
generator, seeded once per build from the run's stream (``seed_build``).
"""
from __future__ import annotations

import numba
import numpy as np

from .btree import (C_ROWS, C_RUNS, C_USERS, G_FRUN, G_LAST, G_NREC, I_CAPL,
                    I_MODE, I_NLEAVES, I_RIGHT, LL_WIDTH, MODE_RIGHT, MODE_RUNS,
                    N_IDX, O_LEAFLIST, R_CNT, R_NEXT, R_USER, U_PAGE, U_RUN, alloc_page, ix,
                    new_leaf_after, pg, rn, set_pg, set_rn, set_us, split_point, split_ready,
                    us)
from .tablespace import FSP_UP, H_FAILED, H_SIZE


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
    p = split_ready(M, idx, p, 0)
    if p < 0:
        return False
    pos = 0
    q = pg(M, p, G_FRUN)
    while q != r:
        pos += rn(M, q, R_CNT)
        q = rn(M, q, R_NEXT)
    pos += rn(M, r, R_CNT)
    k = split_point(pg(M, p, G_LAST) == u, pos, cap)
    new_left = pos < k
    keep = k - 1 if new_left else k
    nq = alloc_page(M, idx, 0, p + 1, FSP_UP)
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
    return new_leaf_after(M, idx, p, nq)


@numba.njit(cache=True)
def insert_right(M, idx):
    """One record with a key above all others: the last leaf, split at the new record."""
    p = ix(M, idx, I_RIGHT)
    nrec = pg(M, p, G_NREC)
    if nrec < ix(M, idx, I_CAPL):
        set_pg(M, p, G_NREC, nrec + 1)
        return True
    p = split_ready(M, idx, p, 0)
    if p < 0:
        return False
    q = alloc_page(M, idx, 0, p + 1, FSP_UP)
    if q < 0:
        return False
    set_pg(M, q, G_NREC, 1)
    return new_leaf_after(M, idx, p, q)


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
    p = split_ready(M, idx, p, 0)
    if p < 0:
        return False
    q = alloc_page(M, idx, 0, p + 1, FSP_UP)
    if q < 0:
        return False
    n = cap + 1
    set_pg(M, p, G_NREC, n // 2)
    set_pg(M, q, G_NREC, n - n // 2)
    return new_leaf_after(M, idx, p, q)


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
