"""XtraDB's ``estimate``: ``innodb_adaptive_checkpoint=estimate`` (5.1,
``srv_adaptive_checkpoint == 2``), ``innodb_adaptive_flushing_method=estimate`` in
Percona Server 5.5. Follows the XtraDB 5.1 source; the XtraDB 5.5 source (as Drizzle's
InnoDB plugin carries it: InnoDB 1.1.6 with XtraDB's flushing methods) has the same rule
under the renamed variable.

Once a second, below ``innodb_max_dirty_pages_pct``, with ``m`` = ``max_checkpoint_age``
(the log margin) and ``age`` the checkpoint age:

- ``age`` up to ``m / 4``, or above ``7/8 m`` (the async point, where the user threads'
  preflush takes over): nothing. (The source's comment and Percona's documentation say
  "1/2"; the code compares with ``m / 4``. The code is followed.)
- else "blocks per loop" ``bpl = n_dirty^2 x (lsn - lsn_old) / level``, with
  ``lsn - lsn_old`` the log's progress since the last loop and
  ``level = sum over dirty pages of (m - (lsn - oldest_modification))`` = ``n_dirty x``
  (``m`` - the average modified age): the pages to write so that, at the log's current
  speed, the average dirty page is written before its age reaches ``m``. Without the
  doublewrite buffer ``bpl x 7/8`` ("flush is faster"). The batch is limited to pages
  older than ``oldest + (lsn - lsn_old)``; if a flush-list batch is running the thread
  waits and asks again.
"""
from __future__ import annotations

from .base import Batch, MasterThread


class Estimate(MasterThread):
    name = "estimate"

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.lsn_old = ckpt.redo.lsn

    def start(self) -> None:
        self.lsn_old = self.lsn

    def above_dirty_limit(self) -> None:
        self.lsn_old = self.lsn

    def blocks_per_loop(self, lsn: int) -> int:
        """``bpl`` of the module docstring for the flush list as it is now."""
        fl = self.pool.flush_list
        n = len(fl)
        m = self.ckpt.max_checkpoint_age
        level = n * (m - lsn) + sum(fl.values())
        bpl = n * n * (lsn - self.lsn_old) // level if level > 0 else 0
        if not self.cfg.innodb_doublewrite:
            bpl = bpl * 7 // 8
        return bpl

    def adaptive(self) -> Batch | None:
        lsn = self.lsn
        oldest = self.pool.oldest_modification()
        m = self.ckpt.max_checkpoint_age
        batch = None
        if oldest and m // 4 < lsn - oldest <= m - m // 8:
            bpl = self.blocks_per_loop(lsn)
            if bpl:
                batch = Batch(bpl, oldest + (lsn - self.lsn_old), retry=True)
        self.lsn_old = lsn
        return batch
