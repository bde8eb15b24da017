"""ext3 (jbd journal, Linux 2.6.18-2.6.3x as in RHEL 5).

- Blocks are allocated in ``write()`` (no delayed allocation): an append dirties the
  block bitmap, group descriptor, indirect block and inode in the running
  transaction, so ``fdatasync`` after an append must commit the journal.
- ``data=ordered``: every data buffer written during a transaction is filed on its
  ordered-data list (``journal_dirty_data``, at the tail, the first time in that
  transaction), and the commit writes them all - the dirty data of every file written
  since the last commit, not only the fsync'ed one. A journal commit forced by one
  small fsync therefore waits for the whole filesystem's dirty data (the ext3 fsync
  stall).
- The commit (``journal_submit_data_buffers``) submits the list's dirty buffers in
  list order - the order they were first written, not file order - one buffer at a
  time; a run of buffers adjacent on disk goes as one bio (what the elevator's back
  merge would make of them). When the request queue is full (``nr_requests``)
  kjournald sleeps, and the rest of the list stays dirty: the elevator can sort only
  what it holds. Random overwrites reach the disk as random writes unless
  ``nr_requests`` holds the whole list.
- A ``write()`` to a buffer that is still dirty on the committing transaction's list
  writes it out itself and waits (``sync_dirty_buffer`` in ``journal_dirty_data``),
  then files it on the running transaction; a buffer already under I/O is just
  refiled. With a short request queue a writer of random pages keeps landing on
  such buffers and waits behind the queue.
- 128-byte inodes: timestamps have one-second granularity.
- Mounted ``barrier=0`` by default (before Linux 3.1); no ``fallocate`` (glibc's
  ``posix_fallocate`` zero-fills).

Deliberately not modelled: the reservation windows of the block allocator,
``data=journal``, htree directories.
"""
from __future__ import annotations

import numpy as np

from .file import DIRTY, WRITEBACK
from .policy import FsPolicy
from .writeback import runs


class Ext3(FsPolicy):
    name = "ext3"
    journal_style = "jbd"
    timestamp_granularity_ns = 1_000_000_000

    def __init__(self, cfg) -> None:
        super().__init__(cfg)
        self.ordered_collisions = cfg.data == "ordered"

    def write_collides(self, fs, f, p0: int, p1: int) -> bool:
        """May pages [p0, p1) still be filed on the committing transaction's list (a
        one-page write: is it)?"""
        C = fs.journal.committing
        return C is not None and (p1 - p0 > 1 or f.otid.item(p0) == C.tid)

    def before_data_write(self, fs, f, p0: int, p1: int, issuer: int):
        """Generator (writer, before the copy): buffers of [p0, p1) still dirty on the
        committing transaction's list are written out by the writer, who waits."""
        C = fs.journal.committing
        if C is None or (p1 - p0 == 1 and f.otid[p0] != C.tid):
            return
        hit = np.flatnonzero(f.otid[p0:p1] == C.tid)
        if hit.size == 0:
            return
        hit += p0
        mine = yield from _write_filed(fs.writeback, f, hit, C.tid, issuer)
        if mine.size:                   # wait for what this writer wrote, not the rest
            fs.stats_ordered_sync_writes += int(mine.size)
            yield from fs.writeback.wait_pages(f, mine)

    def note_data_write(self, fs, f, p0, p1) -> None:
        if self.ordered_collisions:         # data=ordered
            fs.journal.file_data(f, p0, p1)

    def commit_ordered_data(self, fs, T):
        """Write the transaction's ordered-data list in list order, then wait for all
        of it, including buffers the flusher had under writeback."""
        wb = fs.writeback
        for f, pages in _segments(T.olist):
            yield from _write_filed(wb, f, pages, T.tid, 0)
        for f, pages in T.olist:
            mine = pages[f.otid[pages] == T.tid]
            if mine.size:
                yield from wb.wait_pages(f, mine)
        for f, pages in T.olist:
            f.otid[pages[f.otid[pages] == T.tid]] = 0
        T.olist = []


def _segments(olist):
    """The list as (file, pages) segments: consecutive filings of one file joined."""
    out = []
    for f, pages in olist:
        if out and out[-1][0] is f:
            out[-1][1].append(pages)
        else:
            out.append((f, [pages]))
    return [(f, np.concatenate(p) if len(p) > 1 else p[0]) for f, p in out]


def _write_filed(wb, f, pages: np.ndarray, tid: int, issuer: int):
    """Generator: submit the buffers of ``pages`` still filed on ``tid`` and dirty, in
    order, a run adjacent in the file and on disk at a time: each submission may sleep
    for a free request, and the state of the rest is looked at again after it (other
    threads write buffers out meanwhile). Returns the pages submitted."""
    done = []
    for s, e in runs(pages, f.block[pages]):
        run = pages[s:e]
        otid, state = f.otid, f.state   # (a sleep below may let a writer grow them)
        if e - s == 1:                  # one buffer (random writes): scalar tests
            p = run[0]
            if otid[p] != tid or (state[p] & (DIRTY | WRITEBACK)) != DIRTY:
                continue
        else:
            run = run[(otid[run] == tid) & ((state[run] & (DIRTY | WRITEBACK)) == DIRTY)]
        if run.size:
            done.append(run)
            yield from wb.write_pages(f, run, True, issuer)
    return np.concatenate(done) if done else pages[:0]
