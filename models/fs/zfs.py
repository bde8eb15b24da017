"""zfs (ZFS on Linux 0.6 era): copy-on-write transaction groups and the intent log.

- All dirty data belongs to the open transaction group (txg). ``txg_sync`` runs every
  ``commit_interval_s`` (``zfs_txg_timeout``, 5 s) or when dirty data passes
  ``dirty_background_ratio`` of memory: every dirty page gets a *new* block
  (copy-on-write: an overwrite allocates exactly like an append), data is written
  sequentially, then the indirect blocks (one per 1024 block pointers) and dnodes,
  then - between two cache FLUSHes - the uberblock that makes the txg durable.
- ``fsync`` / ``fdatasync`` do not write the data in place: ``zil_commit`` writes the
  file's pending write records to the ZFS intent log (a 192-byte record header plus
  the data itself for writes up to ``zfs_immediate_write_sz`` = 32 KB; a larger write
  first goes to its final, newly allocated location and the record only points to
  it), in log blocks rounded up to 4 KB, then flushes the vdev caches (unless
  ``nobarrier``, i.e. ``zfs_nocacheflush=1``). The record carries the offset and
  length, so replay restores the size too: append and overwrite cost the same.
- The log lives in the fixed journal region (a pool without a separate log device
  allocates it from the pool; the position only changes seek distances).
- ``O_DIRECT`` is accepted and treated as buffered, and ``sync_file_range`` does
  nothing (ZoL of the era: the data is in the ARC, not the Linux page cache);
  ``fallocate`` is not supported (``posix_fallocate`` zero-fills).
- ``recordsize`` is taken as 4 KB (the page): record-level read-modify-write of larger
  records, compression and checksums are not modelled, nor the ARC's own policy (the
  page cache stands in for it), the write throttle's delay curve, or RAID-Z.
"""
from __future__ import annotations

import numpy as np

from ..device.request import WRITE, IORequest
from ..sim import Event
from .file import CACHED, DELALLOC, DIRTY, HASDATA, INTENT, WRITEBACK
from .policy import FsPolicy
from .writeback import NOT_ON_DEVICE

IMMEDIATE_WRITE_BYTES = 32768
RECORD_HEADER_BYTES = 192


class Zfs(FsPolicy):
    name = "zfs"
    delalloc = True
    cow = True
    own_flusher = True
    write_starts_handle = False
    write_flags = CACHED | DIRTY | HASDATA | INTENT
    sfr_noop = True
    supports_direct = False

    def make_journal(self, fs):
        return TxgPool(fs)

    def note_data_write(self, fs, f, p0, p1) -> None:
        fs.journal.txg_files.add(f)
        win = fs.journal.intent_window
        lo, hi = win.get(f, (p0, p1))
        win[f] = (min(lo, p0), max(hi, p1))

    def on_write_holes(self, fs, f, holes):
        f.state[holes] |= np.uint8(DELALLOC)
        return
        yield

    def size_changed(self, fs, f) -> None:
        fs.journal.dirty_meta((), f, datasync=True)

    def touch_mtime(self, fs, f) -> None:
        fs.journal.dirty_meta((), f)

    def allocate_on_writeback(self, fs, f, pages):
        """Copy-on-write: every page written gets a new block in the syncing txg."""
        if fs.cfg.alloc_ns:
            yield fs.cfg.alloc_ns
        pages = pages[(f.state[pages] & (DIRTY | WRITEBACK)) == DIRTY]
        n = int(pages.size)
        if n == 0:
            return
        old = f.block[pages]
        fs.layout.freed_blocks += int(np.count_nonzero(old >= 0))
        start = fs.layout.allocate(n)
        f.block[pages] = np.arange(start, start + n)
        f.state[pages] &= ~np.uint8(DELALLOC)
        # pages whose content the intent log already holds are recovered by replay
        fresh = f.wepoch[pages] == NOT_ON_DEVICE
        f.meta_tid[pages[fresh]] = fs.journal.syncing_txg

    def end_io(self, fs, f, p0, n) -> None:
        pass

    def fsync_data(self, fs, f, issuer, p0=0, p1=None):
        # zil_commit(zilog, foid) commits every pending record of the file, whatever
        # range the caller wrote (zfs_write does the same for O_DSYNC / O_SYNC)
        yield from fs.journal.zil_commit(f, issuer)

    def fsync(self, fs, f, datasync):
        return
        yield

    def flusher_wakeup(self, fs) -> None:
        fs.journal.request_sync()

    def fallocate(self, fs, f, holes):
        raise OSError(95, "fallocate not supported on zfs")

    def recovered_size(self, fs, f, durable_tid, stable_epoch):
        size = super().recovered_size(fs, f, durable_tid, stable_epoch)
        for epoch, s in f.zil_sizes:
            if epoch <= stable_epoch and s > size:
                size = s
        return size


class TxgPool:
    """The txg sync thread and the ZIL of one pool (stands in for ``Journal``)."""

    def __init__(self, fs) -> None:
        self.fs = fs
        self.sim = fs.sim
        self.start_byte = fs.layout.journal_start * 4096
        self.size_bytes = fs.layout.journal_blocks * 4096
        self.head = 0
        self.open_txg = 1
        self.syncing_txg = 0
        self.committed_tid = 0
        self.txg_files: set = set()
        self.intent_window: dict = {}
        self.records: list[tuple[int, int]] = []
        self.stable_tid = 0
        self.zil_bytes_written = 0
        self.zil_commits = 0
        self.txg_syncs = 0
        self.waiters: list[Event] = []
        self._wake = Event(self.sim)
        self._requested = False
        self.thread = self.sim.spawn(self._txg_sync_thread(), f"txg_sync/{fs.name}")
        self.sim.after(fs.cfg.commit_interval_ns, self._timer, None)

    # -- the Journal interface used by Filesystem -------------------------------------
    def dirty_meta(self, keys, f=None, datasync: bool = False) -> int:
        if f is not None:
            self.txg_files.add(f)
            f.sync_tid = self.open_txg
            if datasync:
                f.datasync_tid = self.open_txg
        return self.open_txg

    def add_ordered(self, f) -> None:
        pass

    def start_handle(self):
        return
        yield

    def force_commit(self, tid: int):
        while self.committed_tid < tid:
            self.request_sync()
            ev = Event(self.sim)
            self.waiters.append(ev)
            yield from self.fs.wait(ev)

    def write_expired_home(self, older_than_ns):
        return
        yield

    def durable_tid(self, stable_epoch: int) -> int:
        rec = self.records
        while rec and rec[0][1] <= stable_epoch:
            self.stable_tid = rec.pop(0)[0]
        return self.stable_tid

    def stats(self) -> dict:
        return {"commits": self.zil_commits, "checkpoints": 0, "checkpoint_wait_ns": 0,
                "journal_bytes_written": self.zil_bytes_written, "home_blocks_written": 0,
                "journal_free_bytes": self.size_bytes, "txg_syncs": self.txg_syncs}

    # -- the intent log ------------------------------------------------------------------
    def zil_commit(self, f, issuer: int):
        """Generator: log ``f``'s pending writes and flush the vdev caches."""
        fs, cfg = self.fs, self.fs.cfg
        lo, hi = self.intent_window.pop(f, (0, 0))
        pend = f.pages_with(INTENT, lo, hi)
        size = f.size_bytes
        if pend.size == 0 and f.zil_sizes and f.zil_sizes[-1][1] == size:
            return
        if cfg.commit_cpu_ns:
            yield cfg.commit_cpu_ns
        nbytes = RECORD_HEADER_BYTES
        if pend.size:
            brk = np.flatnonzero(np.diff(pend) != 1) + 1
            starts = np.concatenate(([0], brk))
            ends = np.concatenate((brk, [pend.size]))
            big = []
            for s, e in zip(starts.tolist(), ends.tolist()):
                run = (e - s) * 4096
                if run <= IMMEDIATE_WRITE_BYTES:
                    nbytes += RECORD_HEADER_BYTES + run
                else:
                    nbytes += RECORD_HEADER_BYTES
                    big.append(pend[s:e])
            f.state[pend] &= ~np.uint8(INTENT)
            if big:   # WR_INDIRECT: data to its final (new) location first
                pages = np.concatenate(big)
                pages = pages[(f.state[pages] & (DIRTY | WRITEBACK)) == DIRTY]
                if pages.size:
                    self.syncing_txg = self.open_txg
                    yield from fs.writeback.write_pages(f, pages, True, issuer)
                yield from fs.writeback.wait_pages(f, np.concatenate(big))
        nbytes = -(-nbytes // 4096) * 4096
        epoch = yield from self._log_write(nbytes)
        if cfg.barrier:
            yield from fs.flush()
            epoch = -1
        # the log now holds these pages' data (unless they were written again since)
        if pend.size:
            logged = pend[(f.state[pend] & INTENT) == 0]
            logged = logged[(f.wepoch[logged] == NOT_ON_DEVICE) | (epoch == -1)]
            f.wepoch[logged] = epoch if epoch != -1 else fs.flush_epoch - 1
            f.meta_tid[logged] = 0
        f.zil_sizes.append((epoch if epoch != -1 else fs.flush_epoch - 1, size))
        if len(f.zil_sizes) > 64:
            f.zil_sizes = f.zil_sizes[-32:]
        self.zil_commits += 1

    def _log_write(self, nbytes: int):
        fs = self.fs
        pos = self.head % self.size_bytes
        bios = []
        left = nbytes
        while left:
            n = min(left, self.size_bytes - pos)
            bios.append(IORequest(WRITE, self.start_byte + pos, n, None, True, False, 0))
            pos = (pos + n) % self.size_bytes
            left -= n
        self.head += nbytes
        self.zil_bytes_written += nbytes
        yield from fs.submit_and_wait(bios)
        return fs.flush_epoch

    # -- txg sync ------------------------------------------------------------------------
    def request_sync(self) -> None:
        self._requested = True
        if not self._wake.triggered:
            self._wake.succeed()

    def _timer(self, _arg) -> None:
        self.request_sync()
        self.sim.after(self.fs.cfg.commit_interval_ns, self._timer, None)

    def _txg_sync_thread(self):
        fs = self.fs
        while True:
            if not self._requested:
                yield self._wake
                self._wake = Event(self.sim)
            self._requested = False
            txg = self.open_txg
            files = [f for f in self.txg_files]
            self.txg_files = set()
            if not files:
                continue
            self.open_txg += 1
            self.syncing_txg = txg
            sizes = {f: f.size_bytes for f in files}
            evs_pages = []
            n_data = 0
            for f in sorted(files, key=lambda f: f.ino):
                dirty = f.pages_with(DIRTY, 0, f.cap)
                dirty = dirty[(f.state[dirty] & WRITEBACK) == 0]
                if dirty.size:
                    n_data += int(dirty.size)
                    yield from fs.writeback.write_pages(f, dirty, False)
                    evs_pages.append((f, dirty))
            for f, pages in evs_pages:
                yield from fs.writeback.wait_pages(f, pages)
            # indirect blocks + dnode per file + a few MOS blocks, copy-on-write too
            n_meta = sum(-(-max(f.npages, 1) // 1024) for f in files) + len(files) + 3
            start = fs.layout.allocate(n_meta)
            yield from fs.submit_and_wait([IORequest(WRITE, start * 4096, n_meta * 4096,
                                                     None, False, False, 0)])
            if fs.cfg.barrier:
                yield from fs.flush()
            yield from fs.submit_and_wait([IORequest(WRITE, 0, 4096, None, True, False, 0)])
            if fs.cfg.barrier:
                yield from fs.flush()
                wepoch = fs.flush_epoch - 1
            else:
                wepoch = fs.flush_epoch
            self.records.append((txg, wepoch))
            for f, size in sizes.items():
                f.size_log.append((txg, size))
            # zil_clean: log records of a synced txg are dropped (pages not written since)
            for f, pages in evs_pages:
                done = pages[(f.state[pages] & DIRTY) == 0]
                f.state[done] &= ~np.uint8(INTENT)
            self.committed_tid = txg
            self.txg_syncs += 1
            for ev in self.waiters:
                ev.succeed()
            self.waiters = []
