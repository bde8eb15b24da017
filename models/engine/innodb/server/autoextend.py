"""Data files that grow: ``fsp_fill_free_list`` / ``fsp_try_extend_data_file`` (fsp0fsp.c)
and ``fil_extend_space_to_desired_size`` (fil0fil.c) of MySQL 5.1 / 5.5 / 5.6.

Every tablespace has a size (``FSP_SIZE``, pages) and a free limit (``FSP_FREE_LIMIT``:
the pages below it are in the extent free lists). A thread that allocates a page past
the free limit (a B+tree page split at the end of a growing table, a new leaf of a
TPC-C district) fills the free list (``fsp_fill_free_list``): when fewer than
``FSP_FREE_ADD`` (4) extents lie between the free limit and the size, it first extends
the file, then moves the free limit up by at most 4 extents (64 pages each). The
extension:

- ibdata1 (space 0, ``innodb_data_file_path`` ``...:autoextend``): by
  ``innodb_autoextend_increment`` MB (8 in 5.1 / 5.5, 64 in 5.6).
- an .ibd: below one extent page by page (``fsp_try_extend_data_file_with_pages``: a
  new table's first 64 pages are fragment pages, the file grows to the page allocated),
  then one extent (1 MB) at a time below 32 MB, then ``FSP_FREE_ADD`` extents (4 MB) -
  the rule of MySQL bug #31592 (before it, .ibd files grew by the ibdata increment).
- ``fil_extend_space_to_desired_size``: the allocating thread writes zeros over the
  extension through the file (synchronous writes of at most 64 pages, 1 MB, each; O_DIRECT
  with ``innodb_flush_method=O_DIRECT`` as every data-file write), then ``fil_flush``:
  an ``fsync`` of the file (with ``nosync`` too: ``fil_flush`` does not look at the
  method; not with ``O_DIRECT_NO_FSYNC``, whose
  ``fil_flush`` skips tablespaces in 5.6 - extension included). The writes go through the filesystem's
  allocation path (blocks allocated, extents converted, the size journalled), so later
  page writes of the extension overwrite allocated blocks.
- The tablespace's latch is held throughout: another thread that allocates in the same
  tablespace meanwhile waits for the extension to finish (``FileGrowth.busy``).

A loaded table's file ends at its last page (``FSP_SIZE`` = the pages the load used;
the free limit the last whole extent below it): the load left no headroom, so the
first page allocated past the load extends the file. Counters (this model's own, no
MySQL status variable counts them): extensions, pages and bytes of zeros written, the
fsyncs (also in ``Innodb_data_fsyncs``, as ``fil_flush`` counts them), and the time
threads spent extending or waiting for an extension.

Deliberately not modelled: the ``fil_system->mutex`` that 5.1 / 5.5 hold across the zero
writes (every other data-file I/O of the server waits behind an extension there);
``innodb_use_fallocate`` (5.7+); several ibdata files and ``:max:``; the undo ring
(``undo_ring_pages``, inside ibdata1: purge keeps up, it never grows the file); tables
inside ibdata1 (``innodb_file_per_table=0``) grow into the pages after their load
(``TableLayout`` allocates per table) - only pages past the end of ibdata1 extend it;
the zero writes are not in ``Innodb_data_written`` (``fil_extend_space_to_desired_size``
calls ``os_aio`` directly, not ``fil_io``).
"""
from __future__ import annotations

from .files import PAGE_MASK, SPACE_SHIFT
from ..tablespace import PAGE_SIZE

FSP_EXTENT_SIZE = 64           # pages of an extent (16 KB pages: 1 MB)
FSP_FREE_ADD = 4               # extents fsp_fill_free_list adds at a time
EXTEND_WRITE_PAGES = 64        # fil_extend_space_to_desired_size: 1 MB per write
IBD_SMALL_PAGES = 32 * FSP_EXTENT_SIZE     # below 32 MB an .ibd grows 1 MB at a time


class FileGrowth:
    """``FSP_SIZE`` and ``FSP_FREE_LIMIT`` of one file (pages), and the extension in
    progress (``busy``: an event that fires when it is done)."""

    __slots__ = ("space", "system", "size", "limit", "busy")

    def __init__(self, space: int, system: bool, size_pages: int) -> None:
        self.space = space
        self.system = system
        self.size = size_pages
        if system or size_pages >= FSP_EXTENT_SIZE:
            self.limit = size_pages - size_pages % FSP_EXTENT_SIZE
        else:                  # fsp_header_init: the first extent's descriptor is set up
            self.limit = FSP_EXTENT_SIZE
        self.busy = None


def ibd_increment(size_pages: int) -> int:
    """Pages ``fsp_try_extend_data_file`` adds to an .ibd of ``size_pages`` (>= 1 extent)."""
    return FSP_EXTENT_SIZE if size_pages < IBD_SMALL_PAGES else FSP_FREE_ADD * FSP_EXTENT_SIZE


class Autoextend:
    """The growth of the server's data files (``files``: its ``DataFiles``); ``sim`` for
    the events a waiting allocator sleeps on; ``increment_pages``: ibdata1's
    ``innodb_autoextend_increment`` in pages; ``fsync``: ``fil_flush`` after the zeros."""

    def __init__(self, sim, files, increment_pages: int, fsync: bool) -> None:
        self.sim = sim
        self.files = files
        self.increment_pages = increment_pages
        self.fsync = fsync
        self.growth: dict[int, FileGrowth] = {}     # home space (0: ibdata1) -> state
        self.extensions = 0
        self.pages_extended = 0
        self.zero_writes = 0
        self.fsyncs = 0
        self.extend_ns = 0          # time allocating threads spent extending
        self.wait_ns = 0            # time allocating threads waited for another's extension
        self.waits = 0

    def _state(self, page: int) -> tuple[FileGrowth, int]:
        """The growth state of the file ``page`` is in, and its page number in the file."""
        files = self.files
        space = page >> SPACE_SHIFT
        f = files.files[space]
        home = 0 if f is files.files.get(0) else space
        st = self.growth.get(home)
        if st is None:
            st = self.growth[home] = FileGrowth(home, home == 0, files.created_pages[home])
        return st, files.base[space] + (page & PAGE_MASK)

    def allocate(self, page: int):
        """Generator: the allocation of ``page`` (a page id never used before) by the
        calling thread: extends its file first when the page lies past the free limit
        and the file has fewer than 4 free extents above it (module docstring)."""
        st, fp = self._state(page)
        if st.busy is None and fp < st.limit and fp < st.size:
            return                              # the common case: no time passes
        t0 = self.sim.now_ns
        while st.busy is not None:              # the tablespace latch: another extends
            self.waits += 1
            yield st.busy
        if t0 != self.sim.now_ns:
            self.wait_ns += self.sim.now_ns - t0
        if fp < st.limit and fp < st.size:
            return
        target, limit = self._target(st, fp)
        if target > st.size:
            st.busy = self.sim.event()
            t1 = self.sim.now_ns
            try:
                yield from self._extend(st, target)
            finally:
                ev, st.busy = st.busy, None
                ev.succeed()
            self.extend_ns += self.sim.now_ns - t1
        st.limit = max(st.limit, limit)

    def _increment(self, st: FileGrowth, size: int) -> int:
        return self.increment_pages if st.system else ibd_increment(size)

    def _target(self, st: FileGrowth, fp: int) -> tuple[int, int]:
        """(size, free limit) of the file once page ``fp`` is allocated: the size grows
        when ``fsp_fill_free_list`` finds fewer than 4 extents above the free limit."""
        size, limit = st.size, st.limit
        if not st.system and fp < FSP_EXTENT_SIZE and size < FSP_EXTENT_SIZE:
            return max(size, fp + 1), limit     # fsp_alloc_free_page: a fragment page
        if st.system and not self.files.autoextend:
            return size, limit          # a fixed ibdata1: the write goes past its end
        while limit <= fp:
            if size < limit + FSP_EXTENT_SIZE * FSP_FREE_ADD:      # fsp_try_extend_data_file
                if not st.system and size < FSP_EXTENT_SIZE:
                    size = FSP_EXTENT_SIZE      # fsp_try_extend_data_file_with_pages first
                size += self._increment(st, size)
            new = min(limit + FSP_EXTENT_SIZE * FSP_FREE_ADD, size - size % FSP_EXTENT_SIZE)
            if new <= limit:
                break
            limit = new
        return size, limit

    def _extend(self, st: FileGrowth, target: int):
        """Generator: ``fil_extend_space_to_desired_size``: zeros from the file's size to
        ``target`` pages, 1 MB per synchronous write, then ``fil_flush``."""
        files = self.files
        f = files.files[st.space]
        start = st.size
        self.pages_extended += target - start
        while start < target:
            n = min(EXTEND_WRITE_PAGES, target - start)
            yield f.fs.pwrite(f, start * PAGE_SIZE, n * PAGE_SIZE, direct=files.direct)
            self.zero_writes += 1
            start += n
            st.size = start
        self.extensions += 1
        if self.fsync:
            files.fsyncs += 1
            self.fsyncs += 1
            yield f.fs.fsync(f)

    def stats(self) -> dict:
        """Counters (this model's own names, marked * in ``status``)."""
        return {
            "Innodb_data_file_extensions": self.extensions,
            "Innodb_data_file_extension_writes": self.zero_writes,
            "Innodb_data_file_extension_pages": self.pages_extended,
            "Innodb_data_file_extension_fsyncs": self.fsyncs,
            "Innodb_data_file_extension_time": self.extend_ns / 1e6,
            "Innodb_data_file_extension_waits": self.waits,
            "Innodb_data_file_extension_wait_time": self.wait_ns / 1e6,
        }
