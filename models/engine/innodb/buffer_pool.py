"""The InnoDB buffer pool: 16 KB frames, an LRU list with midpoint insertion, page
reads with O_DIRECT through the Linux block layer, and the asynchronous-I/O slots
read-ahead goes through.

Modelled after MySQL 5.6 ``buf0buf.cc`` / ``buf0lru.cc`` / ``buf0rea.cc`` /
``os0file.cc``:

- ``innodb_buffer_pool_size`` / 16 KB frames (control blocks not counted).
- LRU with a midpoint (``buffer.lru.MidpointLRU``): a page read from disk (by a query
  or by read-ahead) enters at the head of the *old* sublist, which holds ``innodb_old_blocks_pct`` % of the list
  (``buf_LRU_old_adjust_len`` moves the boundary). An old page is made young (moved
  to the head of the list) when it is accessed ``innodb_old_blocks_time`` ms or more
  after its first access; a young page only when it has drifted into the older
  quarter of the young sublist (``buf_page_peek_if_too_old``, by the count of pages
  evicted since it was last made young). A full-table scan's pages are touched once
  within microseconds, stay old, and are evicted first.
- Eviction takes the LRU tail (pages are clean here: a scan only reads). A read-ahead
  page evicted before anyone accessed it counts in ``read_ahead_evicted``
  (``Innodb_buffer_pool_read_ahead_evicted``).
- A miss is a synchronous 16 KB read (``buf_read_page``); a page already being read
  (by read-ahead) is waited for, not read twice.
- Asynchronous reads (read-ahead, warm-up) take a slot of the read aio array
  (``innodb_read_io_threads`` x 256 slots, ``os_aio_init``); when no slot is free the
  submitting thread waits (``os_aio_array_reserve_slot``). Each ``io_submit()``
  carries ``pages_per_submit`` requests: 1 as in stock InnoDB (one iocb per
  ``os_aio`` call), more with the multi-page submission patch (MySQL bug #68659), in
  which case the block layer sees them under one plug and merges neighbours.
- Statistics: read requests, synchronous reads, pages read per page kind (clustered
  leaf / non-leaf, secondary, free, system), read-ahead pages and evictions.

Deliberately not modelled: dirty pages and flushing (nothing is written), the free
list as distinct from the LRU tail, several buffer pool instances, page hash / LRU
mutex contention, the ``BUF_LRU_OLD_MIN_LEN`` special case for tiny pools, the
``innodb_checksum`` CPU of completed reads.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ...block import BlockQueue
from ...checks import at_least
from ...device.request import READ, IORequest
from ...sim import Event, Simulator
from ...units import parse_size
from .buffer.lru import MidpointLRU
from .tablespace import PAGE_SIZE

AIO_SLOTS_PER_THREAD = 256     # 8 * OS_AIO_N_PENDING_IOS_PER_THREAD with native aio


@dataclass(frozen=True)
class BufferPoolConfig:
    """MySQL variables of the buffer pool.

    - ``innodb_buffer_pool_size``: bytes of page frames (``8g``); scaled by
      ``run.scale``.
    - ``innodb_old_blocks_pct``: share of the LRU list that is the old sublist.
    - ``innodb_old_blocks_time``: ms an old page must stay before an access makes it
      young (MySQL's unit is ms).
    - ``innodb_read_io_threads``: read aio threads, 256 slots each.
    """

    innodb_buffer_pool_size: str = "8g"
    innodb_old_blocks_pct: int = 37
    innodb_old_blocks_time: int = 1000
    innodb_read_io_threads: int = 4

    def __post_init__(self) -> None:
        if parse_size(self.innodb_buffer_pool_size, "innodb_buffer_pool_size") < 64 * PAGE_SIZE:
            raise ValueError("innodb_buffer_pool_size: must be at least 1m (64 pages), "
                             f"got {self.innodb_buffer_pool_size!r}")
        if not 5 <= self.innodb_old_blocks_pct <= 95:
            raise ValueError(f"innodb_old_blocks_pct: must be in 5..95, got {self.innodb_old_blocks_pct}")
        at_least(self, 0, "innodb_old_blocks_time")
        if not 1 <= self.innodb_read_io_threads <= 64:
            raise ValueError(f"innodb_read_io_threads: must be in 1..64, got {self.innodb_read_io_threads}")

    @property
    def pool_bytes(self) -> int:
        return parse_size(self.innodb_buffer_pool_size, "innodb_buffer_pool_size")


class BufferPool(MidpointLRU):
    """Frames of one tablespace's pages; reads go to ``queue`` at ``file_offset``."""

    def __init__(self, sim: Simulator, cfg: BufferPoolConfig, queue: BlockQueue,
                 file_offset_bytes: int, page_kind: np.ndarray, scale: float = 1.0,
                 issuer: int = 0) -> None:
        self.sim = sim
        self.cfg = cfg
        self.queue = queue
        self.file_offset = int(file_offset_bytes)
        self.page_kind = page_kind
        self.issuer = issuer
        super().__init__(sim, max(64, int(cfg.pool_bytes * scale) // PAGE_SIZE),
                         cfg.innodb_old_blocks_pct, cfg.innodb_old_blocks_time)
        self.pending: dict[int, Event] = {}
        self.prefetched: set[int] = set()
        # aio slots for asynchronous reads
        self.aio_slots = cfg.innodb_read_io_threads * AIO_SLOTS_PER_THREAD
        self.aio_in_flight = 0
        self.backlog: deque[tuple[int, "_Submit"]] = deque()
        self._refill_scheduled = False
        self._idle_waiters: list[Event] = []
        # statistics
        n_kinds = int(page_kind.max()) + 1 if page_kind.size else 1
        self.read_requests = 0
        self.sync_reads = 0
        self.pending_waits = 0
        self.async_reads = 0
        self.read_ahead_evicted = 0
        self.pages_read_by_kind = np.zeros(max(n_kinds, 6), np.int64)
        self.bytes_read = 0
        self.io_submits = 0

    # -- state -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.young) + len(self.old) + len(self.pending)

    def peek(self, page: int) -> bool:
        """In the pool or being read (``buf_page_peek``)."""
        return page in self.old or page in self.young or page in self.pending

    def _evict_one(self) -> bool:
        victim_list = self.old if self.old else self.young
        if not victim_list:
            return False
        page, _ = victim_list.popitem(last=False)
        self.evictions += 1
        if page in self.prefetched:
            self.prefetched.discard(page)
            if page not in self.first_access:
                self.read_ahead_evicted += 1
        self.first_access.pop(page, None)
        self.young_clock.pop(page, None)
        return True

    def _reserve_frame(self) -> bool:
        while len(self) >= self.capacity:
            if not self._evict_one():
                return False
        return True

    # -- reads -----------------------------------------------------------------------------
    def _bio(self, page: int, on_done) -> IORequest:
        return IORequest(READ, self.file_offset + page * PAGE_SIZE, PAGE_SIZE, on_done,
                         True, False, self.issuer)

    def _count_read(self, page: int) -> None:
        self.pages_read_by_kind[self.page_kind[page]] += 1
        self.bytes_read += PAGE_SIZE

    def fetch(self, page: int) -> Event | None:
        """A read request for ``page``: None if resident, else an Event that fires when
        the page is in the pool (a synchronous read, or a read-ahead in flight)."""
        self.read_requests += 1
        if page in self.old or page in self.young:
            return None
        ev = self.pending.get(page)
        if ev is not None:
            self.pending_waits += 1
            return ev
        self.sync_reads += 1
        self._reserve_frame()
        ev = Event(self.sim)
        self.pending[page] = ev
        self._count_read(page)
        self.io_submits += 1
        # if nr_requests is exhausted the bio waits in the block layer; the thread
        # waits for the page either way
        self.queue.submit(self._bio(page, self._read_done))
        return ev

    def _read_done(self, bio: IORequest) -> None:
        page = (bio.offset_bytes - self.file_offset) // PAGE_SIZE
        ev = self.pending.pop(page)
        self._insert(page)
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
            bios = []
            while backlog and len(bios) < n and backlog[0][1] is call:
                page, _ = backlog.popleft()
                call.left -= 1
                if self.peek(page) or not self._reserve_frame():
                    continue
                self.pending[page] = Event(self.sim)
                self.prefetched.add(page)
                self._count_read(page)
                self.async_reads += 1
                bios.append(self._bio(page, self._async_done))
            if bios:
                self.aio_in_flight += len(bios)
                self.io_submits += 1
                self.queue.submit(bios if len(bios) > 1 else bios[0], plug=len(bios) > 1)
            if call.left == 0:
                call.event.succeed()

    def _async_done(self, bio: IORequest) -> None:
        self.aio_in_flight -= 1
        self._read_done(bio)
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

    # -- statistics -------------------------------------------------------------------
    def stats(self) -> dict:
        req = self.read_requests
        return {
            "bp_pages": self.capacity,
            "bp_read_requests": req,
            "bp_sync_reads": self.sync_reads,
            "bp_pending_waits": self.pending_waits,
            "bp_hit_rate": 1.0 - self.sync_reads / req if req else 0.0,
            "bp_async_reads": self.async_reads,
            "bp_read_ahead_evicted": self.read_ahead_evicted,
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
