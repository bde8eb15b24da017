"""xfs (delayed logging, delayed allocation; Linux 2.6.35+).

- Delayed allocation like ext4; the allocation transaction logs the AG free-space
  btree, the inode's bmap btree and the inode core.
- The on-disk size is updated when a write beyond it completes (``xfs_setfilesize``,
  a transaction run from the I/O completion), so ``fdatasync`` after an append waits
  for the data and then forces the log.
- Writeback clustering: writing a page also writes the following dirty pages of the
  same file (``xfs_cluster_write``), up to 64 pages - so ``sync_file_range`` of one
  range can put the first page of the next range under writeback.
- No ordered-data mode: a log force never waits for other files' data.
- The log is written in small records (``journal.py``, xfs style) with PREFLUSH +
  FUA when barriers are on; xfsaild pushes the log tail in the background, so
  ``write()`` never waits for journal space.

Deliberately not modelled: speculative preallocation beyond EOF, AG selection,
log stripe unit padding, the per-AG locking.
"""
from __future__ import annotations

import numpy as np

from .file import DELALLOC, DIRTY, WRITEBACK
from .policy import FsPolicy

CLUSTER_PAGES = 64


class Xfs(FsPolicy):
    name = "xfs"
    delalloc = True
    journal_style = "xfs"
    write_starts_handle = False

    def alloc_keys(self, fs, f, pages, first_block):
        lay = fs.layout
        return {lay.bitmap(first_block), lay.inode(f.ino), lay.map_block(f.ino, int(pages[0]))}

    def on_write_holes(self, fs, f, holes: np.ndarray):
        f.state[holes] |= np.uint8(DELALLOC)
        return
        yield

    def size_changed(self, fs, f) -> None:
        pass    # logged at I/O completion (end_io)

    def cluster(self, fs, f, pages: np.ndarray) -> np.ndarray:
        """Extend each contiguous run forward over following dirty pages (<= 64)."""
        if pages.size == 0:
            return pages
        ends = np.concatenate((pages[:-1][np.diff(pages) != 1], pages[-1:]))
        extra = []
        st = f.state
        for e in ends.tolist():
            p = e + 1
            lim = min(f.cap, e + 1 + CLUSTER_PAGES)
            while p < lim and (st[p] & (DIRTY | WRITEBACK)) == DIRTY:
                p += 1
            if p > e + 1:
                extra.append(np.arange(e + 1, p))
        if not extra:
            return pages
        return np.unique(np.concatenate([pages] + extra))

    def end_io(self, fs, f, p0: int, n: int) -> None:
        super().end_io(fs, f, p0, n)
        end = min(f.size_bytes, (p0 + n) * 4096)
        if end > f.disksize_bytes:
            f.disksize_bytes = end
            fs.journal.dirty_meta((fs.layout.inode(f.ino),), f, datasync=True)
