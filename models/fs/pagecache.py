"""The page cache shared by every filesystem of one simulated machine.

Modelled (Linux mm/page-writeback.c, mm/vmscan.c):

- Global counters of cached, dirty and under-writeback pages (``NR_FILE_PAGES``,
  ``NR_FILE_DIRTY``, ``NR_WRITEBACK``). Per-page state lives in each ``File``.
- A memory limit (``memory_bytes``): when more pages are cached, clean pages that are
  neither dirty nor under writeback are evicted in LRU order (a global access tick per
  page; eviction in batches of 1/128 of memory, like kswapd working between its
  watermarks). Dirty and writeback pages are never evicted.
- Dirty thresholds: above ``dirty_background_ratio`` the filesystems' flushers start
  background writeback (if that is not below ``dirty_ratio``, at half the dirty limit,
  as ``global_dirty_limits`` sets it); above ``dirty_ratio`` (dirty + writeback) a
  writer is throttled in ``balance_dirty_pages`` - it sleeps until writeback
  completions bring the count back under the limit (the IO-less throttling of Linux
  >= 3.2, without its proportional pause curve: a writer either runs free or waits).

Deliberately not modelled: anonymous memory, the active/inactive list split and
refaults, per-bdi dirty limits, the min_free_kbytes watermarks.
"""
from __future__ import annotations

import numpy as np

from ..sim import Condition, Simulator
from .config import PageCacheConfig
from .file import CACHED, DIRTY, WRITEBACK


class PageCache:
    def __init__(self, sim: Simulator, cfg: PageCacheConfig | None = None) -> None:
        self.sim = sim
        self.cfg = cfg or PageCacheConfig()
        self.limit_pages = self.cfg.memory_pages
        self.dirty_limit_pages = max(1, self.limit_pages * self.cfg.dirty_ratio // 100)
        self.background_pages = self.limit_pages * self.cfg.dirty_background_ratio // 100
        if self.background_pages >= self.dirty_limit_pages:
            # global_dirty_limits: a background threshold at or above the dirty limit
            # is halved from the limit, so a throttled writer always has the flusher
            # working (dirty + writeback > limit means dirty > background or
            # writeback under way)
            self.background_pages = self.dirty_limit_pages // 2
        self.nr_cached = 0
        self.nr_dirty = 0
        self.nr_writeback = 0
        self.tick = 0
        self.files: list = []
        self.filesystems: list = []
        self.progress = Condition(sim)   # fired whenever writeback completes
        self.evicted_pages = 0
        self.throttled_ns = 0
        self.throttle_count = 0

    # -- accounting ----------------------------------------------------------------------
    def next_tick(self) -> int:
        self.tick += 1
        return self.tick

    def cached(self, n: int) -> None:
        """``n`` pages were added to the cache."""
        self.nr_cached += n
        if self.nr_cached > self.limit_pages:
            self.reclaim()

    def dirtied(self, n: int) -> None:
        self.nr_dirty += n
        if self.nr_dirty > self.background_pages:
            for fs in self.filesystems:
                fs.writeback.kick()

    def writeback_done(self) -> None:
        self.progress.notify_all()

    # -- reclaim -------------------------------------------------------------------------
    def reclaim(self) -> int:
        """Evict the least recently used clean pages until under the limit."""
        need = self.nr_cached - self.limit_pages
        if need <= 0:
            return 0
        need += max(16, self.limit_pages // 128)
        ticks, owners, pages = [], [], []
        for i, f in enumerate(self.files):
            if f.nr_cached == 0:
                continue
            idx = np.flatnonzero((f.state[:f.cap] & (CACHED | DIRTY | WRITEBACK)) == CACHED)
            if idx.size:
                ticks.append(f.lru[idx])
                owners.append(np.full(idx.size, i, np.int32))
                pages.append(idx)
        if not ticks:
            return 0
        t = np.concatenate(ticks)
        o = np.concatenate(owners)
        p = np.concatenate(pages)
        if t.size > need:
            sel = np.argpartition(t, need - 1)[:need]
            o, p = o[sel], p[sel]
        n = int(p.size)
        for i in np.unique(o):
            f = self.files[int(i)]
            mine = p[o == i]
            f.state[mine] &= ~np.uint8(CACHED)
            if f.ra_marks:                  # a freed page loses its PG_readahead
                f.ra_marks.difference_update(mine.tolist())
            f.nr_cached -= int(mine.size)
        self.nr_cached -= n
        self.evicted_pages += n
        return n

    def forget(self, f) -> None:
        """Drop every clean cached page of ``f`` (as ``echo 1 > drop_caches`` would)."""
        st = f.state[:f.cap]
        idx = np.flatnonzero((st & (CACHED | DIRTY | WRITEBACK)) == CACHED)
        st[idx] &= ~np.uint8(CACHED)
        f.ra_marks.difference_update(idx.tolist())
        f.nr_cached -= int(idx.size)
        self.nr_cached -= int(idx.size)

    # -- dirty throttling ----------------------------------------------------------------
    def over_background(self) -> bool:
        return self.nr_dirty > self.background_pages

    def over_limit(self) -> bool:
        return self.nr_dirty + self.nr_writeback > self.dirty_limit_pages

    def balance_dirty_pages(self):
        """Generator: a writer that pushed dirty memory over ``dirty_ratio`` waits here."""
        if not self.over_limit():
            return
        start = self.sim.now_ns
        self.throttle_count += 1
        while self.over_limit():
            for fs in self.filesystems:
                fs.writeback.kick()
            yield self.progress.wait()
        self.throttled_ns += self.sim.now_ns - start

    def stats(self) -> dict:
        return {"cached_pages": self.nr_cached, "dirty_pages": self.nr_dirty,
                "writeback_pages": self.nr_writeback, "evicted_pages": self.evicted_pages,
                "throttle_count": self.throttle_count, "throttled_ns": self.throttled_ns}
