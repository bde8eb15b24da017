"""What differs between filesystems: the decisions a ``Filesystem`` asks its policy.

``FsPolicy`` is the base (journalled, block-allocating-at-write behaviour shared by
ext3/ext4/xfs); ``ext3.py``, ``ext4.py``, ``xfs.py`` and ``zfs.py`` override:

- ``delalloc``: blocks are allocated at writeback, not at ``write()``;
- ``cow``: every writeback allocates new blocks (zfs);
- ``journal_style``: jbd | jbd2 | xfs (see ``journal.py``), or the policy's own
  intent log (zfs);
- ``timestamp_granularity_ns``: how often ``write()`` changes the inode's mtime
  (ext3's 128-byte inodes keep seconds; ext4 / xfs keep the kernel clock, which
  advances per jiffy, 1 ms at HZ=1000) - each change dirties the inode, which
  ``fsync`` (not ``fdatasync``) must commit;
- ``write_starts_handle``: ``write()`` starts a journal handle (ext3/ext4) and so can
  wait for journal space;
- hooks for write-time allocation, writeback allocation and clustering, I/O
  completion (unwritten-extent conversion, on-disk size update), ordered data at
  commit, and the metadata part of ``fsync``.
"""
from __future__ import annotations

import numpy as np

from .file import CACHED, DELALLOC, DIRTY, HASDATA, UNWRITTEN, WRITEBACK
from .journal import Journal


class FsPolicy:
    name = "base"
    delalloc = False
    cow = False
    own_flusher = False
    journal_style = "jbd2"
    timestamp_granularity_ns = 1_000_000
    write_starts_handle = True
    write_flags = CACHED | DIRTY | HASDATA
    sfr_noop = False
    supports_direct = True
    ordered_collisions = False     # write() may first have to write out a buffer (ext3)

    def __init__(self, cfg) -> None:
        self.cfg = cfg

    def make_journal(self, fs):
        return Journal(fs, self.journal_style)

    # -- keys of metadata blocks an operation changes ----------------------------------
    def alloc_keys(self, fs, f, pages: np.ndarray, first_block: int) -> set[int]:
        lay = fs.layout
        keys = {lay.bitmap(first_block), lay.group_desc(first_block), lay.inode(f.ino)}
        keys.update(lay.map_block(f.ino, p * 1024) for p in set((pages // 1024).tolist()))
        return keys

    # -- write() -------------------------------------------------------------------------
    def on_write_holes(self, fs, f, holes: np.ndarray):
        """Generator: ``write()`` touches pages without blocks. Default: allocate now."""
        yield from fs.allocate(f, holes)

    def write_collides(self, fs, f, p0: int, p1: int) -> bool:
        """``ordered_collisions``: may ``before_data_write`` have to write anything?"""
        return True

    def note_data_write(self, fs, f, p0: int, p1: int) -> None:
        """``write()`` dirtied pages [p0, p1) of ``f`` (ext3 ordered mode files it with the
        running transaction)."""

    def size_changed(self, fs, f) -> None:
        """``write()`` / ``fallocate`` extended the in-memory size of ``f``."""
        f.disksize_bytes = f.size_bytes
        fs.journal.dirty_meta((fs.layout.inode(f.ino),), f, datasync=True)

    def touch_mtime(self, fs, f) -> None:
        fs.journal.dirty_meta((fs.layout.inode(f.ino),), f)

    # -- writeback -----------------------------------------------------------------------
    def cluster(self, fs, f, pages: np.ndarray) -> np.ndarray:
        return pages

    def allocate_on_writeback(self, fs, f, pages: np.ndarray):
        """Generator: map delayed-allocation pages before their bios are built."""
        yield from fs.allocate(f, pages)

    def end_io(self, fs, f, p0: int, n: int) -> None:
        """A write of pages [p0, p0+n) completed: convert unwritten extents."""
        if n == 1 and not f.state[p0] & UNWRITTEN:
            return
        uw = f.state[p0:p0 + n] & UNWRITTEN
        if uw.any():
            f.state[p0:p0 + n] &= ~np.uint8(UNWRITTEN)
            tid = fs.journal.dirty_meta((fs.layout.inode(f.ino), fs.layout.map_block(f.ino, p0)),
                                        f, datasync=True)
            f.meta_tid[p0:p0 + n][uw != 0] = tid

    def commit_ordered_data(self, fs, T):
        """Generator (commit thread): data=ordered - write the transaction's data first.
        jbd2: mapped (not delalloc) dirty pages of the files it allocated for."""
        wb = fs.writeback
        for f in sorted(T.ordered, key=lambda f: f.ino):
            dirty = f.pages_with(DIRTY, 0, f.cap)
            dirty = dirty[(f.state[dirty] & (DELALLOC | WRITEBACK)) == 0]
            if dirty.size:
                yield from wb.write_pages(f, dirty, True)
        for f in sorted(T.ordered, key=lambda f: f.ino):
            yield from wb.wait_range(f, 0, f.cap)

    def flusher_wakeup(self, fs) -> None:
        pass

    def flusher_metadata(self, fs):
        """Generator (flusher): write home the journal's expired metadata blocks."""
        expire = fs.cache.cfg.dirty_expire_centisecs * 10_000_000
        yield from fs.journal.write_expired_home(fs.sim.now_ns - expire)

    # -- fsync ---------------------------------------------------------------------------
    def fsync_data(self, fs, f, issuer: int, p0: int = 0, p1: int | None = None):
        """Generator: the data part of fsync of pages [p0, p1) (the whole file by
        default; ``filemap_write_and_wait_range``)."""
        p1 = f.cap if p1 is None else p1
        yield from fs.writeback.write_range(f, p0, p1, sync_all=True, issuer=issuer)
        yield from fs.writeback.wait_range(f, p0, p1)

    def fsync(self, fs, f, datasync: bool):
        """Generator: the metadata part of fsync / fdatasync (data is already written).
        Commit the transaction holding the inode's change, if not yet committed; else,
        with barriers, flush the device cache so the data itself is stable (ext3 only
        from Linux 2.6.32: ``FsConfig.fsync_flushes_cache``)."""
        tid = f.datasync_tid if datasync else f.sync_tid
        if tid > fs.journal.committed_tid:
            fs.stats_commits_forced += 1
            yield from fs.journal.force_commit(tid)
            if fs.cfg.barrier:
                return
        if fs.cfg.barrier and fs.cfg.fsync_flush:
            yield from fs.flush()

    # -- recovery ------------------------------------------------------------------------
    def recovered_size(self, fs, f, durable_tid: int, stable_epoch: int) -> int:
        """The size of ``f`` after journal replay up to ``durable_tid``."""
        size = 0
        for t, s in f.size_log:
            if t > durable_tid:
                break
            size = s
        return size

    # -- preallocation -------------------------------------------------------------------
    def fallocate(self, fs, f, holes: np.ndarray):
        """Generator: allocate ``holes`` as unwritten extents."""
        yield from fs.allocate(f, holes, unwritten=True)
