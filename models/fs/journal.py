"""The metadata journal: jbd (ext3), jbd2 (ext4) and the xfs log, as I/O on the device.

Modelled (Linux fs/jbd, fs/jbd2 ``journal_commit_transaction``, fs/xfs/xfs_log.c):

- Metadata changes (block bitmaps, group descriptors, inodes, indirect / extent /
  bmap-btree blocks) join the *running transaction* as home-block numbers (a set: a
  block changed twice in one transaction is logged once). A file remembers the last
  transaction that changed its inode (``sync_tid``) and the last that changed its size
  or block mapping (``datasync_tid``); fsync / fdatasync force exactly those.
- One commit at a time (kjournald / jbd2 / the xfs CIL push). A commit starts when
  forced, when the running transaction is ``commit_interval_s`` old, or when it
  holds more than a quarter of the journal. It then:
  1. (ext3/ext4 ``data=ordered``) writes the transaction's ordered data and waits:
     on ext3 every dirty page of every file written during the transaction - the
     whole-filesystem fsync stall -, on ext4 only allocated, non-delalloc pages of
     the files whose blocks the transaction allocated;
  2. jbd/jbd2: writes a descriptor block (one per 256 tags) and a copy of every
     metadata block to the journal, sequentially, and waits; then the commit block -
     with barriers as a cache FLUSH followed by a FUA write (WRITE_FLUSH_FUA / the
     old WRITE_BARRIER), without them as a plain write. xfs: one log write holding a
     512-byte record header plus ~256 bytes per logged item (xfs logs dirty regions
     and inode cores, not whole blocks), rounded to 512 bytes, with PREFLUSH + FUA
     when barriers are on.
  The journal is a fixed region of the device written circularly (``layout.py``).
- Durability: the transaction is on stable media once its commit record is (FUA, or
  a later completed FLUSH, or a device without a volatile cache); recovery replays
  the longest such prefix of transactions. The size each transaction recorded for each
  inode is kept so ``Filesystem.crash_state`` can say what a power loss would keep.
- Checkpointing: a committed metadata block stays dirty at its home location until it
  is written there; the journal space of a transaction is reclaimed once all its
  blocks are (or were relogged by a later transaction). Home blocks are written by
  the flusher after ``dirty_expire_centisecs``. When free journal space drops below a
  quarter (jbd2 ``jbd2_log_space_left`` < ``j_max_transaction_buffers``), the next
  thread that starts a handle - every ``write()`` on ext3/ext4, which updates the
  inode - performs a checkpoint synchronously and every other one waits for it
  (``__jbd2_log_wait_for_space``): the ext4 journal-full write stall. xfs instead
  pushes its AIL in the background (xfsaild) as soon as the log is 3/4 full, so
  writers do not stall.

Deliberately not modelled: revoke records, journal checksums and async commit,
handle credits (a handle never blocks on the running transaction being locked),
``data=journal``, the xfs CIL/iclog pipelining of several log forces in flight.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..device.request import WRITE, IORequest
from ..sim import Event, Mutex

TAGS_PER_DESCRIPTOR = 256


class Transaction:
    __slots__ = ("tid", "meta", "files", "ordered", "olist", "sizes", "start", "end", "live",
                 "wepoch", "committed_ns", "started_ns")

    def __init__(self, tid: int) -> None:
        self.tid = tid
        self.meta: set[int] = set()
        self.files: set = set()
        self.ordered: set = set()
        self.olist: list = []           # ext3: (file, pages) in the order they were filed
        self.sizes: dict = {}
        self.start = self.end = 0       # journal positions (bytes since mount)
        self.live = 0                   # metadata blocks still dirty at home
        self.wepoch = 0
        self.committed_ns = -1
        self.started_ns = -1

    @property
    def empty(self) -> bool:
        return not self.meta and not self.ordered


class Journal:
    def __init__(self, fs, style: str) -> None:
        if style not in ("jbd", "jbd2", "xfs"):
            raise ValueError(f"journal style {style!r}")
        self.fs = fs
        self.sim = fs.sim
        self.style = style
        self.start_byte = fs.layout.journal_start * 4096
        self.size_bytes = fs.layout.journal_blocks * 4096
        self.head = 0                   # bytes written since mount
        self.tail = 0                   # oldest byte still needed for recovery
        self.running = Transaction(1)
        self.committing: Transaction | None = None
        self.committed_tid = 0
        self.requested_tid = 0
        self.cp_list: deque[Transaction] = deque()
        self.home_dirty: dict[int, Transaction] = {}
        self.records: deque[tuple[int, int]] = deque()   # (tid, wepoch) not yet known stable
        self.stable_tid = 0
        self.waiters: dict[int, Event] = {}
        self.checkpoint_lock = Mutex(self.sim, "j_checkpoint_mutex")
        self._wake = Event(self.sim)
        self.commits = 0
        self.checkpoints = 0
        self.checkpoint_wait_ns = 0
        self.journal_bytes_written = 0
        self.home_blocks_written = 0
        self._pushing = False
        self.thread = self.sim.spawn(self._kjournald(), f"jbd2/{fs.name}")

    # -- recording changes ---------------------------------------------------------------
    def dirty_meta(self, keys, f=None, datasync: bool = False) -> int:
        """Add metadata home blocks to the running transaction (for inode ``f``)."""
        T = self.running
        if T.empty:
            T.started_ns = self.sim.now_ns
            self.sim.after(self.fs.cfg.commit_interval_ns, self._expire, T.tid)
        T.meta.update(keys)
        if f is not None:
            T.files.add(f)
            f.sync_tid = T.tid
            if datasync:
                f.datasync_tid = T.tid
        if len(T.meta) * 4096 > self.size_bytes // 4:
            self.request_commit(T.tid)
        return T.tid

    def add_ordered(self, f) -> None:
        T = self.running
        if T.empty:
            T.started_ns = self.sim.now_ns
            self.sim.after(self.fs.cfg.commit_interval_ns, self._expire, T.tid)
        T.ordered.add(f)

    def file_data(self, f, p0: int, p1: int) -> None:
        """jbd ``journal_dirty_data``: file the buffers of pages [p0, p1) of ``f`` on the
        running transaction's ordered-data list, at its tail, unless already there."""
        T = self.running
        if p1 - p0 == 1:
            if f.otid.item(p0) == T.tid:
                return
            self.add_ordered(f)
            f.otid[p0] = T.tid
            T.olist.append((f, np.array([p0], np.intp)))
            return
        ot = f.otid[p0:p1]
        new = np.flatnonzero(ot != T.tid)
        if new.size == 0:
            return
        self.add_ordered(f)
        ot[new] = T.tid
        T.olist.append((f, new + p0))

    # -- commits -------------------------------------------------------------------------
    def request_commit(self, tid: int) -> None:
        if tid > self.requested_tid:
            self.requested_tid = tid
            if not self._wake.triggered:
                self._wake.succeed()

    def _expire(self, tid: int) -> None:
        if tid == self.running.tid:
            self.request_commit(tid)

    def force_commit(self, tid: int):
        """Generator: return once transaction ``tid`` is committed."""
        if tid <= self.committed_tid:
            return
        self.request_commit(tid)
        ev = self.waiters.get(tid)
        if ev is None:
            ev = self.waiters[tid] = Event(self.sim)
        yield from self.fs.wait(ev)

    def _kjournald(self):
        while True:
            if self.requested_tid < self.running.tid:
                yield self._wake
                self._wake = Event(self.sim)
                if self.fs.cfg.wakeup_ns:        # the commit thread was asleep
                    yield self.fs.cfg.wakeup_ns
            if self.requested_tid >= self.running.tid and not self.running.empty:
                yield from self._commit()
            elif self.requested_tid >= self.running.tid:
                # nothing to commit: the requested tid is trivially complete
                self._committed(self.running.tid - 1)
                self.requested_tid = self.running.tid - 1

    def _commit(self):
        fs, cfg = self.fs, self.fs.cfg
        T = self.running
        self.running = Transaction(T.tid + 1)
        T.sizes = {f: f.disksize_bytes for f in T.files}
        self.committing = T
        yield cfg.commit_cpu_ns
        if cfg.data == "ordered" and T.ordered:
            yield from fs.policy.commit_ordered_data(fs, T)
        self.committing = None
        T.start = self.head
        n = len(T.meta)
        barrier = cfg.barrier
        if self.style == "xfs":
            nbytes = -(-(512 + 256 * max(n, 1)) // 512) * 512
            if barrier:
                yield from fs.flush()
            T.wepoch = yield from self._log_write(nbytes, fua=barrier)
        else:
            ndesc = -(-n // TAGS_PER_DESCRIPTOR) if n else 1
            yield from self._log_write((ndesc + n) * 4096, fua=False)
            if barrier:
                yield from fs.flush()
            T.wepoch = yield from self._log_write(4096, fua=barrier)
        T.end = self.head
        T.committed_ns = self.sim.now_ns
        self.commits += 1
        self.records.append((T.tid, T.wepoch))
        for f, size in T.sizes.items():
            f.size_log.append((T.tid, size))
        for key in T.meta:
            prev = self.home_dirty.get(key)
            if prev is not None:
                prev.live -= 1
            self.home_dirty[key] = T
        T.live = len(T.meta)
        self.cp_list.append(T)
        self._advance_tail()
        self._committed(T.tid)
        if self.style == "xfs" and self.free_bytes() < self.size_bytes // 4 and not self._pushing:
            self._pushing = True
            self.sim.spawn(self._push_ail(), "xfsaild")

    def _committed(self, tid: int) -> None:
        if tid > self.committed_tid:
            self.committed_tid = tid
        for t in [t for t in self.waiters if t <= self.committed_tid]:
            self.waiters.pop(t).succeed()

    def _log_write(self, nbytes: int, fua: bool):
        """Generator: write ``nbytes`` at the journal head (wrapping); returns the epoch
        stamp of the write (-1 if FUA)."""
        fs = self.fs
        bios = []
        pos = self.head % self.size_bytes
        left = nbytes
        while left:
            n = min(left, self.size_bytes - pos)
            bios.append(IORequest(WRITE, self.start_byte + pos, n, None, True, fua, 0))
            pos = (pos + n) % self.size_bytes
            left -= n
        self.head += nbytes
        self.journal_bytes_written += nbytes
        if fua:
            return (yield from fs.write_fua(bios))
        yield from fs.submit_and_wait(bios)
        return fs.flush_epoch

    # -- journal space and checkpointing -----------------------------------------------
    def free_bytes(self) -> int:
        return self.size_bytes - (self.head - self.tail)

    def _advance_tail(self) -> None:
        cp = self.cp_list
        while cp and cp[0].live == 0:
            cp.popleft()
        self.tail = cp[0].start if cp else self.head

    def handle_must_wait(self) -> bool:
        """Would a thread starting a handle now wait for a checkpoint (free journal
        space below a quarter)?"""
        return self.free_bytes() < self.size_bytes // 4

    def start_handle(self):
        """Generator: a thread starting a journal handle; waits for a checkpoint when
        the journal is short of space."""
        if not self.handle_must_wait():
            return
        t0 = self.sim.now_ns
        yield self.checkpoint_lock.acquire()
        try:
            while self.free_bytes() < self.size_bytes // 4 and self.cp_list:
                yield from self._checkpoint_oldest()
        finally:
            self.checkpoint_lock.release()
        self.checkpoint_wait_ns += self.sim.now_ns - t0

    def _checkpoint_oldest(self):
        T = self.cp_list[0]
        keys = sorted(k for k in T.meta if self.home_dirty.get(k) is T)
        yield from self.write_home(keys, sync=True)
        self.checkpoints += 1
        # jbd2_cleanup_journal_tail: the journal superblock records the new tail
        sb = IORequest(WRITE, self.start_byte, 4096, None, True, False, 0)
        if self.fs.cfg.barrier:
            yield from self.fs.flush()
            yield from self.fs.write_fua([sb])
        else:
            yield from self.fs.submit_and_wait([sb])

    def write_home(self, keys: list[int], sync: bool):
        """Generator: write metadata blocks ``keys`` to their home locations and wait."""
        if not keys:
            return
        bios, s = [], 0
        for i in range(1, len(keys) + 1):
            if i == len(keys) or keys[i] != keys[i - 1] + 1:
                bios.append(IORequest(WRITE, keys[s] * 4096, (i - s) * 4096, None, sync, False, 0))
                s = i
        for k in keys:
            T = self.home_dirty.pop(k, None)
            if T is not None:
                T.live -= 1
        self.home_blocks_written += len(keys)
        yield from self.fs.submit_and_wait(bios)
        self._advance_tail()

    def write_expired_home(self, older_than_ns: int):
        """Generator (flusher): write home the metadata committed before ``older_than_ns``."""
        keys = sorted(k for k, T in self.home_dirty.items() if T.committed_ns <= older_than_ns)
        yield from self.write_home(keys, sync=False)

    def _push_ail(self):
        """xfsaild: push the oldest log items home until a quarter of the log is free."""
        try:
            while self.free_bytes() < self.size_bytes // 2 and self.cp_list:
                T = self.cp_list[0]
                keys = sorted(k for k in T.meta if self.home_dirty.get(k) is T)
                yield from self.write_home(keys, sync=False)
                if self.cp_list and self.cp_list[0] is T:
                    T.live = 0
                    self._advance_tail()
        finally:
            self._pushing = False

    # -- durability ----------------------------------------------------------------------
    def durable_tid(self, stable_epoch: int) -> int:
        """Last tid recovery would replay if power failed now."""
        rec = self.records
        while rec and rec[0][1] <= stable_epoch:
            self.stable_tid = rec.popleft()[0]
        return self.stable_tid

    def stats(self) -> dict:
        return {"commits": self.commits, "checkpoints": self.checkpoints,
                "checkpoint_wait_ns": self.checkpoint_wait_ns,
                "journal_bytes_written": self.journal_bytes_written,
                "home_blocks_written": self.home_blocks_written,
                "journal_free_bytes": self.free_bytes()}
