"""InnoDB's LRU list with midpoint insertion (``buf0lru.cc``) of the server's buffer
pool (``innodb.buffer.pool``; the full scan reads into it, ``innodb.buffer.aio_reads``).

Modelled after MySQL 5.6 ``buf_LRU_add_block`` / ``buf_LRU_old_adjust_len`` /
``buf_page_make_young_if_needed``:

- Two sublists: *young* (the head) and *old* (the last ``innodb_old_blocks_pct`` % of
  the list). A page read from disk enters at the head of the old sublist (the
  midpoint); ``buf_LRU_old_adjust_len`` keeps the boundary within
  ``BUF_LRU_OLD_TOLERANCE`` (20 pages) of its target.
- An old page is made young (moved to the head of the list) when it is accessed
  ``innodb_old_blocks_time`` ms or more after its first access; a young page only when
  it has drifted into the older quarter of the young sublist
  (``buf_page_peek_if_too_old``, by the count of pages evicted since it was last made
  young).
- The LRU end is the old sublist's oldest page; ``tail()`` walks from there.

Each sublist is an insertion-ordered dict (LRU end first): every list operation is
O(1). Deliberately not modelled: the ``BUF_LRU_OLD_MIN_LEN`` special case for tiny
pools, the LRU list mutex.
"""
from __future__ import annotations

from collections import OrderedDict
from itertools import chain

BUF_LRU_OLD_TOLERANCE = 20


class MidpointLRU:
    """The LRU list of ``capacity`` frames; pages are any hashable ids."""

    def __init__(self, sim, capacity: int, old_blocks_pct: int, old_blocks_time_ms: int) -> None:
        self.sim = sim
        self.capacity = capacity
        self.old_ratio = old_blocks_pct / 100.0
        self.old_time_ns = old_blocks_time_ms * 1_000_000
        # a young page is too old past this many evictions since it was made young
        self.young_span = capacity * (1.0 - self.old_ratio) / 4
        self.young: OrderedDict = OrderedDict()   # LRU end first
        self.old: OrderedDict = OrderedDict()
        self.first_access: dict = {}
        self.young_clock: dict = {}
        self.evictions = 0
        self.made_young = 0          # Innodb_buffer_pool_pages_made_young

    def lru_len(self) -> int:
        return len(self.young) + len(self.old)

    def resident(self, page) -> bool:
        return page in self.old or page in self.young

    def is_accessed(self, page) -> int:
        """First access time (ns, >0) or 0 (``buf_page_is_accessed``)."""
        return self.first_access.get(page, 0)

    def is_old(self, page) -> bool:
        return page in self.old

    def recently_used(self, page) -> bool:
        """Resident, accessed, and not too old (``buf_page_peek_if_young``)."""
        t = self.first_access.get(page, 0)
        if not t:
            return False
        if page in self.old:
            return not (self.old_time_ns and self.sim.now_ns - t >= self.old_time_ns)
        if page in self.young:
            return not self._young_too_old(page)
        return False

    def _young_too_old(self, page) -> bool:
        return self.evictions - self.young_clock.get(page, 0) > self.young_span

    def _adjust_old(self) -> None:
        """Keep the old sublist at innodb_old_blocks_pct of the list (+- 20 pages)."""
        young, old = self.young, self.old
        target = int((len(young) + len(old)) * self.old_ratio)
        while len(old) < target - BUF_LRU_OLD_TOLERANCE and young:
            page, _ = young.popitem(last=False)       # young's LRU end becomes old
            old[page] = None
            old.move_to_end(page)                     # ... at the old sublist's head
        while len(old) > target + BUF_LRU_OLD_TOLERANCE:
            page = next(reversed(old))                # old head becomes young's tail
            del old[page]
            young[page] = None
            young.move_to_end(page, last=False)

    def _insert(self, page) -> None:
        """A page read from disk enters at the midpoint."""
        self.old[page] = None
        self._adjust_old()

    def _remove(self, page) -> None:
        """Take ``page`` off the list (``buf_LRU_remove_block``); counts an eviction."""
        if page in self.old:
            del self.old[page]
        else:
            del self.young[page]
        self.evictions += 1
        self.first_access.pop(page, None)
        self.young_clock.pop(page, None)

    def tail(self):
        """Pages from the LRU end towards the head."""
        return chain(self.old, self.young)

    def access(self, page) -> bool:
        """A thread uses a resident page; returns True on its first access."""
        now = self.sim.now_ns
        t = self.first_access.get(page)
        if t is None:
            self.first_access[page] = now or 1
            return True
        if page in self.old:
            if self.old_time_ns == 0 or now - t >= self.old_time_ns:
                del self.old[page]
                self.young[page] = None
                self.young_clock[page] = self.evictions
                self.made_young += 1
                self._adjust_old()
        elif (page in self.young
              and self.evictions - self.young_clock.get(page, 0) > self.young_span):
            self.young.move_to_end(page)
            self.young_clock[page] = self.evictions
            self.made_young += 1
        return False
