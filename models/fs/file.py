"""A file: its size, its block map and the state of its pages, as compact numpy arrays.

Per page (4 KB, page index = file offset // 4096) one entry in each array, grown
geometrically as the file grows (1 GB = 262,144 pages = a few MB of arrays, no Python
object per page):

- ``state`` (uint8 flags): ``CACHED`` (in the page cache, up to date), ``DIRTY``,
  ``WRITEBACK`` (a write of it is in flight), ``DELALLOC`` (dirty, no block yet:
  ext4/xfs delayed allocation, zfs copy-on-write), ``UNWRITTEN`` (block allocated by
  ``fallocate``; reads as zeros until its extent is converted), ``HASDATA`` (the
  application wrote this page at least once: the data a crash could lose),
  ``LOCKED`` (a read of it is in flight), ``INTENT`` (zfs: not yet in the intent log).
- ``block``: physical 4 KB block on the device (-1 = hole / not allocated).
- ``lru``: page-cache access tick (for LRU eviction).
- ``wb``: id of the bio the page is in (valid while ``WRITEBACK`` or ``LOCKED``).
- ``wepoch``: flush epoch at which the page's current content reached the device
  (-1 = with FUA; ``NOT_ON_DEVICE`` while dirty or under writeback).
- ``meta_tid``: journal transaction that records the page's block mapping / extent
  state (0 = none needed); the mapping survives a crash once that tid is durable.
- ``otid``: ext3 ``data=ordered``: the transaction whose ordered-data list the page's
  buffer is filed on (0 = none; see ``ext3.py``).

The arrays cost ``STATE_BYTES_PER_PAGE`` (33) bytes a page, for every page of the file
whether a run touches it or not: a 1 TiB file is 9 GB of them. ``MAX_PAGES`` (2**25:
128 GiB of files, ~1.1 GB of arrays) bounds the files a workload lays out: one asked
for more refuses it as a config error naming its size key, rather than run out of
memory here (``models.workload.fio.buffered``).

Inode-level metadata: ``size_bytes`` (i_size in memory), ``sync_tid`` (last
transaction holding any change of the inode, timestamps included: what ``fsync``
must commit), ``datasync_tid`` (last one holding a size or allocation change: what
``fdatasync`` must commit), ``disksize_bytes`` (the size the next commit records:
ext3 updates it in ``write()``, ext4 when delayed allocation maps the blocks, xfs at
I/O completion), ``size_log`` (the size each commit recorded), ``dirtied_ns`` (when
the inode's oldest dirty page was dirtied, for ``dirty_expire_centisecs``), the
read-ahead state (``ra_*``, see ``buffered.py``), ``writeback_index`` (where the
flusher's next sweep of the file starts, ``writeback.py``), and the bounding windows
of its dirty and under-writeback pages (so that syncing a big file with few dirty
pages scans only those).
"""
from __future__ import annotations

import numpy as np

CACHED = 1
DIRTY = 2
WRITEBACK = 4
DELALLOC = 8
UNWRITTEN = 16
HASDATA = 32
LOCKED = 64      # a read of the page is in flight
INTENT = 128     # zfs: written since the last intent-log (ZIL) record of the page

# the per-page arrays: name, dtype, the value of a page not yet touched
ARRAYS = (("state", np.uint8, 0), ("block", np.int64, -1), ("lru", np.int64, 0),
          ("wb", np.int32, 0), ("wepoch", np.int32, 0), ("meta_tid", np.int32, 0),
          ("otid", np.int32, 0))
STATE_BYTES_PER_PAGE = sum(np.dtype(dtype).itemsize for _, dtype, _ in ARRAYS)
MAX_PAGES = 2**25    # of the files a workload lays out: ~1.1 GB of per-page arrays


class File:
    """One inode of a ``Filesystem``. Created by ``Filesystem.create``."""

    def __init__(self, fs, name: str, ino: int) -> None:
        self.fs = fs
        self.name = name
        self.ino = ino
        self.size_bytes = 0
        self.disksize_bytes = 0         # the size the next metadata commit records
        self.size_log: list[tuple[int, int]] = [(0, 0)]   # (tid, size) per commit
        self.zil_sizes: list[tuple[int, int]] = []        # zfs: (epoch, size) per ZIL commit
        self.cap = 0
        self.state = np.zeros(0, np.uint8)      # the arrays of ARRAYS, grown by ensure
        self.block = np.zeros(0, np.int64)
        self.lru = np.zeros(0, np.int64)
        self.wb = np.zeros(0, np.int32)
        self.wepoch = np.zeros(0, np.int32)
        self.meta_tid = np.zeros(0, np.int32)
        self.otid = np.zeros(0, np.int32)
        self.nr_cached = 0
        self.nr_dirty = 0
        self.nr_wb = 0
        # bounding windows of the dirty / under-writeback pages, so that fsync of a big
        # file with a few dirty pages does not scan all of its page arrays
        self.dirty_lo = self.dirty_hi = 0
        self.wb_lo = self.wb_hi = 0
        self.sync_tid = 0
        self.datasync_tid = 0
        self.dirtied_ns = -1            # -1 = no dirty pages
        self.mtime_s = -1               # last timestamp written to the inode (granularity s)
        # read-ahead (``struct file_ra_state``; the model opens each inode once, so
        # threads reading a file share it, as threads sharing one fd do): the current
        # window [ra_start, ra_start + ra_size), its last ra_async_size pages read
        # ahead of the reader, ra_prev_page (prev_pos >> PAGE_SHIFT, -1 = none) and the
        # pages carrying PG_readahead (the flag byte has no bit left: a set)
        self.ra_start = 0
        self.ra_size = 0
        self.ra_async_size = 0
        self.ra_prev_page = -1
        self.ra_marks: set[int] = set()
        # the window's maximum in pages as posix_fadvise set it (``Filesystem.fadvise``;
        # None: the device's read_ahead_kb)
        self.ra_pages: int | None = None
        # range_cyclic writeback (background, kupdate) resumes here
        # (``mapping->writeback_index``)
        self.writeback_index = 0

    # -- arrays ------------------------------------------------------------------------
    def ensure(self, npages: int) -> None:
        """Make the per-page arrays hold at least ``npages`` pages."""
        if npages <= self.cap:
            return
        cap = max(npages, self.cap * 2, 64)
        for attr, _dtype, fill in ARRAYS:
            old = getattr(self, attr)
            new = np.full(cap, fill, old.dtype)
            new[:self.cap] = old
            setattr(self, attr, new)
        self.cap = cap

    @property
    def npages(self) -> int:
        """Pages covered by the in-memory size."""
        return -(-self.size_bytes // 4096)

    def note_dirty(self, p0: int, p1: int) -> None:
        if self.nr_dirty == 0:
            self.dirty_lo, self.dirty_hi = p0, p1
        else:
            self.dirty_lo = min(self.dirty_lo, p0)
            self.dirty_hi = max(self.dirty_hi, p1)

    def note_wb(self, p0: int, p1: int) -> None:
        if self.nr_wb == 0:
            self.wb_lo, self.wb_hi = p0, p1
        else:
            self.wb_lo = min(self.wb_lo, p0)
            self.wb_hi = max(self.wb_hi, p1)

    def pages_with(self, flag: int, p0: int, p1: int) -> np.ndarray:
        """Indices of pages in [p0, p1) that have ``flag`` set."""
        if flag == 2:       # DIRTY
            if self.nr_dirty == 0:
                return np.zeros(0, np.int64)
            p0, p1 = max(p0, self.dirty_lo), min(p1, self.dirty_hi)
        elif flag == 4:     # WRITEBACK
            if self.nr_wb == 0:
                return np.zeros(0, np.int64)
            p0, p1 = max(p0, self.wb_lo), min(p1, self.wb_hi)
        elif flag == 6:     # DIRTY | WRITEBACK
            if self.nr_wb == 0 and self.nr_dirty == 0:
                return np.zeros(0, np.int64)
        p1 = min(p1, self.cap)
        if p1 <= p0:
            return np.zeros(0, np.int64)
        return np.flatnonzero(self.state[p0:p1] & flag) + p0

    def __repr__(self) -> str:
        return f"File({self.name!r}, size={self.size_bytes})"
