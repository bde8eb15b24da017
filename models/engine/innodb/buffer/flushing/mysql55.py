"""MySQL 5.5 (and the InnoDB plugin 1.0 of 5.1, which XtraDB 5.1 is built on): the master
thread's flushing with ``innodb_adaptive_flushing`` (``srv0srv.c``, ``buf0flu.c``).

Below ``innodb_max_dirty_pages_pct``, ``buf_flush_get_desired_flush_rate``: the pages
the redo generation rate asks for, ``n_dirty x redo_avg / log_capacity - lru_flush_avg``
(``redo_avg``: LSN bytes per second, ``lru_flush_avg``: pages flushed from the LRU per
second, both averaged over ``BUF_FLUSH_STAT_N_INTERVAL`` = 20 s plus the current
second), at most ``PCT_IO(100)``; a batch of the whole ``PCT_IO(100)`` skips the
sleep before the next loop. Without ``innodb_adaptive_flushing`` nothing (the name
``none``; XtraDB 5.1's ``innodb_adaptive_checkpoint=none``). Follows the source.
"""
from __future__ import annotations

from collections import deque

from .base import Batch, MasterThread

BUF_FLUSH_STAT_N_INTERVAL = 20


class MySQL55(MasterThread):
    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.name = "native" if cfg.innodb_adaptive_flushing else "none"
        self.stat_hist: deque = deque(maxlen=BUF_FLUSH_STAT_N_INTERVAL)
        self.stat_prev = (0, 0)

    def _lru_flushed(self) -> int:
        return self.flusher.flushed_lru + self.flusher.flushed_single

    def desired_flush_rate(self) -> int:
        """``buf_flush_get_desired_flush_rate``."""
        lsn, lru = self.lsn, self._lru_flushed()
        cur = (lsn - self.stat_prev[0], lru - self.stat_prev[1])
        n = len(self.stat_hist) + 1
        redo_avg = (sum(h[0] for h in self.stat_hist) + cur[0]) / n
        lru_avg = (sum(h[1] for h in self.stat_hist) + cur[1]) / n
        n_flush = len(self.pool.flush_list) * redo_avg / self.ckpt.capacity
        rate = n_flush - lru_avg
        return int(min(rate, self.io_capacity)) if rate > 0 else 0

    def adaptive(self) -> Batch | None:
        if not self.cfg.innodb_adaptive_flushing:
            return None
        want = self.desired_flush_rate()
        # a batch of the whole PCT_IO(100): no sleep before the next loop (not in XtraDB
        # 5.5: ``MasterThread.skips_sleep``)
        self.skip_sleep = self.skips_sleep and want == self.pct_io(100)
        return Batch(want) if want else None

    def done(self, flushed: int) -> None:
        """``buf_flush_stat_update``, once a second."""
        lsn, lru = self.lsn, self._lru_flushed()
        self.stat_hist.append((lsn - self.stat_prev[0], lru - self.stat_prev[1]))
        self.stat_prev = (lsn, lru)
