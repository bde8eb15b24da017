"""Page reads of one tablespace into the server's buffer pool as a scanning session does
them: synchronous reads of missing pages and the asynchronous reads read-ahead issues
(MySQL 5.6 ``buf0rea.cc``, ``os0file.cc``), for the full scan (``innodb.scan``) and the
read-ahead policies (``innodb.read_ahead``).

The frames, the LRU with midpoint insertion and eviction are the pool's
(``buffer.pool.WritePool``): a read takes a free frame, else frees a clean page from the
LRU tail (``buf_LRU_get_free_block``; a read-only scan always finds one), and the page
enters at the midpoint. Pages are numbered within the tablespace here
(``page_no``); in the pool they are ``space << 32 | page_no``.

- A miss is a synchronous 16 KB read (``buf_read_page``); a page already being read
  (by read-ahead) is waited for, not read twice. With O_DIRECT its bio goes to the
  block layer as an asynchronous read's does (``DataFiles.read_batch`` of one page),
  without the filesystem's ``pread`` path: a data file opened O_DIRECT and only read
  has no cached pages to write first, and the syscall's CPU is not modelled for
  either (the scan reads up to 655 k pages: a simulated process per read would double
  its cost).
- Asynchronous reads take a slot of the read aio array (``innodb_read_io_threads`` x
  256 slots, ``os_aio_init``); when no slot is free the submitting thread waits
  (``os_aio_array_reserve_slot``). Each ``io_submit()`` carries ``pages_per_submit``
  requests: 1 as in stock InnoDB (one iocb per ``os_aio`` call), more with the
  multi-page submission patch (MySQL bug #68659), in which case the block layer sees
  them under one plug and merges neighbours (``DataFiles.read_batch``).
- Statistics: read requests, synchronous reads, pages read per page kind (clustered
  leaf / non-leaf, secondary, free, system), read-ahead pages and the read-ahead pages
  evicted before anyone accessed them (``Innodb_buffer_pool_read_ahead_evicted``).

Deliberately not modelled: the CPU of ``io_submit`` and of completions (the page
checksum), the I/O threads as threads (a completion is handled when the device
completes it), read-ahead of pages other sessions are reading (one scan per tablespace).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ....sim import Event
from ..server.files import SPACE_SHIFT
from ..tablespace import PAGE_SIZE

AIO_SLOTS_PER_THREAD = 256     # 8 * OS_AIO_N_PENDING_IOS_PER_THREAD with native aio
PAGE_NO_MASK = (1 << SPACE_SHIFT) - 1


class TablespaceReads:
    """Reads of tablespace ``space`` (``page_kind``: the kind of each of its pages) into
    ``pool``, from ``files`` (``read_batch(page_ids, on_done)``)."""

    def __init__(self, sim, pool, files, space: int, page_kind: np.ndarray,
                 read_io_threads: int) -> None:
        self.sim = sim
        self.pool = pool
        self.files = files
        self.space = space << SPACE_SHIFT
        self.page_kind = page_kind
        self.pending: dict[int, Event] = {}
        self.prefetched: set[int] = set()
        self.accessed_prefetched: set[int] = set()
        self.aio_slots = read_io_threads * AIO_SLOTS_PER_THREAD
        self.aio_in_flight = 0
        self.backlog: deque[tuple[int, _Submit]] = deque()
        self._refill_scheduled = False
        self._idle_waiters: list[Event] = []
        # statistics
        self.read_requests = 0
        self.sync_reads = 0
        self.pending_waits = 0
        self.async_reads = 0
        self.pages_read_by_kind = np.zeros(max(int(page_kind.max()) + 1 if page_kind.size else 1,
                                               6), np.int64)
        self.bytes_read = 0
        self.io_submits = 0

    # -- state -----------------------------------------------------------------------------
    @property
    def capacity(self) -> int:
        return self.pool.capacity

    @property
    def first_access(self) -> dict:
        """The pool's first-access times, by pool page id (``self.space | page_no``)."""
        return self.pool.first_access

    def __len__(self) -> int:
        return self.pool.lru_len() + len(self.pending)

    def resident(self, page: int) -> bool:
        return self.pool.resident(self.space | page)

    def peek(self, page: int) -> bool:
        """In the pool or being read (``buf_page_peek``)."""
        return page in self.pending or self.pool.resident(self.space | page)

    def recently_used(self, page: int) -> bool:
        return self.pool.recently_used(self.space | page)

    def access(self, page: int) -> bool:
        """The scan uses a resident page; True on its first access."""
        if page in self.prefetched:
            self.accessed_prefetched.add(page)
        return self.pool.access(self.space | page)

    def _reserve_frame(self) -> bool:
        pool = self.pool
        if pool.free > 0:
            pool.free -= 1
            return True
        return pool.scan_and_free(pool.capacity) and self._reserve_frame()

    def _count_read(self, page: int) -> None:
        self.pages_read_by_kind[self.page_kind[page]] += 1
        self.bytes_read += PAGE_SIZE

    # -- reads -----------------------------------------------------------------------------
    def fetch(self, page: int) -> Event | None:
        """A read request for ``page``: None if resident, else an Event that fires when
        the page is in the pool (a synchronous read, or a read-ahead in flight)."""
        self.read_requests += 1
        if self.pool.resident(self.space | page):
            return None
        ev = self.pending.get(page)
        if ev is not None:
            self.pending_waits += 1
            return ev
        self.sync_reads += 1
        self.pool.reads += 1
        self._reserve_frame()
        ev = self.pending[page] = Event(self.sim)
        self._count_read(page)
        self.io_submits += 1
        self.files.read_batch((self.space | page,), self._sync_done)
        return ev

    def _sync_done(self, page_id: int) -> None:
        self._read_done(page_id & PAGE_NO_MASK)

    def _read_done(self, page: int) -> None:
        ev = self.pending.pop(page)
        self.pool._insert(self.space | page)
        ev.succeed(page)

    def read_async(self, pages, pages_per_submit: int = 1) -> tuple[int, Event | None]:
        """Asynchronous reads of the pages not already in the pool or being read, in
        the given order; ``pages_per_submit`` requests per ``io_submit()``. Returns the
        number of reads requested and None when every one was submitted, else an
        Event the submitting thread waits on (no free aio slot) that fires once the
        last one is submitted."""
        todo = [p for p in pages if not self.peek(p)]
        if not todo:
            return 0, None
        call = _Submit(len(todo), Event(self.sim), max(1, int(pages_per_submit)))
        for p in todo:
            self.backlog.append((int(p), call))
        self._submit_backlog()
        return len(todo), (None if call.left == 0 else call.event)

    def _submit_backlog(self) -> None:
        backlog = self.backlog
        while backlog and self.aio_in_flight < self.aio_slots:
            call = backlog[0][1]
            n = min(call.per_submit, self.aio_slots - self.aio_in_flight)
            batch = []
            while backlog and len(batch) < n and backlog[0][1] is call:
                page, _ = backlog.popleft()
                call.left -= 1
                if self.peek(page) or not self._reserve_frame():
                    continue
                self.pending[page] = Event(self.sim)
                self.prefetched.add(page)
                self._count_read(page)
                self.async_reads += 1
                batch.append(self.space | page)
            if batch:
                self.aio_in_flight += len(batch)
                self.io_submits += 1
                self.files.read_batch(batch, self._async_done)
            if call.left == 0:
                call.event.succeed()

    def _async_done(self, page_id: int) -> None:
        self.aio_in_flight -= 1
        self._read_done(page_id & PAGE_NO_MASK)
        if self.backlog and not self._refill_scheduled:
            # every bio of a merged request completes at this instant: refill once
            self._refill_scheduled = True
            self.sim.after(0, self._refill)
        elif self.aio_in_flight == 0 and not self.backlog and self._idle_waiters:
            waiters, self._idle_waiters = self._idle_waiters, []
            for ev in waiters:
                ev.succeed()

    def idle_event(self) -> Event:
        """An Event that fires when no asynchronous read is in flight or waiting."""
        ev = Event(self.sim)
        if self.aio_in_flight == 0 and not self.backlog:
            ev.succeed()
        else:
            self._idle_waiters.append(ev)
        return ev

    def _refill(self, _arg=None) -> None:
        self._refill_scheduled = False
        self._submit_backlog()

    # -- statistics ------------------------------------------------------------------------
    def stats(self) -> dict:
        req = self.read_requests
        evicted = sum(1 for p in self.prefetched
                      if p not in self.accessed_prefetched and not self.resident(p))
        return {
            "bp_pages": self.capacity,
            "bp_read_requests": req,
            "bp_sync_reads": self.sync_reads,
            "bp_pending_waits": self.pending_waits,
            "bp_hit_rate": 1.0 - self.sync_reads / req if req else 0.0,
            "bp_async_reads": self.async_reads,
            "bp_read_ahead_evicted": evicted,
            "bp_io_submits": self.io_submits,
            "bp_bytes_read": self.bytes_read,
        }


class _Submit:
    """One read_async call: requests left to submit, the Event its thread waits on."""

    __slots__ = ("left", "event", "per_submit")

    def __init__(self, left: int, event: Event, per_submit: int) -> None:
        self.left = left
        self.event = event
        self.per_submit = per_submit
