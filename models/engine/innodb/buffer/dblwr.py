"""The doublewrite buffer (``buf0dblwr.cc``): two blocks of 64 pages in the system
tablespace (``TRX_SYS_DOUBLEWRITE_BLOCK1`` / ``_BLOCK2``: pages 64..127 and 128..191 of
ibdata1).

- **Batch flush** (``buf_dblwr_flush_buffered_writes``): the pages of a flush batch are
  copied into the buffer; each time it is full (or the batch ends) the copies are
  written sequentially to the first block and, beyond 64 pages, to the second (two
  writes), ibdata1 is synced (``fil_flush(TRX_SYS_SPACE)``), and only then are the pages
  written to their home positions. MySQL 5.6 keeps ``srv_doublewrite_batch_size``
  (120) slots for batches and the last 8 for single-page flushes; 5.1 / 5.5 use all
  128 for batches.
- **Single-page flush** (5.6 ``buf_dblwr_write_single_page``): the page is written
  to one of the single-page slots and ibdata1 synced, then written home and its
  tablespace synced.
- ``innodb_flush_method=O_DIRECT_NO_FSYNC`` (5.6 ``fil_buffering_disabled``): the
  ``fil_flush(TRX_SYS_SPACE)`` after the copies returns without an fsync (``fsync``
  False); the copies are still written first (synchronous writes, O_DIRECT).
- ``Innodb_dblwr_writes`` counts the doublewrite flushes (batches and single pages),
  ``Innodb_dblwr_pages_written`` the pages copied.

Deliberately not modelled: the copy's CPU (a memcpy of 16 KB per page), page
checksums, crash recovery from the buffer.
"""
from __future__ import annotations

TRX_SYS_DOUBLEWRITE_BLOCK1 = 64
TRX_SYS_DOUBLEWRITE_BLOCK_SIZE = 64
DOUBLEWRITE_PAGES = 2 * TRX_SYS_DOUBLEWRITE_BLOCK_SIZE
SRV_DOUBLEWRITE_BATCH_SIZE_56 = 120


class Doublewrite:
    """``files``: the server's ``DataFiles`` (space 0 is ibdata1); ``fsync``: whether
    ``fil_flush(TRX_SYS_SPACE)`` syncs ibdata1 (``InnoDBServerConfig.fil_buffering_disabled``)."""

    def __init__(self, files, version: str, fsync: bool = True) -> None:
        self.files = files
        self.fsync = fsync
        self.batch_pages = (SRV_DOUBLEWRITE_BATCH_SIZE_56 if version == "5.6"
                            else DOUBLEWRITE_PAGES)
        self.single_slots = DOUBLEWRITE_PAGES - self.batch_pages
        self._next_single = 0
        self.writes = 0           # Innodb_dblwr_writes
        self.pages_written = 0    # Innodb_dblwr_pages_written

    def write_batch(self, n: int):
        """Generator: ``n`` (<= ``batch_pages``) copies to the buffer, then ibdata1 synced."""
        files = self.files
        first = min(n, TRX_SYS_DOUBLEWRITE_BLOCK_SIZE)
        yield files.write_run(0, TRX_SYS_DOUBLEWRITE_BLOCK1, first)
        if n > first:
            yield files.write_run(0, TRX_SYS_DOUBLEWRITE_BLOCK1 + TRX_SYS_DOUBLEWRITE_BLOCK_SIZE,
                                  n - first)
        if self.fsync:
            yield files.fsync(0)
        self.writes += 1
        self.pages_written += n

    def write_single(self):
        """Generator: one page into a single-page slot, then ibdata1 synced."""
        slots = self.single_slots or DOUBLEWRITE_PAGES
        slot = self.batch_pages % DOUBLEWRITE_PAGES + self._next_single % slots
        self._next_single += 1
        yield self.files.write_run(0, TRX_SYS_DOUBLEWRITE_BLOCK1 + slot, 1)
        if self.fsync:
            yield self.files.fsync(0)
        self.writes += 1
        self.pages_written += 1
