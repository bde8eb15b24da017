"""The server's data files on the filesystem (``fil0fil.cc``, ``os0file.cc``).

- ``system`` (ibdata1, the first file of ``innodb_data_file_path``): the doublewrite
  buffer (pages 64..191), ``undo_ring_pages`` undo pages from page 256, and - without ``innodb_file_per_table`` - the
  tables. Space id 0.
- ``tablespace``: one ``<table>.ibd`` per table with ``innodb_file_per_table`` (space
  ids from 1), placed on the filesystem ``placement.tablespace`` names.
- A file its filesystem has no room for is refused before it is created (``check_room``):
  ibdata1 at its ``innodb_data_file_path`` size when the server is built (on
  ``innodb_data_file_path``), each table's .ibd - or ibdata1 grown to hold the tables
  without ``innodb_file_per_table`` - as the tables are laid out (on
  ``placement.tablespace`` / ``placement.system``: the tables' size is the workload's).
  ibdata1 is created last (``open``), so the room it needs is kept from the .ibd files
  on its filesystem.
- Files are created as the loaded database left them (written, allocated, synced,
  not cached: ``Filesystem.create(preallocate="zero_fill")``); a write beyond the end
  extends the file through the filesystem's allocation path.
- ``innodb_flush_method``: ``O_DIRECT`` / ``O_DIRECT_NO_FSYNC`` / ``ALL_O_DIRECT`` open
  data files O_DIRECT (no page cache), every other method buffered; ``fsync`` follows
  data writes except with ``O_DIRECT_NO_FSYNC``, and a checkpoint's except with
  ``nosync`` too (the callers' choice: ``InnoDBServerConfig.data_fsync`` /
  ``checkpoint_fsync`` / ``fil_buffering_disabled``).

A page id is ``space << 32 | page_no``. Growth (``innodb_autoextend_increment``, the
.ibd steps): ``autoextend.py`` - the thread that allocates a page past a file's free
limit writes the extension's zeros and fsyncs first. Deliberately not modelled: several
ibdata files, raw partitions.
"""
from __future__ import annotations

from ....device.request import READ, IORequest
from ....fs.config import PAGE_BYTES
from ....fs.direct import direct_bios
from ....fs.file import UNWRITTEN
from .. import check_room
from ..tablespace import PAGE_SIZE

SPACE_SHIFT = 32
UNDO_FIRST_PAGE = 256       # after the doublewrite buffer (64..191) and the dictionary
PAGE_MASK = (1 << SPACE_SHIFT) - 1


FS_PAGES = PAGE_SIZE // PAGE_BYTES


def _page_bios(f, off: int) -> list:
    """The bios of one 16 KB O_DIRECT page read: one, when its blocks are contiguous
    and written (a preallocated tablespace), else ``direct_bios``'."""
    p0 = off // PAGE_BYTES
    block, state = f.block, f.state
    if p0 + FS_PAGES <= len(block):
        b0 = int(block[p0])
        if (b0 >= 0 and int(block[p0 + FS_PAGES - 1]) == b0 + FS_PAGES - 1
                and not (state[p0:p0 + FS_PAGES] & UNWRITTEN).any()):
            return [IORequest(READ, b0 * PAGE_BYTES, PAGE_SIZE, None, True, False, 0)]
    return direct_bios(f.fs, f, READ, off, PAGE_SIZE, 0)


class DataFiles:
    """``fs_system`` / ``fs_tablespace``: the ``models.fs.Filesystem`` objects of the two
    file classes (may be the same)."""

    def __init__(self, cfg, fs_system, fs_tablespace) -> None:
        self.cfg = cfg
        self.fs_system = fs_system
        self.fs_tablespace = fs_tablespace
        self.direct = cfg.data_direct
        self.name, self.system_bytes, self.autoextend = cfg.data_file()
        self.files: dict[int, object] = {}       # space id -> File
        self.base: dict[int, int] = {}           # space id -> first page in its file
        self.created_pages: dict[int, int] = {}  # space id -> pages its file was created with
        self.undo_pages = cfg.undo_ring_pages
        self.system_pages = max(self.system_bytes // PAGE_SIZE, UNDO_FIRST_PAGE + self.undo_pages)
        if self.system_pages * PAGE_SIZE > self.system_bytes and not self.autoextend:
            raise ValueError("innodb_data_file_path: ibdata1 must hold the doublewrite buffer "
                             f"and {self.undo_pages} undo pages, or autoextend")
        check_room(fs_system, self.name, self.system_pages * PAGE_SIZE, "innodb_data_file_path",
                   "a smaller innodb_data_file_path, or placement.system on a larger device")
        self._pending_system: list[tuple[int, int]] = []
        self.system_next_page = 0                # ibdata1's next page past its end
        # free pages of ibdata1 between the undo ring and its configured size
        self._system_free = UNDO_FIRST_PAGE + self.undo_pages
        self._system_free_end = max(self._system_free, self.system_bytes // PAGE_SIZE)
        self.reads = 0                           # Innodb_data_reads
        self.writes = 0                          # Innodb_data_writes
        self.bytes_read = 0
        self.bytes_written = 0
        self.bytes_written_by_space: dict[int, int] = {}
        self.fsyncs = 0

    def add_table(self, space: int, name: str, n_pages: int) -> None:
        """Lay out a table of ``n_pages`` (before ``open``): its own .ibd, or pages of
        ibdata1 (autoextended to hold it)."""
        if self.cfg.innodb_file_per_table:
            pending = (self.system_pages * PAGE_SIZE
                       if self.fs_tablespace is self.fs_system and 0 not in self.files else 0)
            check_room(self.fs_tablespace, f"{name}.ibd", n_pages * PAGE_SIZE,
                       "placement.tablespace", "fewer or smaller tables, or "
                       "placement.tablespace on a larger device", reserved=pending)
            self.files[space] = self.fs_tablespace.create(f"{name}.ibd", n_pages * PAGE_SIZE,
                                                          preallocate="zero_fill")
            self.base[space] = 0
            self.created_pages[space] = n_pages
        else:
            if not self.autoextend:
                raise ValueError("innodb_data_file_path: ibdata1 is too small for the tables "
                                 "and has no autoextend")
            check_room(self.fs_system, f"{self.name} with the tables",
                       (self.system_pages + n_pages) * PAGE_SIZE, "placement.system",
                       "fewer or smaller tables, or placement.system on a larger device")
            self._pending_system.append((space, self.system_pages))
            self.system_pages += n_pages

    def open(self) -> None:
        """Create ibdata1 (at the size the tables inside it need)."""
        if 0 in self.files:
            return
        self.files[0] = self.fs_system.create(self.name, self.system_pages * PAGE_SIZE,
                                              preallocate="zero_fill")
        self.base[0] = 0
        self.created_pages[0] = self.system_pages
        self.system_next_page = self.system_pages
        for space, base in self._pending_system:
            self.files[space] = self.files[0]
            self.base[space] = base

    def system_alloc_page(self) -> int:
        """A page of ibdata1 never used (the change buffer's tree grows there): the free
        pages after the undo ring up to the file's configured size (before the tables
        inside it), then new pages at its end."""
        page = self._system_free
        if page < self._system_free_end:
            self._system_free += 1
            return page
        page = self.system_next_page
        self.system_next_page += 1
        return page

    def _where(self, page: int):
        space = page >> SPACE_SHIFT
        return space, self.files[space], (self.base[space] + (page & PAGE_MASK)) * PAGE_SIZE

    def read(self, page: int):
        space, f, off = self._where(page)
        self.reads += 1
        self.bytes_read += PAGE_SIZE
        return f.fs.pread(f, off, PAGE_SIZE, direct=self.direct)

    def read_batch(self, pages, on_done) -> None:
        """One ``io_submit()`` of page reads (native AIO, the read-ahead's): with O_DIRECT
        the bios of every page go to the block layer under one plug, so neighbours merge;
        buffered, one ``pread`` each. ``on_done(page)`` as each page completes."""
        bios_by_fs: dict[int, tuple] = {}
        for page in pages:
            space, f, off = self._where(page)
            self.reads += 1
            self.bytes_read += PAGE_SIZE
            if not self.direct:
                f.fs.pread(f, off, PAGE_SIZE).add_callback(lambda _v, p=page: on_done(p))
                continue
            bios = _page_bios(f, off)
            left = [len(bios)]

            def done(_bio, p=page, left=left):
                left[0] -= 1
                if left[0] == 0:
                    on_done(p)
            for bio in bios:
                bio.on_done = done
            bios_by_fs.setdefault(id(f.fs), (f.fs, []))[1].extend(bios)
        for fs, bios in bios_by_fs.values():
            # a full request queue makes the submitter's bios wait in the block layer
            fs.queue.submit(bios if len(bios) > 1 else bios[0], plug=len(bios) > 1)

    def write(self, page: int):
        space, f, off = self._where(page)
        return self._pwrite(space, f, off, PAGE_SIZE)

    def write_run(self, space: int, first_page: int, n_pages: int):
        """One write of ``n_pages`` consecutive pages of ``space``."""
        f = self.files[space]
        return self._pwrite(space, f, (self.base[space] + first_page) * PAGE_SIZE,
                            n_pages * PAGE_SIZE)

    def _pwrite(self, space: int, f, off: int, size: int):
        self.writes += 1
        self.bytes_written += size
        home = 0 if f is self.files.get(0) else space
        self.bytes_written_by_space[home] = self.bytes_written_by_space.get(home, 0) + size
        return f.fs.pwrite(f, off, size, direct=self.direct)

    def distinct_spaces(self, spaces) -> list[int]:
        """One space per file among ``spaces`` (tables inside ibdata1 share its fsync)."""
        seen, out = set(), []
        for sp in sorted(spaces):
            f = self.files[sp]
            if id(f) not in seen:
                seen.add(id(f))
                out.append(sp)
        return out

    def fsync(self, space: int):
        f = self.files[space]
        self.fsyncs += 1
        return f.fs.fsync(f)

    def system_bytes_written(self) -> int:
        """Bytes written to ibdata1 (doublewrite, undo, tables inside it)."""
        return self.bytes_written_by_space.get(0, 0)
