"""Background flushing once a second: the 5.6 page cleaner thread, the 5.1 / 5.5 master
thread's flushing (``buf0flu.cc``, ``srv0srv.cc``).

- **5.6** (``buf_flush_page_cleaner_thread``): each second, if the server was active
  (the LSN moved): the LRU tail batch (``innodb_lru_scan_depth`` per instance), then
  ``page_cleaner_flush_pages_if_needed``: ``pct = max(af_get_pct_for_dirty,
  af_get_pct_for_lsn(age))``; ``n = (PCT_IO(pct) + avg_page_rate) / 2`` capped at
  ``innodb_io_capacity_max``; a flush-list batch of ``n`` pages older than
  ``oldest + lsn_avg_rate x (age_factor + 1)``. ``af_get_pct_for_dirty``: 100 above
  ``innodb_max_dirty_pages_pct`` (no low-water mark). ``af_get_pct_for_lsn``: 0 below
  ``innodb_adaptive_flushing_lwm`` % of the log capacity, and without
  ``innodb_adaptive_flushing`` below the async point; else
  ``io_capacity_max / io_capacity x f x sqrt(f) / 7.5`` with
  ``f = age x 100 / max_modified_age_async``. ``avg_page_rate`` and ``lsn_avg_rate``
  are refreshed every ``innodb_flushing_avg_loops`` iterations. An idle second
  flushes ``PCT_IO(100)`` from the flush list.
- **5.5** (``srv_master_thread``, once a second): above ``innodb_max_dirty_pages_pct``
  a flush-list batch of ``PCT_IO(100)``; else with ``innodb_adaptive_flushing``
  ``buf_flush_get_desired_flush_rate``: ``n_dirty x redo_avg / log_capacity -
  lru_flush_avg`` (averages over ``BUF_FLUSH_STAT_N_INTERVAL`` = 20 s), at most
  ``innodb_io_capacity``.
- **5.1**: as 5.5 without adaptive flushing, ``PCT_IO(100)`` = 100 pages.
- The master thread also writes a checkpoint every ``checkpoint_every_s`` seconds.
- Each second a sample row is kept (``samples``): dirty pages, checkpoint age, pages
  flushed from the flush list / LRU / by single-page flushes, free-list waits.

Deliberately not modelled: the master thread's 10-second loop (purge, insert-buffer
merge, the 10 s ``PCT_IO(100)`` flush), 5.5's background loop when idle, several page
cleaner threads (5.7).
"""
from __future__ import annotations

import math
from collections import deque

BUF_FLUSH_STAT_N_INTERVAL = 20
LSN_MAX = 1 << 62
SECOND_NS = 1_000_000_000


class BackgroundFlusher:
    """``cfg``: the server config; ``flusher``, ``pool``, ``ckpt`` (``LogCheckpointer``)."""

    def __init__(self, sim, cfg, pool, flusher, ckpt) -> None:
        self.sim = sim
        self.cfg = cfg
        self.pool = pool
        self.flusher = flusher
        self.ckpt = ckpt
        self.version = cfg.version
        self.io_capacity = 100 if cfg.version == "5.1" else cfg.innodb_io_capacity
        self.io_capacity_max = cfg.innodb_io_capacity_max
        self._running = False
        # 5.6 page_cleaner_flush_pages_if_needed state
        self.prev_lsn = 0
        self.n_iterations = 0
        self.sum_pages = 0
        self.avg_page_rate = 0
        self.lsn_avg_rate = 0
        self.prev_pages = 0
        self.last_pages = 0
        self.last_lsn = 0
        # 5.5 buf_flush_stat
        self.stat_hist: deque = deque(maxlen=BUF_FLUSH_STAT_N_INTERVAL)
        self.stat_prev = (0, 0)
        self.samples: list[dict] = []
        self.flushed_background = 0

    def pct_io(self, pct: float) -> int:
        return int(self.io_capacity * pct / 100.0)

    # -- 5.6 ----------------------------------------------------------------------------
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
        f = age * 100 / async_age
        return (self.io_capacity_max / self.io_capacity) * f * math.sqrt(f) / 7.5

    def flush_pages_if_needed(self):
        """Generator: ``page_cleaner_flush_pages_if_needed``; returns pages flushed."""
        cur_lsn = self.ckpt.redo.lsn
        if self.prev_lsn == 0:
            self.prev_lsn = cur_lsn
            return 0
        if self.prev_lsn == cur_lsn:
            return 0
        loops = self.cfg.innodb_flushing_avg_loops
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
        n_pages = min((self.pct_io(pct) + self.avg_page_rate) // 2, self.io_capacity_max)
        age_factor = 0
        if self.last_pages and cur_lsn - self.last_lsn > self.lsn_avg_rate / 2:
            age_factor = self.prev_pages // self.last_pages
        self.prev_pages = n_pages
        n = 0
        if n_pages:
            n = yield from self.flusher.flush_list_batch(
                n_pages, oldest + self.lsn_avg_rate * (age_factor + 1))
            n = n or 0
        self.last_lsn = cur_lsn
        self.last_pages = n + 1
        self.sum_pages += n
        return n

    # -- 5.5 ----------------------------------------------------------------------------
    def desired_flush_rate(self) -> int:
        """``buf_flush_get_desired_flush_rate``."""
        lsn = self.ckpt.redo.lsn
        lru = self.flusher.flushed_lru + self.flusher.flushed_single
        cur = (lsn - self.stat_prev[0], lru - self.stat_prev[1])
        n = len(self.stat_hist) + 1
        redo_avg = (sum(h[0] for h in self.stat_hist) + cur[0]) / n
        lru_avg = (sum(h[1] for h in self.stat_hist) + cur[1]) / n
        n_flush = len(self.pool.flush_list) * redo_avg / self.ckpt.capacity
        rate = n_flush - lru_avg
        return int(min(rate, self.io_capacity)) if rate > 0 else 0

    def _stat_update(self) -> None:
        lsn = self.ckpt.redo.lsn
        lru = self.flusher.flushed_lru + self.flusher.flushed_single
        self.stat_hist.append((lsn - self.stat_prev[0], lru - self.stat_prev[1]))
        self.stat_prev = (lsn, lru)

    # -- the thread ---------------------------------------------------------------------
    def start(self) -> None:
        if not self._running:
            self._running = True
            self.sim.spawn(self._loop(), "page_cleaner" if self.version == "5.6" else "srv_master")

    def stop(self) -> None:
        self._running = False

    def _loop(self):
        sim, flusher = self.sim, self.flusher
        last_lsn = self.ckpt.redo.lsn
        second = 0
        next_loop = sim.now_ns + SECOND_NS
        while self._running:
            if sim.now_ns < next_loop:          # page_cleaner_sleep_if_needed
                yield next_loop - sim.now_ns
            if not self._running:
                return
            next_loop = sim.now_ns + SECOND_NS
            second += 1
            lsn = self.ckpt.redo.lsn
            active = lsn != last_lsn
            last_lsn = lsn
            n = 0
            if self.version == "5.6":
                if active:
                    n += yield from flusher.lru_tail(self.cfg.innodb_lru_scan_depth
                                                     * self.cfg.innodb_buffer_pool_instances)
                    n += yield from self.flush_pages_if_needed()
                elif self.pool.flush_list:
                    n += (yield from flusher.flush_list_batch(self.pct_io(100), LSN_MAX)) or 0
            else:
                if self.pool.dirty_pct() > self.cfg.innodb_max_dirty_pages_pct:
                    n += (yield from flusher.flush_list_batch(self.pct_io(100), LSN_MAX)) or 0
                elif self.version == "5.5" and self.cfg.innodb_adaptive_flushing:
                    want = self.desired_flush_rate()
                    if want:
                        n += (yield from flusher.flush_list_batch(want, LSN_MAX)) or 0
                self._stat_update()
            self.flushed_background += n
            if second % self.ckpt.checkpoint_every_s == 0:
                yield from self.ckpt.checkpoint()
            self._sample()

    def _sample(self) -> None:
        f, pool = self.flusher, self.pool
        self.samples.append({
            "t_s": self.sim.now_ns / 1e9, "pages_dirty": len(pool.flush_list),
            "pages_free": pool.free, "checkpoint_age": self.ckpt.checkpoint_age(),
            "flushed_list": f.flushed_list, "flushed_lru": f.flushed_lru,
            "flushed_single": f.flushed_single, "wait_free": pool.wait_free,
            "reads": pool.reads, "sync_waits": self.ckpt.sync_waits})
