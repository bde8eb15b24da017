"""XtraDB's ``keep_average``: ``innodb_adaptive_checkpoint=keep_average`` (5.1,
``srv_adaptive_checkpoint == 3``), ``innodb_adaptive_flushing_method=keep_average`` in
Percona Server 5.5. Follows the XtraDB 5.1 source; the XtraDB 5.5 source (as Drizzle's
InnoDB plugin carries it) has the same rule.

Ten loops a second (the master thread's next wake-up is 100 ms away instead of 1 s;
ten of them count as one loop of its 10-second cycle). Each loop, below
``innodb_max_dirty_pages_pct``:

- ``blocks``: the dirty pages now; ``new``: those dirtied since the last loop (the
  pages in front of the last loop's newest one); ``flushed`` = ``new + blocks_before -
  blocks``: the pages that left the flush list since.
- ``n = blocks x (lsn - lsn_old) / max_modified_age_async``: the share of the dirty
  pages the log's progress in this loop stands for, less the pages others (LRU
  batches, single-page flushes, user threads' preflush) flushed beyond this thread's
  own last batch. If ``n > 0``: a batch of ``n + 1`` pages older than ``oldest +
  (lsn - lsn_old)``.
- The first loop after another branch ran only remembers the flush list's head.

Small, frequent batches proportional to the log's speed: the flushed pages per second
stay near their average instead of arriving in bursts.
"""
from __future__ import annotations

from .base import SECOND_NS, Batch, MasterThread

LOOP_NS = SECOND_NS // 10


class KeepAverage(MasterThread):
    name = "keep_average"

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.lsn_old = ckpt.redo.lsn
        self.prev = False                   # prev_adaptive_checkpoint == 3
        self.head = (None, 0, 0)            # prev_flush_info: page, its LSN, list length
        self.n_prev = 0                     # n_pages_flushed_prev

    def start(self) -> None:
        self.lsn_old = self.lsn

    def above_dirty_limit(self) -> None:
        self.lsn_old = self.lsn
        self.prev = False

    def _new_blocks(self) -> int:
        """Pages in front of the last loop's newest one (all if it left the list)."""
        page, lsn, _ = self.head
        new = 0
        for p, om in reversed(self.pool.flush_list.items()):
            if p == page and om == lsn:
                return new
            new += 1
        return new

    def adaptive(self) -> Batch | None:
        self.sleep_ns = LOOP_NS
        lsn = self.lsn
        oldest = self.pool.oldest_modification()
        fl = self.pool.flush_list
        batch = None
        if self.prev:
            blocks = len(fl)
            flushed = max(0, self._new_blocks() + self.head[2] - blocks)
            n = blocks * (lsn - self.lsn_old) // self.ckpt.max_modified_age_async
            if flushed > self.n_prev:
                n -= flushed - self.n_prev
            if n > 0:
                batch = Batch(n + 1, oldest + (lsn - self.lsn_old))
        newest = next(reversed(fl.items()), (None, 0))
        self.head = (newest[0], newest[1], len(fl))
        self.prev = True
        self.lsn_old = lsn
        return batch

    def done(self, flushed: int) -> None:
        self.n_prev = flushed
