"""Writing dirty pages (``buf0flu.cc``): flush-list batches, LRU batches, the single-page
flush of a user thread, neighbours, the write-ahead rule, doublewrite, data-file sync.

- **Flush-list batch** (``buf_flush_list(min_n, lsn_limit)``): from the oldest end of
  the flush list, pages whose ``oldest_modification`` is below ``lsn_limit`` until
  ``min_n`` are taken (neighbours count). One flush-list batch runs at a time; a
  caller that finds one running gets None and may wait for its end
  (``buf_flush_wait_batch_end``).
- **LRU batch** (5.6 ``buf_flush_LRU_list_batch``, the page cleaner's
  ``buf_flush_LRU_tail``): up to ``innodb_lru_scan_depth`` pages from the LRU tail
  while the free list is shorter than that: clean pages are freed, dirty ones flushed
  and freed when their write completes.
- **A user thread without a free frame**: before 5.6 it runs an LRU batch itself
  (``buf_flush_free_margin``: the ``BUF_FLUSH_FREE_BLOCK_MARGIN`` +
  ``BUF_FLUSH_EXTRA_MARGIN`` = 186 pages at the tail) and waits for it; in 5.6 it does
  a **single-page flush** (``buf_flush_single_page_from_LRU``): it walks the LRU from its tail: a clean page is freed; the first
  dirty, unfixed one is written alone - doublewrite single-page slot and ibdata1 sync,
  the page, its tablespace's sync - and freed.
- **Neighbours** (``buf_flush_try_neighbors``): with ``innodb_flush_neighbors=1`` the
  dirty pages contiguous with the flushed one inside its 64-page area
  (``BUF_READ_AHEAD_AREA``), with 2 every dirty page of the area; an LRU flush takes
  only neighbours in the old sublist. Before 5.6 there is no variable and the whole
  area is flushed (2); ``0`` turns neighbours off. Percona names the rule
  ``innodb_flush_neighbor_pages`` (area / cont / none); ``InnoDBServerConfig.
  flush_neighbors`` resolves it to 2 / 1 / 0, which is what ``flush_neighbors`` gets.
- **Write-ahead rule** (``buf_flush_write_block_low``): the redo log is flushed up to
  a page's newest modification (a doublewrite chunk's newest) before it is written.
- **Writes**: with doublewrite the batch goes through the buffer in chunks of its
  capacity (``dblwr.Doublewrite``). A page is io-fixed when its chunk is taken
  (``buf_flush_page`` fixes it as it enters the buffer), not when the batch is chosen:
  user threads latch and change the pages still waiting their turn, and a page found
  clean or already being written when its turn comes is skipped. The copies are
  written and synced, then the chunk's pages written home, all submitted at once
  (asynchronous I/O: the block layer sees them together and merges neighbours), their
  completions awaited and their tablespaces synced before the buffer is reused (every
  chunk: ``fil_flush_file_spaces`` in 5.1 / 5.5 ``buf_flush_buffered_writes``, in 5.6
  ``buf_dblwr_update``). Without doublewrite, on native AIO
  (5.5 on) each page is fixed as its own write is submitted (one ``io_submit`` each):
  the flushing thread sleeps while the write I/O threads' slots
  (``innodb_write_io_threads`` x 256) or the block queue's requests (``nr_requests``)
  are all taken, so a batch holds at most that many pages io-fixed, not the whole
  batch, and at the end of the batch every tablespace written is synced
  (``buf_flush_sync_datafiles`` / ``buf_dblwr_sync_datafiles``), except with
  ``innodb_flush_method=O_DIRECT_NO_FSYNC`` (``nosync`` syncs them too); on simulated
  AIO (the 5.1 code bases: built-in, Plugin 1.0, XtraDB 5.1) chunks of the write
  slots are fixed as the doublewrite chunks are, and nothing is synced after the
  batch (``buf_flush_buffered_writes`` only wakes the simulated AIO threads): the
  data files are synced at checkpoints.

Deliberately not modelled: several buffer pool instances flushed in parallel, the
``buf_pool->mutex`` / flush-list mutex, a flushed page's checksum CPU, the I/O threads'
own scheduling (a write completes when the filesystem says so).
"""
from __future__ import annotations

from functools import partial
from itertools import filterfalse, islice

from ....sim import Event, all_of
from .pool import WritePool

BUF_READ_AHEAD_AREA = 64
# BUF_FLUSH_FREE_BLOCK_MARGIN (5 + BUF_READ_AHEAD_AREA) + BUF_FLUSH_EXTRA_MARGIN (1/4 + 100)
BUF_FLUSH_FREE_MARGIN_PAGES = (5 + BUF_READ_AHEAD_AREA) + (5 + BUF_READ_AHEAD_AREA) // 4 + 100
AIO_SLOTS_PER_THREAD = 256
BUF_LRU_MIN_LEN = 256           # buf0lru.h: the LRU list is not flushed or freed below it


class Flusher:
    """``files``: the server's ``DataFiles``; ``redo``: its ``RedoLog``; ``dblwr``: a
    ``Doublewrite`` or None (``innodb_doublewrite=0``); ``native_aio``: Linux native
    AIO (``innodb_use_native_aio``, MySQL 5.5 on), else InnoDB's simulated AIO."""

    def __init__(self, sim, pool: WritePool, files, redo, dblwr, flush_neighbors: int,
                 version: str, write_io_threads: int, data_fsync: bool = True,
                 native_aio: bool = True) -> None:
        self.sim = sim
        self.pool = pool
        self.files = files
        self.redo = redo
        self.dblwr = dblwr
        self.version = version
        self.neighbors = flush_neighbors        # 0 | 1 | 2 (InnoDBServerConfig.flush_neighbors)
        self.write_slots = write_io_threads * AIO_SLOTS_PER_THREAD
        self.data_fsync = data_fsync
        self.native_aio = native_aio
        self.list_batch_end: Event | None = None
        self.lru_batch_end: Event | None = None
        pool.flusher = self
        # counters
        self.pages_flushed = 0         # Innodb_buffer_pool_pages_flushed
        self.flushed_list = 0
        # of flushed_list, the pages of user threads' own batches: 5.1 / 5.5's preflush
        # past the async point and the batches at the sync point (log_checkpoint.py)
        self.flushed_preflush = 0
        self.flushed_sync = 0
        self.flushed_lru = 0
        self.flushed_single = 0
        self.flushed_neighbors = 0
        self.flushed_system = 0        # pages of the system tablespace (undo)
        self.list_batches = 0
        self.lru_batches = 0
        self.single_flushes = 0
        self.data_fsyncs = 0
        self.io_fixed_max = 0          # the most pages io-fixed at once, as a batch fixed one

    # -- choosing pages --------------------------------------------------------------------
    def _ready(self, page: int, lru: bool) -> bool:
        """``buf_flush_ready_for_flush`` (+ the old-sublist rule of an LRU neighbour)."""
        pool = self.pool
        return (page in pool.flush_list and page not in pool.io_fixed
                and (not lru or page in pool.old))

    def _with_neighbors(self, page: int, lru: bool, chosen: dict) -> None:
        """``page`` and its neighbours into ``chosen`` (page -> True for a neighbour)."""
        chosen[page] = False
        if not self.neighbors:
            return
        low = page - page % BUF_READ_AHEAD_AREA
        high = low + BUF_READ_AHEAD_AREA
        if self.neighbors == 1:
            lo = page
            while lo - 1 >= low and self._ready(lo - 1, lru):
                lo -= 1
            hi = page + 1
            while hi < high and self._ready(hi, lru):
                hi += 1
            low, high = lo, hi
        for p in range(low, high):
            if p != page and p not in chosen and self._ready(p, lru):
                chosen[p] = True

    # -- batches ----------------------------------------------------------------------------
    def flush_list_batch(self, min_n: int, lsn_limit: int, by: str = ""):
        """Generator: ``buf_flush_list``; returns pages flushed, None if a flush-list
        batch was already running. ``by`` a user thread's batch: ``preflush`` (at the
        async point) or ``sync`` (at the sync point), counted apart as it writes; the
        background thread's batches pass nothing."""
        if self.list_batch_end is not None:
            return None
        pool = self.pool
        chosen: dict[int, bool] = {}
        io_fixed = pool.io_fixed
        for page, om in pool.flush_list.items():
            if len(chosen) >= min_n or om >= lsn_limit:
                break
            if page in io_fixed or page in chosen:
                continue
            self._with_neighbors(page, False, chosen)
        if not chosen:
            return 0
        ev = self.list_batch_end = Event(self.sim)
        self.list_batches += 1
        n = yield from self._write(chosen, False, by)
        self.list_batch_end = None
        ev.succeed()
        return n

    def wait_list_batch(self):
        """Generator: ``buf_flush_wait_batch_end(BUF_FLUSH_LIST)``."""
        if self.list_batch_end is not None:
            yield self.list_batch_end

    def lru_tail(self, depth: int):
        """Generator: the page cleaner's LRU batch; returns pages flushed."""
        if self.lru_batch_end is not None:
            return 0
        pool = self.pool
        min_len = self.version == "5.6"
        chosen: dict[int, bool] = {}
        for page in list(islice(pool.tail(), depth)):
            # 5.6's buf_flush_LRU_list_batch also stops at BUF_LRU_MIN_LEN pages on the
            # LRU list (the pages being written leave it when done)
            if (pool.free >= depth or len(chosen) >= depth
                    or (min_len and pool.lru_len() - len(chosen) <= BUF_LRU_MIN_LEN)):
                break
            if page in chosen or page in pool.io_fixed or not pool.resident(page):
                continue
            if page not in pool.flush_list:
                pool.evict(page)
            else:
                self._with_neighbors(page, True, chosen)
        if not chosen:
            return 0
        ev = self.lru_batch_end = Event(self.sim)
        self.lru_batches += 1
        n = yield from self._write(chosen, True)
        self.lru_batch_end = None
        ev.succeed()
        return n

    def free_margin(self):
        """Generator: 5.1 / 5.5 ``buf_flush_free_margin``, run by a user thread that found
        no free frame: an LRU batch over the ``BUF_FLUSH_FREE_BLOCK_MARGIN`` +
        ``BUF_FLUSH_EXTRA_MARGIN`` pages at the tail (clean ones freed, dirty ones
        written and freed), waited for; a batch already running is waited for."""
        if self.lru_batch_end is not None:
            yield self.lru_batch_end
            return True
        n = yield from self.lru_tail(BUF_FLUSH_FREE_MARGIN_PAGES)
        return n > 0

    def flush_for_free_frame(self):
        """Generator: what a user thread without a free frame does, per version."""
        if self.version == "5.6":
            return (yield from self.single_page_flush())
        return (yield from self.free_margin())

    def single_page_flush(self):
        """Generator: ``buf_flush_single_page_from_LRU``; returns True if a frame was freed
        or a page flushed."""
        pool = self.pool
        victim = None
        for page in filterfalse(pool.io_fixed.__contains__, pool.tail()):
            if page not in pool.flush_list:
                pool.evict(page)
                return True
            victim = page
            break
        if victim is None:
            return False
        self.single_flushes += 1
        pool.io_fixed[victim] = Event(self.sim)
        yield from self._wal([victim])
        if self.dblwr is not None:
            yield from self.dblwr.write_single()
        yield self.files.write(victim)
        self._done(victim, True)
        self.flushed_single += 1
        if self.data_fsync:
            self.data_fsyncs += 1
            yield self.files.fsync(victim >> 32)
        return True

    # -- writing ----------------------------------------------------------------------------
    def _wal(self, pages):
        newest = self.pool.newest
        lsn = max(newest[p] for p in pages)
        if self.redo.flushed_lsn < lsn:
            yield from self.redo.write_up_to(lsn, True, from_trx=False)

    def _done(self, page: int, evict: bool, _value=None) -> None:
        self.pool.write_complete(page, evict)
        self.pages_flushed += 1
        if page >> 32 == 0:
            self.flushed_system += 1

    def _write(self, pages: dict[int, bool], evict: bool, by: str = ""):
        """Generator: write ``pages`` (page -> chosen as a neighbour); returns the number
        written, then syncs the tablespaces written (``buf_flush_common`` ->
        ``buf_dblwr_flush_buffered_writes`` / ``buf_dblwr_sync_datafiles``).

        A page is io-fixed only when its own turn comes (``buf_flush_page`` fixes it just
        before ``buf_flush_write_block_low`` copies it into the doublewrite buffer or
        submits it), so a page still waiting can be latched and changed by user threads
        meanwhile; the write-ahead rule is kept before each write (``log_write_up_to``
        to the page's newest change). A page that is clean (another flush wrote it) or
        being written by another batch when its turn comes is skipped (and not counted
        in ``flushed_neighbors``)."""
        if self.dblwr is not None:          # each chunk syncs its own tablespaces
            return (yield from self._write_chunks(pages, evict, by, self.dblwr.batch_pages))
        if not self.native_aio:
            # the 5.1 code bases: buf_flush_buffered_writes without doublewrite only
            # wakes the simulated AIO threads - no fil_flush_file_spaces after the batch
            return (yield from self._write_chunks(pages, evict, by, self.write_slots))
        spaces: set[int] = set()
        written = yield from self._write_aio(pages, evict, by, spaces)
        yield from self._sync_spaces(spaces)     # 5.5 / 5.6 buf_flush_sync_datafiles
        return written

    def _sync_spaces(self, spaces: set[int]):
        """Generator: ``fil_flush_file_spaces(FIL_TABLESPACE)`` over the tablespaces
        written (none with ``O_DIRECT_NO_FSYNC``)."""
        if self.data_fsync:
            files = self.files
            for sp in files.distinct_spaces(spaces):
                self.data_fsyncs += 1
                yield files.fsync(sp)

    def _take(self, p: int, pages: dict[int, bool]) -> bool:
        """``buf_flush_page``: io-fix ``p`` if it is still dirty and not being written."""
        io_fixed = self.pool.io_fixed
        if p not in self.pool.flush_list or p in io_fixed:
            return False
        io_fixed[p] = Event(self.sim)
        if len(io_fixed) > self.io_fixed_max:
            self.io_fixed_max = len(io_fixed)
        if pages[p]:
            self.flushed_neighbors += 1
        return True

    def _count(self, n: int, evict: bool, by: str) -> None:
        """Pages of a batch written (counted as they complete: the time series)."""
        if evict:
            self.flushed_lru += n
        else:
            self.flushed_list += n
            if by == "preflush":
                self.flushed_preflush += n
            elif by == "sync":
                self.flushed_sync += n

    def _write_chunks(self, pages, evict, by, chunk: int):
        """With doublewrite: ``buf_dblwr_add_to_batch`` fixes pages as they are copied
        into the buffer; a full buffer (``chunk`` = ``batch_pages``) is written and
        synced, its pages submitted at once (the block layer merges neighbours), and the
        next page waits until all of them are written and their tablespaces synced
        (5.1 / 5.5 ``buf_flush_buffered_writes``: ``os_aio_wait_until_no_pending_writes``
        then ``fil_flush_file_spaces``; 5.6: ``buf_dblwr_update`` at the chunk's last
        completion, before ``batch_running`` is cleared). Without
        doublewrite on simulated AIO (5.1, the InnoDB Plugin 1.0) ``os_aio`` only queues a
        page in a free slot of the write array (``chunk``: the write threads' slots) for
        the I/O handler threads, so pages are fixed as fast as slots are free."""
        files, sim, dblwr = self.files, self.sim, self.dblwr
        written = 0
        todo = iter(pages)
        while True:
            part = []
            for p in todo:
                if self._take(p, pages):
                    part.append(p)
                    if len(part) == chunk:
                        break
            if not part:
                return written
            yield from self._wal(part)
            if dblwr is not None:
                yield from dblwr.write_batch(len(part))
            evs = []
            for p in part:
                ev = files.write(p)
                ev.add_callback(partial(self._done, p, evict))
                evs.append(ev)
            yield all_of(sim, evs)
            written += len(part)
            self._count(len(part), evict, by)
            if dblwr is not None:
                yield from self._sync_spaces({p >> 32 for p in part})

    def _write_aio(self, pages, evict, by, spaces):
        """Without doublewrite, native AIO: ``buf_flush_write_block_low`` submits each
        page on its own as it is fixed (``fil_io`` -> ``os_aio``: one ``io_submit`` per
        page), so a page is io-fixed only once its write can be submitted. The submitting thread
        sleeps while the AIO array has no free slot (``os_aio_array_reserve_slot``:
        ``innodb_write_io_threads`` x 256) or the page's block queue no free request
        (``io_submit`` -> ``get_request_wait``: ``nr_requests``, a blk-mq queue's tags),
        and takes the next page when one of its writes completes. The batch then waits
        for its writes (``os_aio_wait_until_no_pending_writes``)."""
        files, sim = self.files, self.sim
        st = {"n": 0, "q": {}, "wake": None}          # writes in flight, per queue

        def done(p, q, _value=None):
            self._done(p, evict)
            st["n"] -= 1
            st["q"][q] -= 1
            self._count(1, evict, by)
            wake = st["wake"]
            if wake is not None:
                st["wake"] = None
                wake.succeed()

        written = 0
        for p in pages:
            q = files.files[p >> 32].fs.queue
            while st["n"] >= self.write_slots or _no_request(q, st["q"].get(q, 0)):
                st["wake"] = Event(sim)
                yield st["wake"]
            if not self._take(p, pages):
                continue
            yield from self._wal((p,))
            st["n"] += 1
            st["q"][q] = st["q"].get(q, 0) + 1
            files.write(p).add_callback(partial(done, p, q))
            spaces.add(p >> 32)
            written += 1
        while st["n"]:
            st["wake"] = Event(sim)
            yield st["wake"]
        return written

    def stats(self) -> dict:
        return {"pages_flushed": self.pages_flushed, "flushed_list": self.flushed_list,
                "flushed_preflush": self.flushed_preflush, "flushed_sync": self.flushed_sync,
                "flushed_lru": self.flushed_lru, "flushed_single": self.flushed_single,
                "flushed_neighbors": self.flushed_neighbors,
                "flushed_system": self.flushed_system, "list_batches": self.list_batches,
                "lru_batches": self.lru_batches, "single_flushes": self.single_flushes,
                "io_fixed_max": self.io_fixed_max}


def _no_request(q, own: int) -> bool:
    """``io_submit`` of one more write to block queue ``q`` would sleep for a request
    until one of the submitter's ``own`` writes in flight there completes:
    ``nr_requests`` are allocated from the list an O_DIRECT write takes one from (writes;
    2.6.30+: sync) - a blk-mq queue: the tags of the hctx of thread 0, the data-file
    writes' issuer -, or its own writes not yet queued would take the rest.
    With none of its own in flight it submits (the write waits in the block queue, its
    page fixed)."""
    n = q.nr_requests
    if n is None or not own:          # none of its own to wait for: it sleeps in the queue
        return False
    return max(q.requests_held(0), own) >= n
