"""MyISAM's index file (``.MYI``): the B-trees of a table's keys, and where their key
blocks lie in the file - which is what decides how random the index writes are.

Modelled (MySQL ``storage/myisam``: ``mi_write.c``, ``mi_page.c``, ``mi_open.c``):

- One ``.MYI`` holds every index of the table, after a header (``header_bytes``: the
  table state and the key definitions). Key blocks are ``myisam_block_size`` bytes
  (1 KB) and are allocated at the end of the file as the trees grow (no deletes, so
  the deleted-block chain is empty): the blocks of all indexes interleave in the order
  they were created, and the leaves of an index on a random key are scattered over
  the whole file.
- A leaf holds ``(block - 2) // (key + data pointer)`` entries (2-byte block header;
  INT keys are not packed); a full leaf splits in half (``_mi_split_page``): one new
  block and one more entry in its parent.
- A random key (uniform, as ``b1..b3``) lands in a leaf with a probability
  proportional to the entries the leaf holds - its share of the key space - drawn by
  rejection sampling over the leaves. A sequential key (``AUTO_INCREMENT``) always
  lands in the right-most leaf, which therefore splits into half-full leaves.
- Parents: one internal block per ``fanout`` leaves, in the order the leaves were
  created (an internal node holds ``(block - 2) // (key + pointer + child pointer)``
  entries, ~72 % full like the leaves); a leaf split dirties its parent. Levels above
  are not modelled: they are a few blocks, always cached, and a statement rarely
  changes them.
- A table that already holds ``initial_rows``: leaves with the occupancy a B-tree
  under uniform random inserts settles to (Yao: a share proportional to 1 / entries**2
  between half and full, ln 2 = 69 % on average, which the insert path converges to
  as well), the primary key's leaves half full, every block at a random place among
  the blocks.

Deliberately not modelled: packed (prefix-compressed) keys, key-block reuse after
deletes, ``myisam_use_mmap``, the root and upper internal levels as separate blocks,
key-cache midpoint insertion (``key_cache_division_limit``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...checks import at_least


@dataclass(frozen=True)
class KeyFileConfig:
    """The table's indexes: ``random_indexes`` secondary indexes on uniformly random
    INT keys and, with ``auto_increment_pk``, an AUTO_INCREMENT primary key."""

    random_indexes: int = 3
    auto_increment_pk: bool = True
    key_bytes: int = 4                      # INT
    data_pointer_bytes: int = 6             # myisam_data_pointer_size
    block_bytes: int = 1024                 # myisam_block_size
    header_bytes: int = 2048

    def __post_init__(self) -> None:
        at_least(self, 0, "random_indexes")
        at_least(self, 1, "key_bytes")
        at_least(self, 2, "data_pointer_bytes")
        at_least(self, 512, "block_bytes")
        at_least(self, 0, "header_bytes")
        if self.random_indexes == 0 and not self.auto_increment_pk:
            raise ValueError("random_indexes: a table without the primary key needs >= 1 index")

    @property
    def leaf_entries(self) -> int:
        return (self.block_bytes - 2) // (self.key_bytes + self.data_pointer_bytes)

    @property
    def fanout(self) -> int:
        """Leaves per internal block: its entries at ~72 % occupancy."""
        per = (self.block_bytes - 2) // (self.key_bytes + self.data_pointer_bytes + 4)
        return max(2, int(per * 0.72))


class _Tree:
    """One index: per leaf (in creation order) its entry count and its block, as
    Python lists (the insert path reads and bumps one entry at a time); ``counts`` and
    ``block`` are numpy copies for inspection."""

    __slots__ = ("cnt", "blk", "n", "parents", "random")

    def __init__(self, random: bool) -> None:
        self.random = random
        self.cnt: list[int] = []
        self.blk: list[int] = []
        self.n = 0
        self.parents: list[int] = []

    @property
    def counts(self) -> np.ndarray:
        return np.array(self.cnt, np.int64)

    @property
    def block(self) -> np.ndarray:
        return np.array(self.blk, np.int64)


class KeyFile:
    """The trees of one table. ``insert(rng)`` adds one row to every index and returns
    the key blocks it changed (block numbers; byte offset = ``offset(block)``)."""

    def __init__(self, cfg: KeyFileConfig, initial_rows: int = 0,
                 rng: np.random.Generator | None = None) -> None:
        self.cfg = cfg
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.cap = cfg.leaf_entries
        self.blocks = 0                      # key blocks allocated
        self.rows = 0
        self.splits = 0
        self.trees = [_Tree(True) for _ in range(cfg.random_indexes)]
        if cfg.auto_increment_pk:
            self.trees.insert(0, _Tree(False))
        self._u: list[float] = []      # uniform draws, 4,096 at a time
        self._ui = 0
        self._prefill(int(initial_rows))

    # -- the file ----------------------------------------------------------------------
    def offset(self, block: int) -> int:
        return self.cfg.header_bytes + block * self.cfg.block_bytes

    @property
    def size_bytes(self) -> int:
        return self.cfg.header_bytes + self.blocks * self.cfg.block_bytes

    @property
    def leaf_blocks(self) -> int:
        return sum(t.n for t in self.trees)

    def _new_block(self) -> int:
        b = self.blocks
        self.blocks += 1
        return b

    # -- prefill -----------------------------------------------------------------------
    def _prefill(self, rows: int) -> None:
        if rows <= 0:
            for t in self.trees:
                self._add_leaf(t, 0)
            return
        cap, half = self.cap, self.cap // 2
        rng = self.rng
        per_tree = []
        for t in self.trees:
            if t.random:
                # occupancy density ~ 1/c**2 on [half, cap] (mean ln 2 = 69 %):
                # inverse CDF c = half / (1 - u/2)
                n = max(1, int(round(rows / (cap * np.log(2)))))
                c = np.clip(np.floor(half / (1.0 - rng.random(n) / 2.0)), 1, cap).astype(np.int64)
                c = np.minimum(cap, np.maximum(1, np.round(c * (rows / c.sum())))).astype(np.int64)
                while c.sum() != rows:                  # exactly ``rows`` entries
                    d = rows - int(c.sum())
                    room = np.flatnonzero(c < cap) if d > 0 else np.flatnonzero(c > 1)
                    pick = rng.choice(room, size=min(abs(d), room.size), replace=False)
                    c[pick] += 1 if d > 0 else -1
            else:
                n = -(-rows // half)
                c = np.full(n, half, np.int64)
                c[-1] = rows - half * (n - 1)
            per_tree.append(c)
        # blocks: the leaves and their parents of every tree, interleaved at random
        kinds = []
        for i, c in enumerate(per_tree):
            n_par = -(-c.size // self.cfg.fanout)
            kinds.append(np.full(c.size + n_par, i, np.int32))
        order = rng.permutation(np.concatenate(kinds))
        for i, (t, c) in enumerate(zip(self.trees, per_tree)):
            mine = np.flatnonzero(order == i)
            n = c.size
            t.cnt = c.tolist()
            t.blk = mine[:n].tolist()
            t.n = n
            t.parents = mine[n:].tolist()
        self.blocks = int(order.size)
        self.rows = rows

    def _add_leaf(self, t: _Tree, count: int) -> int:
        i = t.n
        t.cnt.append(count)
        t.blk.append(self._new_block())
        t.n += 1
        if i // self.cfg.fanout >= len(t.parents):
            t.parents.append(self._new_block())
        return i

    # -- inserting ---------------------------------------------------------------------
    def _uniform(self) -> float:
        if self._ui >= len(self._u):
            self._u = self.rng.random(4096).tolist()
            self._ui = 0
        u = self._u[self._ui]
        self._ui += 1
        return u

    def _pick_leaf(self, t: _Tree) -> int:
        if not t.random:
            return t.n - 1
        cap, n, counts = self.cap, t.n, t.cnt
        uniform = self._uniform
        while True:
            i = int(uniform() * n)
            if uniform() * cap < counts[i] + 1:
                return i

    def insert(self) -> list[int]:
        """One row into every index; the changed key blocks, in file order (MyISAM's
        ``flush_key_blocks`` writes them sorted by position)."""
        changed = []
        cap = self.cap
        for t in self.trees:
            i = self._pick_leaf(t)
            cnt = t.cnt
            changed.append(t.blk[i])
            if cnt[i] < cap:
                cnt[i] += 1
                continue
            # split: half stays, half (+ the new key) goes to a new block
            self.splits += 1
            keep = cap // 2
            cnt[i] = keep
            j = self._add_leaf(t, cap + 1 - keep)
            changed.append(t.blk[j])
            changed.append(t.parents[i // self.cfg.fanout])
        self.rows += 1
        changed.sort()
        return changed
