"""The MySQL 5.6 page cleaner (``buf_flush_page_cleaner_thread``, ``buf0flu.cc``), once a
second. Follows the 5.6 source.

- If the server was active (the LSN moved since the last loop): the LRU tail batch,
  ``innodb_lru_scan_depth`` x the pool's instances (``buffer_pool_instances``) pages
  (``buf_flush_LRU_tail``), then ``page_cleaner_flush_pages_if_needed``:
  ``pct = max(af_get_pct_for_dirty, af_get_pct_for_lsn(age))``,
  ``n = (PCT_IO(pct) + avg_page_rate) / 2`` capped at ``innodb_io_capacity_max``, a
  flush-list batch of ``n`` pages older than ``oldest + lsn_avg_rate x (age_factor + 1)``.
- ``af_get_pct_for_dirty``: 100 above ``innodb_max_dirty_pages_pct`` (no low-water
  mark in 5.6). ``af_get_pct_for_lsn``: 0 below ``innodb_adaptive_flushing_lwm`` % of
  the log capacity, and without ``innodb_adaptive_flushing`` below the async point;
  else ``io_capacity_max / io_capacity x f x sqrt(f) / 7.5`` with
  ``f = age x 100 / max_modified_age_async``, ``f`` and the capacity ratio integer
  quotients as in the source (``innodb_io_capacity`` 700 under the default maximum
  2000 gives 2, not 2.86).
- ``avg_page_rate`` and ``lsn_avg_rate`` are refreshed every
  ``innodb_flushing_avg_loops`` loops. They start at zero, as after a restart: for its
  first 30 loops the cleaner's batches then write nothing (their LSN limit is the
  oldest page), harmless when the age is a restart's zero. A server started from a
  warm replay (``server/warmup.py``: a long run's pool and log, its age high) seeds
  them at its first active loop instead - ``lsn_avg_rate`` the loop's LSN progress,
  ``avg_page_rate`` its ``PCT_IO(pct)``, the fixed point of ``n = (PCT_IO + avg) / 2``
  - as a long run's averages would have converged (a modelling choice: the source has
  no warm start).
- An idle loop flushes ``PCT_IO(100)`` from the flush list.
"""
from __future__ import annotations

import math

from .base import Batch, FlushPolicy


class PageCleaner56(FlushPolicy):
    name = "page_cleaner"
    thread = "page_cleaner"

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.io_capacity_max = cfg.io_capacity_max
        self.prev_lsn = 0
        self.n_iterations = 0
        self.sum_pages = 0
        self.avg_page_rate = 0
        self.lsn_avg_rate = 0
        self.prev_pages = 0
        self.last_pages = 0
        self.last_lsn = 0
        self._adaptive = False        # this loop ran flush_pages_if_needed to its end
        self._warm = False            # seed the averages at the first active loop

    def start(self) -> None:
        # a server started from a warm replay (the log moved outside simulated time) has
        # run for long: its averages are converged, not the zeros of a restart
        redo = self.ckpt.redo
        self._warm = redo.base_lsn > redo.START_LSN

    def lru_depth(self, active: bool) -> int:
        if not active:
            return 0
        return self.cfg.innodb_lru_scan_depth * self.cfg.buffer_pool_instances

    def pct_for_dirty(self) -> float:
        dirty = self.pool.dirty_pct()
        if dirty == 0:
            return 0
        return 100 if dirty > self.cfg.innodb_max_dirty_pages_pct else 0

    def pct_for_lsn(self, age: int) -> float:
        ckpt = self.ckpt
        if age < self.cfg.innodb_adaptive_flushing_lwm * ckpt.capacity / 100:
            return 0
        async_age = ckpt.max_modified_age_async
        if age < async_age and not self.cfg.innodb_adaptive_flushing:
            return 0
        # the source's integer arithmetic: lsn_age_factor and the capacity ratio are
        # both integer quotients (lsn_t, ulong)
        f = age * 100 // async_age
        return (self.io_capacity_max // self.io_capacity) * f * math.sqrt(f) / 7.5

    def plan(self, active: bool) -> Batch | None:
        self._adaptive = False
        if not active:
            return Batch(self.pct_io(100)) if self.pool.flush_list else None
        return self._flush_pages_if_needed()

    def _flush_pages_if_needed(self) -> Batch | None:
        """``page_cleaner_flush_pages_if_needed`` up to its batch."""
        cur_lsn = self.lsn
        if self.prev_lsn == 0:
            self.prev_lsn = cur_lsn
            return None
        if self.prev_lsn == cur_lsn:
            return None
        loops = self.cfg.innodb_flushing_avg_loops
        seed = self._warm
        if seed:                        # the first loop's LSN progress as the average
            self._warm = False
            self.lsn_avg_rate = cur_lsn - self.prev_lsn
        self.n_iterations += 1
        if self.n_iterations >= loops:
            self.avg_page_rate = (self.sum_pages // loops + self.avg_page_rate) // 2
            lsn_rate = (cur_lsn - self.prev_lsn) // loops
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) // 2
            self.prev_lsn = cur_lsn
            self.n_iterations = 0
            self.sum_pages = 0
        oldest = self.ckpt.oldest_lsn()
        age = cur_lsn - oldest
        pct = max(self.pct_for_dirty(), self.pct_for_lsn(age))
        if seed:                        # avg = n: the fixed point of n = (PCT_IO + avg) / 2
            self.avg_page_rate = min(self.pct_io(pct), self.io_capacity_max)
        n_pages = min((self.pct_io(pct) + self.avg_page_rate) // 2, self.io_capacity_max)
        age_factor = 0
        if self.last_pages and cur_lsn - self.last_lsn > self.lsn_avg_rate / 2:
            age_factor = self.prev_pages // self.last_pages
        self.prev_pages = n_pages
        self._adaptive = True
        self._cur_lsn = cur_lsn
        return Batch(n_pages, oldest + self.lsn_avg_rate * (age_factor + 1))

    def done(self, flushed: int) -> None:
        if self._adaptive:
            self.last_lsn = self._cur_lsn
            self.last_pages = flushed + 1
            self.sum_pages += flushed
