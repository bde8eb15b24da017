"""One InnoDB table grown by an insert stream: its configuration, the stream, and the
resulting layout with its fragmentation figures.

The table is built by simulating its history (``btree`` on ``tablespace``) until the
.ibd file reaches ``table_size``; nothing about where pages end up is drawn at random
directly - the insert order decides which pages split, and InnoDB's allocator decides
where each new page lands.

Insert patterns (``insert_pattern``):

- ``sequential``: an AUTO_INCREMENT primary key; every row goes to the last leaf.
- ``random``: uniformly random primary keys (UUID-like).
- ``user_object``: a primary key (user_id, object_id). The first
  ``loaded_share`` of the file is a load in key order (a restore from a logical
  backup, a shard copy): users one after another, each with a geometric number of
  rows of mean ``rows_per_user`` - compact, leaves in file order. Then rows arrive in
  time order. Users appear over time with increasing ids (one new user per
  ``rows_per_user`` rows on average) and write in sessions of ``session_rows`` rows
  (geometric). A session belongs to a new user, to one of the recently joined users
  (age in users exponential with mean ``hot_users``), or - with probability
  ``old_user_share`` - to any existing user, uniformly: the old users whose rows sit
  deep in the key space are what splits old leaves and sends their new halves to
  wherever the allocator is working now.

Secondary indexes (``secondary_indexes`` of ``secondary_key_bytes`` keys plus the
primary key) get one entry per row, ``random`` or ``sequential`` keys.

Fragmentation figures (``fragmentation``): over consecutive leaves in key order, the
share whose physical page numbers are adjacent (``next = this + 1``), forward within
an extent's distance (1..63 pages), backward, and the mean and median absolute jump
in pages; also leaf fill and how the file's pages divide between clustered leaves,
clustered non-leaf pages, secondary-index pages, system pages and free pages.

Deliberately not modelled: deletes and updates (no free space inside pages but the
split remainders), BLOBs, a table rebuilt by ``OPTIMIZE TABLE``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...checks import above, at_least
from ...units import parse_size
from .btree import (C_ROWS, C_SPLITS, C_USERS, G_FCHILD, G_INDEX, G_LEVEL, G_NREC, I_ROOT,
                    MODE_RANDOM, MODE_RIGHT, MODE_RUNS, NODE_PTR_EXTRA_BYTES, chain, ix,
                    new_state, page_field, pg, records_per_page)
from .btree_insert import insert_sessions, seed_build
from .tablespace import EXTENT_PAGES, H_FAILED, H_SIZE, OWNER_SYSTEM, PAGE_SIZE, page_owners

INSERT_PATTERNS = ("user_object", "sequential", "random")
SECONDARY_PATTERNS = ("random", "sequential")

# page kinds (TableLayout.page_kind)
K_FREE = 0
K_SYSTEM = 1
K_LEAF = 2          # clustered-index leaf
K_NODE = 3          # clustered-index non-leaf
K_SEC_LEAF = 4
K_SEC_NODE = 5
KIND_NAMES = ("free", "system", "clustered_leaf", "clustered_nonleaf", "secondary_leaf",
              "secondary_nonleaf")

_CHUNK_SESSIONS = 65536


@dataclass(frozen=True)
class TableConfig:
    """The table and its insert history.

    - ``table_size``: .ibd file size at which the history stops (``10g``); scaled by
      ``run.scale``.
    - ``row_bytes``: clustered-index record size on the page, record header and
      transaction id / roll pointer included.
    - ``pk_bytes``: primary key size (node pointers and secondary entries carry it).
    - ``insert_pattern``: user_object | sequential | random.
    - ``loaded_share``, ``rows_per_user``, ``session_rows``, ``hot_users``,
      ``old_user_share``: the user_object history (module docstring).
    - ``secondary_indexes``, ``secondary_key_bytes``, ``secondary_pattern``.
    """

    table_size: str = "10g"
    row_bytes: int = 200
    pk_bytes: int = 16
    insert_pattern: str = "user_object"
    loaded_share: float = 0.0
    rows_per_user: float = 400.0
    session_rows: float = 8.0
    hot_users: float = 64.0
    old_user_share: float = 0.5
    secondary_indexes: int = 1
    secondary_key_bytes: int = 8
    secondary_pattern: str = "random"

    def __post_init__(self) -> None:
        size = parse_size(self.table_size, "table_size")
        if size < 64 * EXTENT_PAGES * PAGE_SIZE // 16:
            raise ValueError(f"table_size: must be at least 4m, got {self.table_size!r}")
        if not 20 <= self.row_bytes <= PAGE_SIZE // 2 - 200:
            raise ValueError(f"row_bytes: must be in 20..{PAGE_SIZE // 2 - 200}, got {self.row_bytes}")
        if not 4 <= self.pk_bytes <= 768:
            raise ValueError(f"pk_bytes: must be in 4..768, got {self.pk_bytes}")
        if self.insert_pattern not in INSERT_PATTERNS:
            raise ValueError(f"insert_pattern: must be one of {', '.join(INSERT_PATTERNS)}, "
                             f"got {self.insert_pattern!r}")
        if self.secondary_pattern not in SECONDARY_PATTERNS:
            raise ValueError(f"secondary_pattern: must be one of {', '.join(SECONDARY_PATTERNS)}, "
                             f"got {self.secondary_pattern!r}")
        at_least(self, 1, "session_rows")
        if self.rows_per_user < self.session_rows:
            raise ValueError(f"rows_per_user: must be >= session_rows ({self.session_rows}), "
                             f"got {self.rows_per_user}")
        above(self, 0, "hot_users")
        if not 0 <= self.loaded_share < 1:
            raise ValueError(f"loaded_share: must be in [0, 1), got {self.loaded_share}")
        if not 0 <= self.old_user_share <= 1:
            raise ValueError(f"old_user_share: must be in [0, 1], got {self.old_user_share}")
        if not 0 <= self.secondary_indexes <= 16:
            raise ValueError(f"secondary_indexes: must be in 0..16, got {self.secondary_indexes}")
        if not 1 <= self.secondary_key_bytes <= 768:
            raise ValueError(f"secondary_key_bytes: must be in 1..768, got {self.secondary_key_bytes}")

    @property
    def table_bytes(self) -> int:
        return parse_size(self.table_size, "table_size")


class TableLayout:
    """The built table: which page is what, the clustered index's leaves in key order
    and its level-1 pages (the node pointers logical read-ahead walks)."""

    def __init__(self, cfg: TableConfig, n_pages: int, page_kind: np.ndarray,
                 leaves: np.ndarray, leaf_rows: np.ndarray, level1: np.ndarray,
                 level1_first: np.ndarray, level1_count: np.ndarray, upper_path: list[int],
                 rows: int, users: int, splits: int, cap_leaf: int) -> None:
        self.cfg = cfg
        self.n_pages = n_pages
        self.page_kind = page_kind
        self.leaves = leaves
        self.leaf_rows = leaf_rows
        self.level1 = level1
        self.level1_first = level1_first
        self.level1_count = level1_count
        self.upper_path = upper_path      # root .. the leftmost level-1 page
        self.rows = rows
        self.users = users
        self.splits = splits
        self.cap_leaf = cap_leaf

    @property
    def file_bytes(self) -> int:
        return self.n_pages * PAGE_SIZE

    def fragmentation(self) -> dict:
        """Figures of physical locality of the key-order leaf chain."""
        d = np.diff(self.leaves.astype(np.int64))
        kinds = np.bincount(self.page_kind, minlength=len(KIND_NAMES))
        out = {
            "file_pages": int(self.n_pages),
            "rows": int(self.rows),
            "users": int(self.users),
            "page_splits": int(self.splits),
            "leaf_fill": float(self.leaf_rows.sum() / (len(self.leaves) * self.cap_leaf)),
        }
        for k, name in enumerate(KIND_NAMES):
            out[f"{name}_pages"] = int(kinds[k])
        if d.size:
            a = np.abs(d)
            out.update(
                leaf_adjacent_share=float((d == 1).mean()),
                leaf_forward_extent_share=float(((d >= 1) & (d < EXTENT_PAGES)).mean()),
                leaf_backward_share=float((d < 0).mean()),
                leaf_mean_jump_pages=float(a.mean()),
                leaf_median_jump_pages=float(np.median(a)),
            )
        else:
            out.update(leaf_adjacent_share=0.0, leaf_forward_extent_share=0.0,
                       leaf_backward_share=0.0, leaf_mean_jump_pages=0.0,
                       leaf_median_jump_pages=0.0)
        return out


# -- the insert stream -----------------------------------------------------------------
def _user_sessions(cfg: TableConfig, rng: np.random.Generator, m: int, n_users: int):
    """``m`` sessions of the user_object history given ``n_users`` users so far."""
    new = rng.random(m) < min(1.0, cfg.session_rows / cfg.rows_per_user)
    if n_users == 0:
        new[0] = True
    cum = np.cumsum(new)
    before = n_users + cum - new              # users existing before each session
    old = rng.random(m) < cfg.old_user_share
    uniform = (rng.random(m) * before).astype(np.int64)
    age = np.floor(rng.exponential(cfg.hot_users, m)).astype(np.int64)
    recent = np.maximum(before - 1 - age, 0)
    users = np.where(new, before, np.where(old, uniform, recent)).astype(np.int32)
    lens = rng.geometric(1.0 / cfg.session_rows, m).astype(np.int32)
    return users, lens, int(n_users + cum[-1])


def build_table(cfg: TableConfig, rng: np.random.Generator, scale: float = 1.0) -> TableLayout:
    """Grow the table until its file reaches ``table_size * scale``."""
    target = max(4 * EXTENT_PAGES, int(cfg.table_bytes * scale) // PAGE_SIZE)
    max_pages = target + 8 * EXTENT_PAGES + (target // 8192 + 8) * EXTENT_PAGES
    cap_leaf = records_per_page(cfg.row_bytes)
    sec_bytes = cfg.secondary_key_bytes + cfg.pk_bytes + 5
    caps_leaf = [cap_leaf] + [records_per_page(sec_bytes)] * cfg.secondary_indexes
    caps_node = [records_per_page(cfg.pk_bytes + NODE_PTR_EXTRA_BYTES)] + \
        [records_per_page(sec_bytes + 4)] * cfg.secondary_indexes
    pk_mode = {"user_object": MODE_RUNS, "sequential": MODE_RIGHT, "random": MODE_RANDOM}
    sec_mode = {"random": MODE_RANDOM, "sequential": MODE_RIGHT}[cfg.secondary_pattern]
    modes = [pk_mode[cfg.insert_pattern]] + [sec_mode] * cfg.secondary_indexes
    max_rows = target * cap_leaf
    max_users = int(max_rows / cfg.rows_per_user * 2) + 10_000 if modes[0] == MODE_RUNS else 1
    max_pages = -(-max_pages // EXTENT_PAGES) * EXTENT_PAGES
    M = new_state(max_pages, modes, caps_leaf, caps_node, max_users,
                  max_users + 2 * max_pages + 1000)
    seed_build(int(rng.integers(2**31 - 1)))
    n_users = 0
    if modes[0] == MODE_RUNS and cfg.loaded_share > 0:
        loaded = max(EXTENT_PAGES, int(target * cfg.loaded_share))
        while M[H_SIZE] < loaded:
            lens = rng.geometric(1.0 / cfg.rows_per_user, _CHUNK_SESSIONS).astype(np.int32)
            users = np.arange(n_users, n_users + len(lens), dtype=np.int32)
            done = insert_sessions(M, users, lens, loaded, max_rows)
            if done < 0 or n_users + done > max_users:
                raise RuntimeError("table build: state array too small (internal sizing error)")
            n_users += done
    while M[H_SIZE] < target and M[C_ROWS] < max_rows:
        if modes[0] == MODE_RUNS:
            users, lens, n_users = _user_sessions(cfg, rng, _CHUNK_SESSIONS, n_users)
            if n_users > max_users:
                raise RuntimeError("table build: more users than planned for")
        else:
            users = np.zeros(64, np.int32)
            lens = np.full(64, 4096, np.int32)
        done = insert_sessions(M, users, lens, target, max_rows)
        if done < 0 or M[H_FAILED]:
            raise RuntimeError("table build: state array too small (internal sizing error)")
    return _layout(cfg, M, cap_leaf)


def _layout(cfg: TableConfig, M: np.ndarray, cap_leaf: int) -> TableLayout:
    n_pages = int(M[H_SIZE])
    level = page_field(M, G_LEVEL)[:n_pages]
    index = page_field(M, G_INDEX)[:n_pages]
    nrec = page_field(M, G_NREC)
    kind = np.full(n_pages, K_FREE, np.int8)
    kind[page_owners(M) == OWNER_SYSTEM] = K_SYSTEM
    tree_page = level >= 0
    kind[tree_page & (index == 0) & (level == 0)] = K_LEAF
    kind[tree_page & (index == 0) & (level > 0)] = K_NODE
    kind[tree_page & (index > 0) & (level == 0)] = K_SEC_LEAF
    kind[tree_page & (index > 0) & (level > 0)] = K_SEC_NODE
    root = int(ix(M, 0, I_ROOT))
    path = [root]
    while pg(M, path[-1], G_LEVEL) > 1:
        path.append(int(pg(M, path[-1], G_FCHILD)))
    p = path[-1]
    while pg(M, p, G_LEVEL) > 0:
        p = int(pg(M, p, G_FCHILD))
    leaves = chain(M, p)
    leaf_rows = nrec[leaves].copy()
    if pg(M, root, G_LEVEL) >= 1:
        level1 = chain(M, path[-1])
        counts = nrec[level1].astype(np.int64)
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    else:
        path = []
        level1 = np.empty(0, np.int32)
        counts = np.empty(0, np.int64)
        first = np.empty(0, np.int64)
    assert counts.sum() in (0, len(leaves))
    return TableLayout(cfg, n_pages, kind, leaves, leaf_rows, level1, first, counts, path,
                       int(M[C_ROWS]), int(M[C_USERS]), int(M[C_SPLITS]), cap_leaf)
