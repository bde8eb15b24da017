"""A mounted Linux filesystem over one block queue, with the page cache above it.

Public API (every operation is called from a simulated thread and returns an
``Event`` to ``yield``; its value is the byte count for reads/writes)::

    fs = Filesystem(sim, FsConfig(type="ext4"), queue, cache=None, name=None)
    f = fs.create("ib_logfile0", size_bytes=0, preallocate="none")   # instant setup
    f = fs.open("ib_logfile0")
    yield fs.pwrite(f, offset_bytes, size_bytes, direct=False, sync=0)  # sync: O_DSYNC | O_SYNC
    yield fs.pwrites([(f, offset_bytes, size_bytes), ...])   # several, one after another
    yield fs.pread(f, offset_bytes, size_bytes, direct=False)
    yield fs.fsync(f);  yield fs.fdatasync(f)
    yield fs.sync_file_range(f, offset_bytes, nbytes, SYNC_FILE_RANGE_WRITE)
    yield fs.fallocate(f, offset_bytes, len_bytes)        # OSError if unsupported
    yield fs.posix_fallocate(f, offset_bytes, len_bytes)  # zero-fills if unsupported
    state = fs.crash_state()     # what a power loss right now would keep / lose

``create`` sets a file up outside simulated time (as if made long ago and synced):
``preallocate`` = ``none`` (a sparse file of ``size_bytes``), ``fallocate``
(unwritten extents), ``zero_fill`` (written, allocated, on stable media, not
cached). To model a zero-fill *during* the run, ``pwrite`` the zeros.

Several filesystems may share one ``PageCache`` (the memory limit and dirty
thresholds are global); each has its own flusher, journal and allocator.

Modelled (the mechanisms shared by all filesystems live here and in ``buffered.py``,
``direct.py``, ``writeback.py``, ``journal.py``; ``policy.py`` and one module per
filesystem hold what differs):

- Buffered ``write()``: syscall CPU; a journal handle (ext3/ext4: may wait for a
  checkpoint); read-modify-write - a write that covers only part of a 4 KB page
  that is not cached reads the page first, if the page has a written block (holes,
  unwritten extents and new pages are zero-filled instead); with ``stable_pages`` a
  wait for pages under writeback; block allocation (ext3) or reservation (delalloc);
  the copy (CPU per page); the size and mtime updates; dirty throttling.
- Buffered ``read()``: cached pages are copied; missing pages are read in
  physically contiguous bios, a sequential reader's by Linux's on-demand read-ahead
  (windows growing to ``read_ahead_kb``, the next one read when the reader reaches
  the current one's marker page: ``buffered.py``).
- ``O_DIRECT``: dirty cached pages of the range are written and dropped first, holes
  are allocated (unwritten-extent conversion and size update at completion), and
  the bios go straight to the block layer; the caller waits for them.
- ``fsync`` / ``fdatasync``: write and wait for the file's dirty pages (WB_SYNC_ALL),
  then the policy commits the journal if the inode's change is not yet committed
  (``fdatasync`` only for size / allocation changes) and flushes the device cache
  when barriers are on.
- ``O_DSYNC`` / ``O_SYNC`` (the ``sync`` flag of a ``pwrite``, the file's open flags):
  after the write - buffered or ``O_DIRECT`` - and before it returns, the durability
  step of ``fdatasync`` (``O_DSYNC``) or ``fsync`` (``O_SYNC``) for the written range
  (Linux ``generic_write_sync`` -> ``vfs_fsync_range``): its dirty pages written and
  waited for, the journal committed if the inode's change needs it, else a cache
  FLUSH with barriers; zfs commits the intent log (``zil_commit``). Before 2.6.33
  ``O_SYNC`` meant ``O_DSYNC`` (``FsConfig.osync_is_dsync``).
- ``sync_file_range``: page-rounded range; WAIT_BEFORE waits for writeback in the
  range, WRITE starts writeback of its dirty pages (waiting for dirty pages already
  under writeback before 4.20), WAIT_AFTER waits again; no metadata, no flush;
  submission blocks when ``nr_requests`` are in use.
- Durability: every write completion is stamped with the count of cache FLUSHes the
  filesystem had issued (its *epoch*); a completed FLUSH makes every write stamped
  before it stable; FUA writes are stable at once; if the device holds no volatile
  data (``Device.volatile_bytes() == 0``: write-through, battery-backed, drained)
  every completed write is stable. Sizes and block mappings are stable once the
  journal transaction that recorded them is (``journal.py``).

Deliberately not modelled: directories and name lookup costs, permissions, mmap,
truncate/unlink, file locks (i_mutex) between concurrent writers of one file,
CPU contention (every thread has a CPU of its own).
"""
from __future__ import annotations

import numpy as np

from ..block import BlockQueue
from ..device.request import FLUSH, IORequest
from ..sim import Event, Simulator, all_of
from .config import (FADVISE, O_DSYNC, O_SYNC, PAGE_BYTES, PREALLOCATE,
                     SYNC_FILE_RANGE_WAIT_AFTER, SYNC_FILE_RANGE_WAIT_BEFORE,
                     SYNC_FILE_RANGE_WRITE, FsConfig)
from . import buffered
from . import direct as direct_io
from .durability import crash_state
from .file import CACHED, DELALLOC, HASDATA, LOCKED, UNWRITTEN, File
from .layout import Layout
from .pagecache import PageCache
from .policies import make_policy
from .writeback import Writeback

P = PAGE_BYTES


class Filesystem:
    def __init__(self, sim: Simulator, cfg: FsConfig, queue: BlockQueue,
                 cache: PageCache | None = None, name: str | None = None) -> None:
        self.sim = sim
        self.cfg = cfg
        self.queue = queue
        self.name = name or f"{cfg.type}:{queue.name}"
        self.cache = cache if cache is not None else PageCache(sim)
        self.cache.filesystems.append(self)
        self.layout = Layout(queue.device.capacity_bytes, cfg.journal_pages)
        self.policy = make_policy(cfg)
        self.files: dict[str, File] = {}
        self.flush_epoch = 0          # FLUSHes issued
        self.stable_epoch = -1        # writes stamped <= this are on stable media
        self.stats_rmw_reads = 0
        self.stats_stable_page_waits = 0
        self.stats_commits_forced = 0
        self.stats_flushes = 0
        self.stats_blocked_submits = 0
        self.stats_ordered_sync_writes = 0
        self.writeback = Writeback(self)
        self.journal = self.policy.make_journal(self)

    # -- files -------------------------------------------------------------------------
    def create(self, name: str, size_bytes: int = 0, preallocate: str = "none") -> File:
        if name in self.files:
            raise ValueError(f"file {name!r} exists on {self.name}")
        if preallocate not in PREALLOCATE:
            raise ValueError(f"preallocate: must be one of {', '.join(PREALLOCATE)}, got {preallocate!r}")
        if size_bytes < 0:
            raise ValueError(f"size_bytes: must be >= 0, got {size_bytes}")
        f = File(self, name, len(self.files) + 12)
        self.files[name] = f
        self.cache.files.append(f)
        n = -(-size_bytes // P)
        if preallocate != "none":
            f.ensure(n)          # a sparse file grows its page arrays when touched
        f.size_bytes = f.disksize_bytes = size_bytes
        f.size_log = [(0, size_bytes)]
        if n and preallocate != "none":
            if preallocate in ("fallocate", "posix_fallocate") and not self.cfg.can_fallocate:
                preallocate = "zero_fill"     # glibc's posix_fallocate fallback
            start = self.layout.allocate(n)
            f.block[:n] = np.arange(start, start + n)
            f.wepoch[:n] = -1
            if preallocate == "zero_fill":
                f.state[:n] = HASDATA
            else:
                f.state[:n] = UNWRITTEN
        return f

    def open(self, name: str) -> File:
        try:
            return self.files[name]
        except KeyError:
            raise FileNotFoundError(f"{name!r} on {self.name}") from None

    # -- public operations (each returns an Event) ------------------------------------
    def pwrite(self, f: File, offset_bytes: int, size_bytes: int, direct: bool = False,
               issuer: int = 0, sync: int = 0) -> Event:
        """``pwrite(2)`` on a file opened with ``O_DIRECT`` if ``direct`` and with
        ``sync`` = ``O_DSYNC`` or ``O_SYNC`` (0: neither)."""
        _check_range(offset_bytes, size_bytes, direct)
        if sync not in (0, O_DSYNC, O_SYNC):
            raise ValueError(f"sync: must be 0, O_DSYNC or O_SYNC, got {sync!r}")
        direct = direct and self.policy.supports_direct
        gen = (direct_io.write if direct else buffered.write)(self, f, offset_bytes,
                                                               size_bytes, issuer)
        if sync:
            datasync = sync == O_DSYNC or self.cfg.osync_datasync
            gen = self._write_sync(gen, f, offset_bytes, size_bytes, datasync, issuer)
        return self.sim.spawn(gen, "pwrite")

    def pwrites(self, calls, issuer: int = 0) -> Event:
        """Buffered ``pwrite(f, offset, size)`` calls made one after another by one
        thread (``calls``: ``(f, offset_bytes, size_bytes)`` triples); the event fires
        after the last. The same as yielding each ``pwrite`` in turn, cheaper."""
        for f, off, n in calls:
            _check_range(off, n, False)
        return self.sim.spawn(self._pwrites(list(calls), issuer), "pwrites")

    def _pwrites(self, calls, issuer: int):
        total = 0
        for f, off, n in calls:
            total += yield from buffered.write(self, f, off, n, issuer)
        return total

    def pread(self, f: File, offset_bytes: int, size_bytes: int, direct: bool = False,
              issuer: int = 0) -> Event:
        _check_range(offset_bytes, size_bytes, direct)
        direct = direct and self.policy.supports_direct
        gen = direct_io.read if direct else buffered.read
        return self.sim.spawn(gen(self, f, offset_bytes, size_bytes, issuer), "pread")

    def fsync(self, f: File, issuer: int = 0) -> Event:
        return self.sim.spawn(self._fsync(f, False, issuer), "fsync")

    def fdatasync(self, f: File, issuer: int = 0) -> Event:
        return self.sim.spawn(self._fsync(f, True, issuer), "fdatasync")

    def sync_file_range(self, f: File, offset_bytes: int, nbytes: int, flags: int,
                        issuer: int = 0) -> Event:
        if offset_bytes < 0 or nbytes < 0:
            raise ValueError("sync_file_range: offset and nbytes must be >= 0")
        if flags & ~7:
            raise ValueError(f"sync_file_range: unknown flags {flags:#x}")
        return self.sim.spawn(self._sync_file_range(f, offset_bytes, nbytes, flags, issuer),
                              "sync_file_range")

    def fallocate(self, f: File, offset_bytes: int, len_bytes: int, keep_size: bool = False) -> Event:
        if not self.cfg.can_fallocate:
            raise OSError(95, f"fallocate not supported on {self.cfg.type}")  # EOPNOTSUPP
        if offset_bytes < 0 or len_bytes <= 0:
            raise ValueError("fallocate: offset must be >= 0 and len > 0")
        return self.sim.spawn(self._fallocate(f, offset_bytes, len_bytes, keep_size), "fallocate")

    def posix_fallocate(self, f: File, offset_bytes: int, len_bytes: int) -> Event:
        if self.cfg.can_fallocate:
            return self.fallocate(f, offset_bytes, len_bytes)
        # glibc fallback: write a zero byte into every block of the range
        return self.sim.spawn(buffered.write(self, f, offset_bytes, len_bytes, 0,
                                             per_block_calls=True), "posix_fallocate")

    def crash_state(self):
        """What a power loss right now would leave on stable media (``durability.py``)."""
        return crash_state(self)

    def fadvise(self, f: File, advice: str) -> None:
        """``posix_fadvise(fd, ..., advice)`` on the whole file (mm/fadvise.c):
        ``sequential`` doubles its read-ahead window (``ra_pages = bdi->ra_pages * 2``),
        ``random`` turns read-ahead off (FMODE_RANDOM: a read reads what it asks for),
        ``normal`` restores the device's; ``noreuse`` changes nothing here."""
        if advice not in FADVISE:
            raise ValueError(f"fadvise: advice must be one of {', '.join(FADVISE)}, "
                             f"got {advice!r}")
        ra = self.cache.cfg.read_ahead_kb // 4
        if advice == "sequential":
            f.ra_pages = 2 * ra
        elif advice == "random":
            f.ra_pages = 0
        elif advice == "normal":
            f.ra_pages = None

    def drop_caches(self) -> None:
        """``echo 1 > /proc/sys/vm/drop_caches`` for this filesystem's clean pages."""
        for f in self.files.values():
            self.cache.forget(f)

    # -- helpers used by the policies, the journal and writeback ---------------------
    def wait(self, ev: Event):
        """Generator: sleep on ``ev`` if it has not fired; waking up costs CPU."""
        if not ev.triggered:
            yield ev
            if self.cfg.wakeup_ns:
                yield self.cfg.wakeup_ns
        return ev.value

    def submit_and_wait(self, bios: list[IORequest]):
        """Generator: submit bios (one plug) and wait for all of them."""
        if len(bios) == 1:                       # one bio: wait on its own event
            bio = bios[0]
            ev = Event(self.sim)
            bio.on_done = ev.succeed
            if self.cfg.bio_ns:
                yield self.cfg.bio_ns
            gate = self.queue.submit(bios, plug=False)
            if gate is not None:
                self.stats_blocked_submits += 1
                yield gate
            yield from self.wait(ev)
            return
        evs = []
        for bio in bios:
            ev = Event(self.sim)
            bio.on_done = self._bio_event(ev)
            evs.append(ev)
        if self.cfg.bio_ns:
            yield self.cfg.bio_ns * len(bios)
        gate = self.queue.submit(bios, plug=len(bios) > 1)
        if gate is not None:
            self.stats_blocked_submits += 1
            yield gate
        yield from self.wait(all_of(self.sim, evs))

    @staticmethod
    def _bio_event(ev: Event):
        return lambda bio: ev.succeed(bio)

    def flush(self):
        """Generator: a cache FLUSH (``blkdev_issue_flush``); on completion every write
        that completed before it was issued is stable."""
        self.flush_epoch += 1
        epoch = self.flush_epoch - 1
        self.stats_flushes += 1
        bio = IORequest(FLUSH, 0, 0, None, True, False, 0)
        yield from self.submit_and_wait([bio])
        if epoch > self.stable_epoch:
            self.stable_epoch = epoch

    def write_fua(self, bios: list[IORequest]):
        """Generator: a forced-unit-access write; returns its epoch stamp (-1: stable
        once complete). A queue without FUA (libata's default, ``libata.fua=0``) sends
        the write, then a cache FLUSH (``models/block/fua.py``), which counts as one of
        the filesystem's FLUSHes: what completed before this call is stable with it
        (what completed while the write ran is left to the next - a narrower claim
        than the kernel's, never a wider one)."""
        for bio in bios:
            bio.fua = bio.nomerge = True
        if not self.queue.emulate_fua:
            yield from self.submit_and_wait(bios)
            return -1
        epoch = self.flush_epoch
        self.flush_epoch += len(bios)
        self.stats_flushes += len(bios)
        yield from self.submit_and_wait(bios)
        if epoch > self.stable_epoch:
            self.stable_epoch = epoch
        return -1

    def allocate(self, f: File, pages: np.ndarray, unwritten: bool = False):
        """Generator: give ``pages`` new contiguous blocks and journal the change."""
        if self.cfg.alloc_ns:
            yield self.cfg.alloc_ns
        pages = pages[f.block[pages] < 0] if not self.policy.cow else pages
        n = int(pages.size)
        if n == 0:
            return
        start = self.layout.allocate(n)
        f.block[pages] = np.arange(start, start + n)
        st = f.state
        st[pages] &= ~np.uint8(DELALLOC)
        if unwritten:
            st[pages] |= np.uint8(UNWRITTEN)
        tid = self.journal.dirty_meta(self.policy.alloc_keys(self, f, pages, start), f, datasync=True)
        f.meta_tid[pages] = tid

    def mark_cached(self, f: File, pages: np.ndarray) -> None:
        st = f.state
        new = int(np.count_nonzero((st[pages] & CACHED) == 0))
        st[pages] = (st[pages] | np.uint8(CACHED)) & ~np.uint8(LOCKED)
        f.lru[pages] = self.cache.next_tick()
        f.nr_cached += new
        self.cache.cached(new)

    # -- fsync, sync_file_range, fallocate ----------------------------------------------
    def _fsync(self, f: File, datasync: bool, issuer: int):
        yield self.cfg.syscall_ns
        yield from self._sync_range(f, 0, f.cap, datasync, issuer)
        return 0

    def _sync_range(self, f: File, p0: int, p1: int, datasync: bool, issuer: int):
        """Generator: ``vfs_fsync_range`` of pages [p0, p1) - the data, then the
        metadata part of ``fdatasync`` (``datasync``) or ``fsync``."""
        yield from self.policy.fsync_data(self, f, issuer, p0, p1)
        yield from self.policy.fsync(self, f, datasync)

    def _write_sync(self, write, f: File, off: int, n: int, datasync: bool, issuer: int):
        """Generator: an ``O_DSYNC`` / ``O_SYNC`` write: the write, then, inside the same
        call, the sync of what it wrote (``generic_write_sync``)."""
        done = yield from write
        if done:
            yield from self._sync_range(f, off // P, -(-(off + n) // P), datasync, issuer)
        return done

    def _write_and_wait(self, f: File, issuer: int):
        yield from self.writeback.write_range(f, 0, f.cap, sync_all=True, issuer=issuer)
        yield from self.writeback.wait_range(f, 0, f.cap)

    def _sync_file_range(self, f: File, off: int, nbytes: int, flags: int, issuer: int):
        yield self.cfg.syscall_ns
        if self.policy.sfr_noop:
            return 0
        p0 = off // P
        p1 = f.cap if nbytes == 0 else -(-(off + nbytes) // P)
        wb = self.writeback
        if flags & SYNC_FILE_RANGE_WAIT_BEFORE:
            yield from wb.wait_range(f, p0, p1)
        if flags & SYNC_FILE_RANGE_WRITE:
            sync_all = self.cfg.sfr_write_waits or flags == 7
            yield from wb.write_range(f, p0, p1, sync_all=sync_all, issuer=issuer)
        if flags & SYNC_FILE_RANGE_WAIT_AFTER:
            yield from wb.wait_range(f, p0, p1)
        return 0

    def _fallocate(self, f: File, off: int, n: int, keep_size: bool):
        yield self.cfg.syscall_ns
        p0, p1 = off // P, -(-(off + n) // P)
        f.ensure(p1)
        holes = np.flatnonzero((f.block[p0:p1] < 0) & ((f.state[p0:p1] & DELALLOC) == 0)) + p0
        if holes.size:
            yield from self.policy.fallocate(self, f, holes)
        if not keep_size and off + n > f.size_bytes:
            f.size_bytes = f.disksize_bytes = off + n
            self.journal.dirty_meta((self.layout.inode(f.ino),), f, datasync=True)
        return 0

    # -- statistics ---------------------------------------------------------------------
    def stats(self) -> dict:
        out = {"rmw_reads": self.stats_rmw_reads, "stable_page_waits": self.stats_stable_page_waits,
               "commits_forced": self.stats_commits_forced, "flushes": self.stats_flushes,
               "blocked_submits": self.stats_blocked_submits,
               "ordered_sync_writes": self.stats_ordered_sync_writes,
               "pages_written": self.writeback.pages_written,
               "bios_written": self.writeback.bios_written, "pages_read": self.writeback.pages_read,
               "flusher_congestion_waits": self.writeback.congestion_waits}
        out.update(self.journal.stats())
        return out


def _check_range(off: int, n: int, direct: bool) -> None:
    if off < 0 or n < 0:
        raise ValueError(f"offset and size must be >= 0, got {off}, {n}")
    if direct and (off % 512 or n % 512):
        raise ValueError(f"O_DIRECT needs 512-byte aligned offset and size, got {off}, {n}")
