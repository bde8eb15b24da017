"""ext3 (jbd journal, Linux 2.6.18-2.6.3x as in RHEL 5).

- Blocks are allocated in ``write()`` (no delayed allocation): an append dirties the
  block bitmap, group descriptor, indirect block and inode in the running
  transaction, so ``fdatasync`` after an append must commit the journal.
- ``data=ordered``: every data buffer written during a transaction is on its ordered
  list (``journal_dirty_data``), and the commit writes them all - the dirty data of
  every file written since the last commit, not only the fsync'ed one. A journal
  commit forced by one small fsync therefore waits for the whole filesystem's dirty
  data (the ext3 fsync stall).
- 128-byte inodes: timestamps have one-second granularity.
- Mounted ``barrier=0`` by default (before Linux 3.1); no ``fallocate`` (glibc's
  ``posix_fallocate`` zero-fills).

Deliberately not modelled: the reservation windows of the block allocator,
``data=journal``, htree directories.
"""
from __future__ import annotations

from .policy import FsPolicy


class Ext3(FsPolicy):
    name = "ext3"
    journal_style = "jbd"
    timestamp_granularity_ns = 1_000_000_000

    def note_data_write(self, fs, f, p0, p1) -> None:
        if self.cfg.data == "ordered":
            fs.journal.add_ordered(f)

    def commit_ordered_data(self, fs, T):
        """Write every dirty page of every file written during the transaction."""
        wb = fs.writeback
        files = sorted(T.ordered, key=lambda f: f.ino)
        for f in files:
            yield from wb.write_range(f, 0, f.cap, sync_all=False)
        for f in files:
            yield from wb.wait_range(f, 0, f.cap)
