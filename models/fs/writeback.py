"""Page writeback: turning dirty pages into write bios, completing them, waiting for them,
and the per-filesystem flusher thread.

Modelled (Linux mm/page-writeback.c ``write_cache_pages``, fs/fs-writeback.c, the bdi
flusher of 2.6.32+):

- ``write_range`` = ``filemap_fdatawrite_range``: the dirty pages of a range become
  ``WRITEBACK`` and go to the block layer as bios of physically contiguous pages (at
  most 256 pages = 1 MB, ``BIO_MAX_PAGES``), submitted under one plug. With
  ``WB_SYNC_ALL`` (fsync, and ``sync_file_range(WRITE)`` before 4.20) a page that is
  dirty *and* already under writeback is waited for and then written again; with
  ``WB_SYNC_NONE`` it is skipped. Delayed-allocation pages get their blocks here
  (the filesystem policy allocates and journals the mapping); the policy may also
  add neighbouring dirty pages to the batch (xfs writes clusters of up to 64).
- Submission blocks when the request queue is full (``nr_requests``): the writer -
  the flusher, or a thread inside fsync / sync_file_range - sleeps until its bios are
  queued.
- Completion (``end_page_writeback``) clears ``WRITEBACK`` and stamps the flush epoch
  the data reached the device at (see ``Filesystem.crash_state``), lets the policy
  convert unwritten extents / update the on-disk size, and wakes waiters.
- The flusher: wakes every ``dirty_writeback_centisecs`` or when kicked, writes inodes
  whose dirty data is older than ``dirty_expire_centisecs`` (an inode redirtied while
  it was being written counts as dirtied then, ``redirty_tail``: a file rewritten
  without pause is written back once per expiry period, not at every wake-up), and
  while dirty memory
  is above ``dirty_background_ratio`` writes dirty inodes in chunks of 1024 pages
  (``MAX_WRITEBACK_PAGES``), oldest-dirtied inode first. It does not sleep in a full
  request queue: while the queue is congested it waits 100 ms and looks again
  (``wbc->nonblocking``, ``congestion_wait``), so a journal commit or an fsync that
  keeps the queue full goes first. Its sweeps of a file are ``range_cyclic``: each
  resumes at the file's ``writeback_index`` (where the previous one stopped) and
  wraps round to page 0, so a file rewritten in a loop is written behind the writer,
  not always from its start. ``write_range`` (fsync, ``sync_file_range``) writes its
  range in file order and leaves ``writeback_index`` alone (Linux also moves it after
  a write of the whole file, ``range_whole``: not modelled).

Deliberately not modelled: ``nr_to_write`` budgets across superblocks, the
``wb_writeback`` livelock-avoidance tagging (``PAGECACHE_TAG_TOWRITE``), per-bio
completion batching, writeback of metadata buffers other than the journal's
checkpoint (see ``journal.py``).
"""
from __future__ import annotations

import numpy as np

from ..device.request import READ, WRITE, IORequest
from ..sim import Event, all_of
from .file import DELALLOC, DIRTY, WRITEBACK

NOT_ON_DEVICE = np.iinfo(np.int32).max
BIO_MAX_PAGES = 256
MAX_WRITEBACK_PAGES = 1024
CONGESTION_WAIT_NS = 100_000_000    # congestion_wait(BLK_RW_ASYNC, HZ/10)


def runs(pages: np.ndarray, blocks: np.ndarray, max_pages: int = BIO_MAX_PAGES):
    """(start, end) index pairs of runs of consecutive entries that are contiguous both
    in the file and on the device, in the given order (which need not be sorted)."""
    n = int(pages.size)
    if n == 0:
        return []
    if (n <= max_pages and int(pages[-1]) - int(pages[0]) == n - 1
            and int(blocks[-1]) - int(blocks[0]) == n - 1
            and (n < 3 or bool(((np.diff(blocks) == 1) & (np.diff(pages) == 1)).all()))):
        return [(0, n)]
    brk = np.flatnonzero((np.diff(pages) != 1) | (np.diff(blocks) != 1)) + 1
    bounds = np.concatenate(([0], brk, [n])).tolist()
    out = []
    for s, e in zip(bounds[:-1], bounds[1:]):
        while e - s > max_pages:
            out.append((s, s + max_pages))
            s += max_pages
        out.append((s, e))
    return out


class Writeback:
    def __init__(self, fs) -> None:
        self.fs = fs
        self.sim = fs.sim
        self.cache = fs.cache
        self.queue = fs.queue
        self.events: dict[int, Event] = {}
        self.next_id = 1
        self.pages_written = 0
        self.bios_written = 0
        self.pages_read = 0
        self.congestion_waits = 0
        self._wake: Event = Event(self.sim)
        self._timer_round = 0
        self.flusher = self.sim.spawn(self._flusher(), f"flush-{fs.name}")

    # -- writing -------------------------------------------------------------------------
    def write_range(self, f, p0: int, p1: int, sync_all: bool, issuer: int = 0):
        """Generator: ``filemap_fdatawrite_range`` of pages [p0, p1)."""
        while True:
            dirty = f.pages_with(DIRTY, p0, p1)
            if dirty.size == 0:
                return
            busy = dirty[(f.state[dirty] & WRITEBACK) != 0]
            if busy.size and sync_all:
                yield from self.wait_pages(f, busy)
                continue
            if busy.size:
                dirty = dirty[(f.state[dirty] & WRITEBACK) == 0]
            break
        if dirty.size:
            yield from self.write_pages(f, dirty, sync_all, issuer)

    def write_pages(self, f, pages: np.ndarray, sync: bool, issuer: int = 0):
        """Generator: start writeback of ``pages`` (dirty, not under writeback)."""
        fs = self.fs
        policy = fs.policy
        pages = policy.cluster(fs, f, pages)
        st = f.state
        if pages.size == 1 and not policy.cow and not st[pages[0]] & DELALLOC:
            # one page (ext3's ordered data is written a buffer at a time): scalars
            p = int(pages[0])
            st[p] = (st[p] & ~np.uint8(DIRTY)) | np.uint8(WRITEBACK)
            n = 1
            block = int(f.block[p])
            spans = ((p, 1, block),)
        else:
            delalloc = pages[(st[pages] & DELALLOC) != 0]
            if delalloc.size or policy.cow:
                yield from policy.allocate_on_writeback(fs, f, pages if policy.cow else delalloc)
                st = f.state
                pages = pages[(st[pages] & (DIRTY | WRITEBACK)) == DIRTY]
            n = int(pages.size)
            if n == 0:
                return
            st[pages] = (st[pages] & ~np.uint8(DIRTY)) | np.uint8(WRITEBACK)
            p = int(pages[0])
            blocks = f.block[pages]
            spans = [(int(pages[s]), e - s, int(blocks[s])) for s, e in runs(pages, blocks)]
        f.nr_dirty -= n
        if f.nr_dirty == 0:
            f.dirtied_ns = -1
        f.note_wb(p, int(pages[-1]) + 1)
        f.nr_wb += n
        self.cache.nr_dirty -= n
        self.cache.nr_writeback += n
        bios = []
        events = self.events
        for p0, k, block in spans:
            wid = self.next_id
            self.next_id += 1
            if k == 1:
                f.wb[p0] = wid
            else:
                f.wb[p0:p0 + k] = wid
            events[wid] = Event(self.sim)
            bio = IORequest(WRITE, block * 4096, k * 4096, self._written, sync, False, issuer)
            bio.tag = (f, p0, k, wid)
            bios.append(bio)
        self.pages_written += n
        self.bios_written += len(bios)
        if fs.cfg.bio_ns:
            yield fs.cfg.bio_ns * len(bios)
        gate = self.queue.submit(bios, plug=len(bios) > 1)
        if gate is not None:
            fs.stats_blocked_submits += 1
            yield gate

    def _written(self, bio: IORequest) -> None:
        f, p0, n, wid = bio.tag
        fs = self.fs
        if n == 1:
            st = f.state
            s = int(st[p0]) & ~WRITEBACK
            st[p0] = s
            if not s & DIRTY:
                f.wepoch[p0] = -1 if bio.fua else fs.flush_epoch
        else:
            sl = slice(p0, p0 + n)
            st = f.state[sl]
            st &= ~np.uint8(WRITEBACK)
            clean = (st & DIRTY) == 0
            we = f.wepoch[sl]
            we[clean] = -1 if bio.fua else fs.flush_epoch
        self.cache.nr_writeback -= n
        f.nr_wb -= n
        fs.policy.end_io(fs, f, p0, n)
        self.events.pop(wid).succeed()
        self.cache.writeback_done()

    # -- reading -------------------------------------------------------------------------
    def read_pages(self, f, pages: np.ndarray, issuer: int = 0, sync: bool = True):
        """Start reads of ``pages`` (not cached, with a written block); returns the
        events of the bios. Pages are marked cached when their bio completes."""
        blocks = f.block[pages]
        bios, evs = [], []
        for s, e in runs(pages, blocks):
            rid = self.next_id
            self.next_id += 1
            f.wb[pages[s:e]] = rid
            ev = Event(self.sim)
            self.events[rid] = ev
            evs.append(ev)
            bio = IORequest(READ, int(blocks[s]) * 4096, (e - s) * 4096, self._read_done,
                            sync, False, issuer)
            bio.tag = (f, int(pages[s]), e - s, rid)
            bios.append(bio)
        self.pages_read += int(pages.size)
        gate = self.queue.submit(bios, plug=len(bios) > 1)
        return bios, evs, gate

    def _read_done(self, bio: IORequest) -> None:
        f, p0, n, rid = bio.tag
        self.fs.mark_cached(f, np.arange(p0, p0 + n))
        self.events.pop(rid).succeed()

    # -- waiting -------------------------------------------------------------------------
    def pending_events(self, f, pages: np.ndarray) -> list[Event]:
        ids = sorted(set(f.wb[pages].tolist()))
        ev = self.events
        return [ev[i] for i in ids if i in ev]

    def wait_pages(self, f, pages: np.ndarray):
        """Generator: wait until the writeback of ``pages`` (those under it) completes."""
        busy = pages[(f.state[pages] & WRITEBACK) != 0]
        if busy.size == 0:
            return
        yield from self.fs.wait(all_of(self.sim, self.pending_events(f, busy)))

    def wait_range(self, f, p0: int, p1: int):
        """Generator: ``filemap_fdatawait_range`` of pages [p0, p1)."""
        yield from self.wait_pages(f, f.pages_with(WRITEBACK, p0, p1))

    # -- the flusher ---------------------------------------------------------------------
    def kick(self) -> None:
        if not self._wake.triggered:
            self._wake.succeed()

    def _timer(self, round_no: int) -> None:
        if round_no == self._timer_round:
            self.kick()

    def _flusher(self):
        cfg = self.cache.cfg
        period = cfg.dirty_writeback_centisecs * 10_000_000
        expire = cfg.dirty_expire_centisecs * 10_000_000
        fs = self.fs
        while True:
            self._timer_round += 1
            self.sim.after(period, self._timer, self._timer_round)
            yield self._wake
            self._wake = Event(self.sim)
            if fs.policy.own_flusher:
                fs.policy.flusher_wakeup(fs)
                continue
            now = self.sim.now_ns
            # expired inodes first (wb_check_old_data_flush), then background writeback
            for f in sorted((f for f in fs.files.values() if f.nr_dirty and
                             0 <= f.dirtied_ns <= now - expire), key=lambda f: f.dirtied_ns):
                yield from self._write_chunks(f, None)
                if f.nr_dirty:
                    # redirtied while being written (redirty_tail): expires anew
                    f.dirtied_ns = self.sim.now_ns
            while self.cache.over_background():
                progress = False
                for f in sorted((f for f in fs.files.values() if f.nr_dirty),
                                key=lambda f: f.dirtied_ns):
                    if (yield from self._write_chunks(f, MAX_WRITEBACK_PAGES)):
                        progress = True
                    if not self.cache.over_background():
                        break
                if not progress:
                    break
            yield from fs.policy.flusher_metadata(fs)

    def _write_chunks(self, f, limit: int | None):
        """One ``range_cyclic`` sweep over ``f`` (``write_cache_pages``): from its
        ``writeback_index`` to the end of the file, then wrapping round from page 0 up to
        where it started, write its dirty pages (not under writeback) in file order, in
        chunks of ``MAX_WRITEBACK_PAGES``, ``limit`` pages at most (the sweep may wrap
        within them). ``writeback_index`` is left after the last page written, so the
        next sweep resumes there. Pages dirtied behind the sweep while it sleeps wait
        for the next one. Background writeback is non-blocking: while the queue is
        congested it waits ``CONGESTION_WAIT_NS`` (``congestion_wait``) instead of
        queueing more."""
        wrote = cycled = False
        first = cursor = f.writeback_index
        end = f.cap
        budget = MAX_WRITEBACK_PAGES if limit is None else limit
        while True:
            while self.queue.congested():
                self.congestion_waits += 1
                yield CONGESTION_WAIT_NS
            dirty = f.pages_with(DIRTY, cursor, end)
            dirty = dirty[(f.state[dirty] & WRITEBACK) == 0]
            if dirty.size == 0:
                if first == 0 or cycled:
                    return wrote
                cursor, end, cycled = 0, first, True    # wrap round
                continue
            chunk = dirty[:budget]
            cursor = int(chunk[-1]) + 1
            f.writeback_index = cursor
            yield from self.write_pages(f, chunk, False)
            wrote = True
            if limit is not None:
                budget -= int(chunk.size)
                if budget <= 0:
                    return wrote
