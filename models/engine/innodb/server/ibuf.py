"""The change (insert) buffer: ``ibuf0ibuf.c`` of MySQL 5.1 / 5.5 / 5.6.

- **Buffering** (``ibuf_insert``): a change to a leaf of a NON-UNIQUE secondary index
  (``TableDef.unique`` lists the unique ones) whose page is not in the buffer pool is
  not applied to the leaf - the leaf is not read. The change is recorded as an entry
  of the ibuf B-tree in ibdata1 instead: that ibuf page and the table's ibuf bitmap
  page (page 1 of its tablespace) are fetched if needed and dirtied. Which changes
  qualify is ``innodb_change_buffering``: ``inserts`` (an index entry inserted: a row
  insert, the new value of an ``update_index``), ``deletes`` (an entry delete-marked: a
  row delete, the old value of an ``update_index``), ``changes`` (both), ``purges``
  (the purge's physical removal - purge is not modelled as work, so the same as
  ``none`` here), ``all``, ``none``. 5.1 (the built-in InnoDB and the Plugin) buffers
  inserts only.
- **Size**: the ibuf tree's pages hold its entries (the secondary entry plus the ibuf
  record's own fields, ``IBUF_REC_OVERHEAD_BYTES``) at the average fill of a B-tree
  grown by random inserts (ln 2, Yao 1978). A page the tree needs beyond those it had
  is allocated in ibdata1 (its root is page 4): from the free pages after the undo ring
  up to ``innodb_data_file_path``'s size, then at the end of the file (``autoextend``:
  the change buffer grows ibdata1 - by 64 MB at a time in 5.6); pages it no longer needs
  stay on its free list. At its maximum size -
  ``innodb_change_buffer_max_size`` % of the pool (5.6, default 25), half the pool
  before 5.6 (``IBUF_POOL_SIZE_PER_MAX_SIZE``) - nothing more is buffered: the change
  reads the leaf.
- **Merge** (``ibuf_merge_or_delete_for_page``): when a leaf with buffered entries is
  read into the pool - by any thread, for any reason - the entries are applied at the
  read's completion, before waiters see the page: the leaf, the ibuf page and the
  bitmap page are dirtied in one mini-transaction (redo per entry), the entries leave
  the ibuf.
- **Background merge** (the master thread's ``ibuf_contract_for_n_pages`` /
  ``ibuf_contract_in_background``): reads leaves that have entries, up to
  ``IBUF_MAX_N_PAGES_MERGED`` (8) at a time from one position of the ibuf tree
  (``ibuf_get_merge_page_nos``; the position moves round the tree instead of being
  random); the merge happens at their read completion as above. How many, per version
  (``PCT_IO(p)``: p % of ``innodb_io_capacity``; 5.1's built-in InnoDB has no
  ``innodb_io_capacity``, its figures are those of 100):

  - 5.1, 5.5, XtraDB 5.1 / 5.5 (``srv0srv.c``; XtraDB merges ``PCT_IBUF_IO(5)``: times
    ``innodb_ibuf_accel_rate`` %): each second ``PCT_IO(5)`` leaves only if
    the server looks idle - fewer than ``PCT_IO(3)`` I/Os pending and fewer than
    ``PCT_IO(5)`` done during the second's sleep (``SRV_PEND_IO_THRESHOLD``,
    ``SRV_RECENT_IO_ACTIVITY``; I/Os as the flushing policy counts them: log writes,
    pages read, pages written) - and every ten seconds ``PCT_IO(5)`` "even if the
    server were active". Under load that is ``PCT_IO(5)`` per ten seconds.
  - 5.6 (``srv_master_do_active_tasks``): every second ``PCT_IO(5)``, plus
    ``PCT_IO(100 * (size - max/2) / (max + 1))`` when the ibuf is more than half its
    maximum size; in a second without user activity (``srv_master_do_idle_tasks``; here:
    no transaction committed or rolled back) ``PCT_IO(100)``.

  The reads are issued and not waited for (``sync`` = FALSE), except in 5.1's
  built-in InnoDB, whose master thread waits for each batch. The loop is a thread of
  its own keeping its own second, not a step of the flushing thread's loop.

Status (``stats``): Percona's ``Innodb_ibuf_*`` names where they exist
(``Innodb_ibuf_size``, ``Innodb_ibuf_free_list``, ``Innodb_ibuf_segment_size``,
``Innodb_ibuf_merges``, ``Innodb_ibuf_merged_inserts``, ``Innodb_ibuf_merged_delete_marks``
- SHOW ENGINE INNODB STATUS's "merges", "merged operations: insert, delete mark");
the model's own: ``Innodb_ibuf_buffered_inserts`` / ``_delete_marks`` (changes
buffered), ``Innodb_ibuf_entries`` (entries waiting), ``Innodb_ibuf_full`` (changes
refused because the ibuf was at its maximum size).

Deliberately not modelled: the ibuf's own latches (``ibuf_mutex``, the pessimistic
insert and its ``ibuf_pessimistic_insert_mutex``), the free-space bits of the bitmap
(a buffered insert never finds its leaf too full), the user thread's synchronous
contraction above the maximum size (``ibuf_contract_after_insert``), the master
thread's background loop before 5.6 when the server has had no user activity (purge,
``PCT_IO(100)`` leaves merged, ``PCT_IO(100)`` pages flushed while above
``innodb_max_dirty_pages_pct``), XtraDB's ``innodb_ibuf_max_size`` and
``innodb_ibuf_active_contract``, the purge's buffered deletes, the ibuf pages' own
ordering beyond the target page's position.
"""
from __future__ import annotations

import math
from bisect import bisect_left

from ....sim import all_of
from ..btree import PAGE_USABLE_BYTES
from ..buffer.cleaner import TEN_SECOND_LOOPS
from .files import PAGE_MASK, SPACE_SHIFT
from .layout import PK_BYTES, REC_HEADER_BYTES

CHANGE_BUFFERING = ("none", "inserts", "deletes", "changes", "purges", "all")
# the operations each innodb_change_buffering value buffers (purges: not modelled)
BUFFERED_OPS = {"none": frozenset(), "inserts": frozenset(("insert",)),
                "deletes": frozenset(("delete_mark",)),
                "changes": frozenset(("insert", "delete_mark")),
                "purges": frozenset(), "all": frozenset(("insert", "delete_mark"))}
# ibuf record besides the secondary entry: space id 4, marker 1, page no 4, the
# counter / type / flags 4, and 6 bytes of type information per field (2 fields)
IBUF_REC_OVERHEAD_BYTES = 4 + 1 + 4 + 4 + 2 * 6
IBUF_FILL = math.log(2)            # a B-tree grown by random inserts (Yao 1978)
IBUF_MAX_N_PAGES_MERGED = 8        # IBUF_MERGE_AREA
IBUF_POOL_SIZE_PER_MAX_SIZE = 2    # 5.1 / 5.5: the ibuf at most half the pool
IBUF_BITMAP_PAGE_NO = 1            # FSP_IBUF_BITMAP_OFFSET
FSP_IBUF_TREE_ROOT_PAGE_NO = 4     # the ibuf tree's root: page 4 of ibdata1
MERGE_REDO_BYTES_PER_ENTRY = 40    # the applied record's MLOG_*_REC_* + the ibuf delete
SECOND_NS = 1_000_000_000


class ChangeBuffer:
    """The change buffer of ``server`` (an ``InnoDBServer``)."""

    def __init__(self, server) -> None:
        cfg = server.cfg
        self.server = server
        self.sim = server.sim
        self.ops = BUFFERED_OPS[cfg.change_buffering]
        self.max_pages = cfg.change_buffer_max_pages
        self.generation = cfg.generation
        self.sync = cfg.version == "5.1"        # the built-in InnoDB waits for its reads
        self.accel_rate = cfg.innodb_ibuf_accel_rate    # XtraDB; 100 elsewhere
        self.pending: dict[int, list] = {}     # leaf -> [inserts, delete marks, bytes]
        self.bytes = 0                          # bytes of the entries waiting
        self.pages = [FSP_IBUF_TREE_ROOT_PAGE_NO]   # ibuf tree pages (ibdata1): the root first
        self._offsets: dict[int, int] = {}      # space -> first ordinal of its pages
        self._total = 1
        self._cursor = 0
        self._running = False
        # counters
        self.buffered_inserts = 0
        self.buffered_delete_marks = 0
        self.merges = 0
        self.merged_inserts = 0
        self.merged_delete_marks = 0
        self.full = 0
        self.background_reads = 0

    # -- sizes ----------------------------------------------------------------------------
    @staticmethod
    def entry_bytes(tdef) -> int:
        return tdef.key_bytes + PK_BYTES + REC_HEADER_BYTES + IBUF_REC_OVERHEAD_BYTES

    def size_pages(self) -> int:
        """Pages the ibuf tree's entries fill (``ibuf->size``; at least its root)."""
        return max(1, -(-self.bytes // int(PAGE_USABLE_BYTES * IBUF_FILL)))

    def wants(self, op: str, tdef, index: str) -> bool:
        """Whether a change ``op`` (``insert`` / ``delete_mark``) of ``index`` may be
        buffered: the mode buffers it, the index is not unique, the ibuf is not full."""
        if op not in self.ops or index in tdef.unique:
            return False
        if self.size_pages() >= self.max_pages:
            self.full += 1
            return False
        return True

    def ibuf_page(self, leaf: int) -> int:
        """The ibuf tree page whose key range holds entries for ``leaf``: the tree is
        ordered by (space, page no), its pages spread evenly over that order."""
        if not self._offsets:
            n = 0
            for tbl in sorted(self.server.tables.values(), key=lambda t: t.space):
                self._offsets[tbl.space] = n
                n += tbl.next_free_page + 1
            self._total = max(1, n)
        space = leaf >> SPACE_SHIFT
        pos = self._offsets.get(space, 0) + (leaf & PAGE_MASK)
        n = min(len(self.pages), self.size_pages())
        return self.pages[min(n - 1, pos * n // self._total)]

    @staticmethod
    def bitmap_page(leaf: int) -> int:
        return (leaf >> SPACE_SHIFT) << SPACE_SHIFT | IBUF_BITMAP_PAGE_NO

    # -- buffering ------------------------------------------------------------------------
    def grow(self, nbytes: int):
        """Generator: the ibuf tree pages ``nbytes`` more of entries need, allocated at
        the end of ibdata1 (a new page of space 0; the file may have to grow)."""
        srv = self.server
        need = max(1, -(-(self.bytes + nbytes) // int(PAGE_USABLE_BYTES * IBUF_FILL)))
        while len(self.pages) < need:
            page = srv.files.system_alloc_page()
            self.pages.append(page)
            srv.fresh.add(page)
            yield from srv.autoextend.allocate(page)
            yield from srv._touch((page,))

    def insert(self, buffered, changed):
        """Generator: ``ibuf_insert`` of each change of ``buffered`` (``(leaf, op, entry
        bytes)``, chosen by ``InnoDBServer._change`` before its pages were fetched): its
        ibuf page and the bitmap page join ``changed``; a leaf read into the pool
        meanwhile takes the change itself."""
        pool = self.server.pool
        for leaf, op, nbytes in buffered:
            if pool.resident(leaf):
                if leaf not in changed:
                    changed.append(leaf)
                continue
            yield from self.grow(nbytes)
            self.add(leaf, op, nbytes)
            for p in (self.ibuf_page(leaf), self.bitmap_page(leaf)):
                if p not in changed:
                    changed.append(p)

    def add(self, leaf: int, op: str, nbytes: int) -> None:
        """Record the change ``op`` for ``leaf`` (its pages were fixed by the caller)."""
        e = self.pending.get(leaf)
        if e is None:
            e = self.pending[leaf] = [0, 0, 0]
        e[2] += nbytes
        if op == "insert":
            e[0] += 1
            self.buffered_inserts += 1
        else:
            e[1] += 1
            self.buffered_delete_marks += 1
        self.bytes += nbytes

    # -- merging --------------------------------------------------------------------------
    def merge(self, leaf: int):
        """Generator: ``ibuf_merge_or_delete_for_page`` of ``leaf``, just read into the
        pool: its entries applied, the ibuf page and the bitmap page dirtied."""
        e = self.pending.pop(leaf, None)
        if e is None:
            return
        srv = self.server
        n = e[0] + e[1]
        pages = [leaf, self.bitmap_page(leaf), self.ibuf_page(leaf)]
        self.bytes -= e[2]
        yield from srv.cpu.run(srv.cfg.page_access_cycles * (len(pages) + n))
        yield from srv._fix(pages)
        lsn = yield from srv.redo.append(n * MERGE_REDO_BYTES_PER_ENTRY,
                                         srv.cfg.mtr_commit_cycles)
        for p in pages:
            srv.pool.modify(p, lsn)
        self.merges += 1
        self.merged_inserts += e[0]
        self.merged_delete_marks += e[1]

    def start(self) -> None:
        if not self._running and self.ops:
            self._running = True
            self.sim.spawn(self._loop(), "ibuf_contract")

    def stop(self) -> None:
        self._running = False

    def _loop(self):
        """The master thread's background merge, once a second (module docstring)."""
        srv = self.server
        policy = srv.cleaner.policy
        second = 0
        while self._running:
            n_ios_old = policy.n_ios()
            activity_old = srv.trx_committed + srv.trx_rollbacks
            yield SECOND_NS
            if not self._running:
                return
            second += 1
            idle = srv.trx_committed + srv.trx_rollbacks == activity_old
            n = self.background_pages(policy, policy.n_ios() - n_ios_old,
                                      second % TEN_SECOND_LOOPS == 0, idle)
            yield from self.contract(n)

    def background_pages(self, policy, recent_ios: int, ten_second: bool,
                         idle: bool = False) -> int:
        """Leaves the master thread merges this second: ``recent_ios`` I/Os were done
        during its sleep; ``ten_second``: its 10-second part runs too (5.1 / 5.5);
        ``idle``: no transaction ended during the second (5.6's idle tasks)."""
        if self.generation == "5.6":
            if idle:
                return policy.pct_io(100)
            n = policy.pct_io(5)
            half = self.max_pages // 2
            size = self.size_pages()
            if size > half:
                n += policy.pct_io((size - half) * 100 // (self.max_pages + 1))
            return n
        n = 0
        if policy.n_pending_ios() < policy.pct_io(3) and recent_ios < policy.pct_io(5):
            n += self._pct_ibuf_io(policy, 5)
        if ten_second:
            n += self._pct_ibuf_io(policy, 5)
        return n

    def _pct_ibuf_io(self, policy, pct: float) -> int:
        """XtraDB's ``PCT_IBUF_IO(p)``: p % of ``innodb_io_capacity`` times
        ``innodb_ibuf_accel_rate`` % (``PCT_IO(p)`` at the default 100, and elsewhere)."""
        if self.accel_rate == 100:
            return policy.pct_io(pct)
        return int(policy.io_capacity * self.accel_rate * (pct / 10000.0))

    def contract(self, n_pages: int):
        """Generator: ``ibuf_contract_for_n_pages(sync, n_pages)``: batches of leaves with
        entries read until ``n_pages`` were picked or none is left to read."""
        done = 0
        issued: set[int] = set()    # read by this call and not started yet (async)
        while done < n_pages and self.pending:
            batch = self._pick(issued)
            if not batch:
                break
            issued.update(batch)
            procs = self._read(batch)
            if self.sync:
                yield all_of(self.sim, procs)
            done += len(batch)

    def _pick(self, issued=()) -> list[int]:
        """``ibuf_get_merge_page_nos``: up to 8 leaves with entries from the cursor's
        position in (space, page no) order, not in the pool, not being read and not in
        ``issued``; the cursor moves on past them."""
        pool = self.server.pool
        keys = sorted(self.pending)
        i = bisect_left(keys, self._cursor)
        if i >= len(keys):
            i = 0
        out = []
        for p in keys[i:i + IBUF_MAX_N_PAGES_MERGED]:
            if pool.resident(p) or p in pool.reading or p in issued:
                continue
            out.append(p)
        self._cursor = keys[min(len(keys) - 1, i + IBUF_MAX_N_PAGES_MERGED - 1)] + 1
        return out

    def _read(self, pages) -> list:
        """``buf_read_ibuf_merge_pages``: the reads issued together; their processes."""
        srv = self.server
        self.background_reads += len(pages)
        return [self.sim.spawn(srv.pool.fetch(p), "ibuf_merge_read") for p in pages]

    def stats(self) -> dict:
        size = self.size_pages()
        return {
            "Innodb_ibuf_size": size,
            "Innodb_ibuf_free_list": max(0, len(self.pages) - size),
            "Innodb_ibuf_segment_size": len(self.pages),
            "Innodb_ibuf_merges": self.merges,
            "Innodb_ibuf_merged_inserts": self.merged_inserts,
            "Innodb_ibuf_merged_delete_marks": self.merged_delete_marks,
            "Innodb_ibuf_buffered_inserts": self.buffered_inserts,            # *
            "Innodb_ibuf_buffered_delete_marks": self.buffered_delete_marks,  # *
            "Innodb_ibuf_entries": sum(e[0] + e[1] for e in self.pending.values()),  # *
            "Innodb_ibuf_full": self.full,                                    # *
            "Innodb_ibuf_background_reads": self.background_reads,            # *
        }
