"""The buffer pool that writes: frames, free list, LRU with midpoint insertion, flush
list, page states (MySQL 5.6 ``buf0buf.cc``, ``buf0lru.cc``; one instance).

- **Frames**: ``innodb_buffer_pool_size`` / 16 KB. A frame is on the free list, holds a
  page being read, or holds a page on the LRU list (``MidpointLRU``).
- **Page states**: clean, dirty (on the flush list, with the LSN of its oldest
  unflushed change), I/O fixed (being read, or being written: a thread that wants to
  change a page under write waits for the write - the flush holds the block's S latch
  - and the page cannot be evicted meanwhile). A change that lands while the write is
  in flight (its mini-transaction latched the page before the flush did) makes the page
  dirty again when the write completes, at the change's LSN (joining the flush list at
  its young end, slightly out of LSN order).
- **Flush list**: ordered by ``oldest_modification``. A page joins it when first
  dirtied, and the LSN only grows, so an insertion-ordered dict *is* that order
  (``buf_flush_insert_into_flush_list`` inserts at the head in LSN order); a page
  leaves it when its write completes (``buf_flush_write_complete``).
- **Getting a free frame** (``buf_LRU_get_free_block``, 5.6): take one from the free
  list; else free a clean, unfixed page from the LRU tail (``buf_LRU_scan_and_free_block``:
  the first try scans ``BUF_LRU_SEARCH_SCAN_THRESHOLD`` = 100 pages, later tries the
  whole list); else the user thread flushes from the LRU tail itself
  (``Innodb_buffer_pool_wait_free``; 5.6 one page, ``buf_flush_single_page_from_LRU``,
  5.1 / 5.5 an LRU batch, ``buf_flush_free_margin``: ``flush.Flusher``) and retries,
  sleeping 10 ms between later tries.
- **Reads**: a miss reads the page synchronously into a free frame (``buf_read_page``);
  a page already being read is waited for, not read twice. A page created without a
  read (a new undo or leaf page, ``buf_page_create``) only takes a frame.

Deliberately not modelled: several instances (one list set for the whole pool), the
buffer-pool / LRU / flush-list mutexes, compressed pages, the adaptive hash index,
read-ahead (``buffer.aio_reads``: the full scan's reads and read-ahead into this pool).
"""
from __future__ import annotations

from collections import OrderedDict
from itertools import filterfalse, islice

from ....sim import Event
from .lru import MidpointLRU

BUF_LRU_SEARCH_SCAN_THRESHOLD = 100
FREE_RETRY_SLEEP_NS = 10_000_000      # os_thread_sleep(10000) in buf_LRU_get_free_block


class WritePool(MidpointLRU):
    """Page ids are ints (``space << 32 | page_no``). ``read(page) -> Event`` reads a
    page from its file; ``flusher`` (set after construction) does single-page flushes."""

    def __init__(self, sim, capacity: int, old_blocks_pct: int, old_blocks_time_ms: int,
                 read) -> None:
        super().__init__(sim, capacity, old_blocks_pct, old_blocks_time_ms)
        self.read = read
        self.flusher = None
        self.ibuf = None                     # the change buffer: merges on read completion
        self.free = capacity                 # free list length
        # page -> oldest_modification, oldest first. An OrderedDict, as the LRU's lists:
        # pages leave from the old end, and a plain dict then keeps the dead slots in
        # front of its first live entry until it next grows - finding the oldest page
        # (every mini-transaction's free check) scanned them all, ~0.35 ms after 500,000
        # departures (a 24 GB pool's flush storm)
        self.flush_list: OrderedDict[int, int] = OrderedDict()
        self.newest: dict[int, int] = {}      # page -> newest_modification
        self.io_fixed: dict[int, Event] = {}  # pages being written -> write completion
        self.reading: dict[int, Event] = {}   # pages being read -> read completion
        self.redirty: dict[int, int] = {}     # changed during their write -> LSN
        # SHOW GLOBAL STATUS counters
        self.read_requests = 0        # Innodb_buffer_pool_read_requests
        self.reads = 0                # Innodb_buffer_pool_reads
        self.wait_free = 0            # Innodb_buffer_pool_wait_free
        self.write_requests = 0       # Innodb_buffer_pool_write_requests
        self.pages_created = 0        # Innodb_pages_created
        self.pages_evicted = 0

    def resize(self, capacity: int) -> None:
        """Before any page is in the pool: ``capacity`` frames, all free (a pool shrunk
        with the data by ``run.scale``)."""
        if self.lru_len() or self.reading or self.free != self.capacity:
            raise ValueError("resize: the buffer pool is in use")
        self.capacity = self.free = capacity

    # -- state ---------------------------------------------------------------------------
    def oldest_modification(self) -> int:
        """``buf_pool_get_oldest_modification``: 0 when no page is dirty."""
        for lsn in self.flush_list.values():
            return lsn
        return 0

    def dirty_pct(self) -> float:
        """``buf_get_modified_ratio_pct``: dirty pages over LRU + free."""
        return 100.0 * len(self.flush_list) / (1 + self.lru_len() + self.free)

    def replaceable(self, page: int) -> bool:
        """Clean and not I/O fixed (``buf_flush_ready_for_replace``)."""
        return page not in self.flush_list and page not in self.io_fixed

    # -- frames --------------------------------------------------------------------------
    def evict(self, page: int) -> None:
        """``buf_LRU_free_page``: the page leaves the pool, its frame joins the free list."""
        self._remove(page)
        self.free += 1
        self.pages_evicted += 1

    def scan_and_free(self, limit: int) -> bool:
        """``buf_LRU_scan_and_free_block``: free the first replaceable page of the
        ``limit`` pages at the LRU tail."""
        io_fixed = self.io_fixed
        # the tail is mostly dirty pages: skip them at C speed (a page being written is
        # still on the flush list, so the io_fixed test only sees the clean ones)
        pages = islice(self.old if limit <= len(self.old) else self.tail(), limit)
        for page in filterfalse(self.flush_list.__contains__, pages):
            if page not in io_fixed:
                self.evict(page)
                return True
        return False

    def get_free_block(self):
        """Generator: take a free frame (``buf_LRU_get_free_block``)."""
        n_iterations = 0
        while True:
            if self.free > 0:
                self.free -= 1
                return
            limit = BUF_LRU_SEARCH_SCAN_THRESHOLD if n_iterations == 0 else self.capacity
            if self.scan_and_free(limit):
                continue
            if n_iterations > 1:
                yield FREE_RETRY_SLEEP_NS
            self.wait_free += 1
            yield from self.flusher.flush_for_free_frame()
            n_iterations += 1

    # -- page access ---------------------------------------------------------------------
    def fetch(self, page: int):
        """Generator: ``buf_page_get`` of a page that is not resident (the caller counted
        the read request): wait for a read in progress, or read it into a free frame."""
        while True:
            ev = self.reading.get(page)
            if ev is None:
                break
            yield ev
            if self.resident(page):
                self.access(page)
                return
        ev = self.reading[page] = Event(self.sim)
        if self.free > 0:                   # get_free_block's first step, inline
            self.free -= 1
        else:
            yield from self.get_free_block()
        self.reads += 1
        yield self.read(page)
        del self.reading[page]
        self._insert(page)
        self.access(page)
        ibuf = self.ibuf
        if ibuf is not None and page in ibuf.pending:
            yield from ibuf.merge(page)     # at the read's completion, before the waiters
        ev.succeed()

    def create(self, page: int):
        """Generator: ``buf_page_create`` - a new page in a free frame, no read."""
        if self.resident(page):
            return
        yield from self.get_free_block()
        if self.resident(page):
            self.free += 1
            return
        self.pages_created += 1
        self._insert(page)
        self.access(page)

    def preload(self, pages) -> int:
        """Put clean ``pages`` in free frames outside simulated time, as a buffer pool
        dump loaded at startup leaves them (``innodb_buffer_pool_load_at_startup``);
        returns the pages loaded."""
        n = 0
        for p in pages:
            if self.free == 0:
                break
            if self.resident(p):
                continue
            self.free -= 1
            self._insert(p)
            n += 1
        return n

    def warm_insert(self, page: int) -> bool:
        """Outside simulated time (a warm-up replay, ``server.warmup``): ``page`` enters
        at the midpoint without a read, in a free frame, else in the frame of the first
        replaceable page of the LRU tail's ``BUF_LRU_SEARCH_SCAN_THRESHOLD``, else in
        the LRU-tail page's frame - that page leaves clean, as if a single-page flush
        had written it; returns True then (the caller counts the write, which is not
        simulated)."""
        written = False
        if self.free == 0 and not self.scan_and_free(BUF_LRU_SEARCH_SCAN_THRESHOLD):
            victim = next(self.tail())
            self.flush_list.pop(victim, None)
            self.newest.pop(victim, None)
            self.evict(victim)
            written = True
        self.free -= 1
        self._insert(page)
        return written

    def modify(self, page: int, lsn: int) -> None:
        """A mini-transaction that changed a resident page committed at ``lsn``
        (``buf_flush_note_modification``)."""
        self.write_requests += 1
        if page in self.io_fixed:
            # changed while its write was in flight: dirty again once the write is done
            self.redirty.setdefault(page, lsn)
        elif page not in self.flush_list:
            self.flush_list[page] = lsn
        self.newest[page] = lsn

    def write_complete(self, page: int, evict: bool) -> None:
        """``buf_flush_write_complete``: clean, unfixed; an LRU flush frees the page."""
        self.flush_list.pop(page, None)
        ev = self.io_fixed.pop(page)
        lsn = self.redirty.pop(page, None)
        if lsn is not None:
            self.flush_list[page] = lsn
            ev.succeed()
            return
        self.newest.pop(page, None)
        if evict and self.resident(page):
            self.evict(page)
        ev.succeed()

    def stats(self) -> dict:
        return {"pages_total": self.capacity, "pages_free": self.free,
                "pages_data": self.lru_len(), "pages_dirty": len(self.flush_list),
                "pages_old": len(self.old), "read_requests": self.read_requests,
                "reads": self.reads, "wait_free": self.wait_free,
                "write_requests": self.write_requests, "pages_created": self.pages_created,
                "pages_made_young": self.made_young, "pages_evicted": self.pages_evicted}
