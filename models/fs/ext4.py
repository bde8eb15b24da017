"""ext4 (jbd2 journal, extents, delayed allocation; Linux 2.6.32+).

- Delayed allocation: ``write()`` only reserves; blocks are allocated when the pages
  are written back, in one extent per contiguous run, and the on-disk size
  (``i_disksize``) advances with the allocation. The allocating transaction files the
  inode on its ordered list, so its commit waits for those (already submitted) data
  writes - nothing else.
- Unwritten extents: ``fallocate`` allocates blocks marked unwritten (read as
  zeros); the first write to them converts the extent when the I/O completes, a
  metadata change that ``fdatasync`` must commit - so a fallocated file costs like an
  append on the first pass, and only a zero-filled one is a true overwrite.
- ``write()`` updates the inode timestamps under a journal handle (nanosecond
  fields, advancing per jiffy), so a ``write()`` can wait for a checkpoint when the
  journal is short of space (see ``journal.py``).
- Barriers on by default: a commit ends with FLUSH + FUA; an ``fsync`` that needs no
  commit issues a FLUSH of its own.

Deliberately not modelled: the multi-block allocator's preallocation windows,
``journal_async_commit``, ``auto_da_alloc`` on rename/truncate, extent-tree depth.
"""
from __future__ import annotations

import numpy as np

from .file import DELALLOC
from .policy import FsPolicy


class Ext4(FsPolicy):
    name = "ext4"
    delalloc = True
    journal_style = "jbd2"

    def alloc_keys(self, fs, f, pages, first_block):
        lay = fs.layout
        return {lay.bitmap(first_block), lay.group_desc(first_block), lay.inode(f.ino),
                lay.map_block(f.ino, int(pages[0]))}

    def on_write_holes(self, fs, f, holes: np.ndarray):
        f.state[holes] |= np.uint8(DELALLOC)
        return
        yield

    def size_changed(self, fs, f) -> None:
        # i_disksize follows allocation (ext4_da_write_end updates it only for
        # already-mapped pages); the in-memory size change alone is not journalled.
        last = (f.size_bytes - 1) // 4096
        if f.block[last] >= 0 and not f.state[last] & DELALLOC:
            super().size_changed(fs, f)

    def allocate_on_writeback(self, fs, f, pages: np.ndarray):
        yield from fs.journal.start_handle()
        yield from fs.allocate(f, pages)
        end = min(f.size_bytes, (int(pages[-1]) + 1) * 4096)
        if end > f.disksize_bytes:
            f.disksize_bytes = end
        if self.cfg.data == "ordered":
            fs.journal.add_ordered(f)
