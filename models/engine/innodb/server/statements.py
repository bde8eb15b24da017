"""The statement path of the InnoDB server (``server.InnoDBServer`` is built on
``StatementPath``): a transaction's statements, page by page, through the buffer pool,
row locks, undo and redo, then the commit path.

What a transaction does (``yield from server.run(thd, trx)``, ``ops.Transaction``):

- ``BEGIN`` and ``COMMIT`` are statements (``stmt_cycles`` each) unless autocommit.
- Each operation is a statement: ``stmt_cycles`` on a core; a change first passes
  ``log_free_check`` (``LogCheckpointer.free_check``: the sync-point stall). Then the
  B+tree descent through the pool (``layout``): a point select root to leaf, a range
  the leaf chain after the first leaf, a read through a secondary index one primary
  lookup per row; each page is a read request (a miss reads it, taking a free frame,
  possibly flushing a page first). ``page_access_cycles`` per page, ``row_read_cycles``
  per row, ``sort_row_cycles`` per row of an ORDER BY / DISTINCT range.
- An insert past a table's loaded rows allocates a new leaf at the end of its file
  (``layout``); when the page lies past the file's free limit, the thread extends the
  file first (``autoextend``: zeros written, fsync) - other allocators wait.
- A change X-locks its row (``locks``; waits, deadlocks: the victim is rolled back
  and retried), dirties the clustered leaf - and the secondary leaves an index change
  touches: ``update_index`` moves an entry (delete-mark at ``k``, insert at ``k+1``),
  ``insert`` / ``delete`` change one entry of every secondary index; a non-unique
  secondary leaf that is not in the pool is not read: the change buffer (``ibuf``)
  records the change, merged when the leaf is read -, writes an undo
  record into the current undo page of ibdata1 (a new page every ~16 KB of undo,
  reused round a ring of ``undo_ring_pages``: purge is assumed to keep up), and
  appends its redo records (``REDO_BYTES`` + the undo record's) under
  ``log_sys->mutex``; the pages join the flush list at that LSN. The first change
  of a transaction starts it (``trx_start`` under ``kernel_mutex``) and assigns its undo
  log (``rseg->mutex``).
- The commit goes through the commit path of ``commit_protocol``: prepare / binlog /
  commit and the redo flush per ``innodb_flush_log_at_trx_commit``; the row locks are
  released once it returns. A read-only transaction commits without redo.
- ``innodb_thread_concurrency`` > 0: at most that many threads inside InnoDB; a thread
  enters for a whole transaction, each statement of an autocommit one
  (``srv_conc_enter_innodb``; tickets not modelled), leaves it while it waits for a row
  lock and re-enters without waiting (``lock_wait_suspend_thread``:
  ``srv_conc_force_exit_innodb`` / ``srv_conc_force_enter_innodb``), and leaves before
  COMMIT or ROLLBACK, so a commit's log flush holds no slot (``innobase_commit``).
- ``Transaction.rollback``: the client's ``ROLLBACK`` after the operations: the row
  locks are released, nothing commits (the undo is applied in place, not modelled as
  page work; its redo is not written), ``Com_rollback`` counts it.
"""
from __future__ import annotations

from ..btree import PAGE_USABLE_BYTES
from ..commit_base import Statement, Trx
from ..ops import WRITE_KINDS, Transaction
from .files import UNDO_FIRST_PAGE
from .layout import TableLayout
from .locks import Deadlock

SORT_VARIANTS = frozenset(("order", "distinct"))
# redo of the row change (MLOG_REC_UPDATE_IN_PLACE / _INSERT / _CLUST_DELETE_MARK and
# the secondary-index records; compact format: type, space, page, offset, the fields)
REDO_BYTES = {"update_non_index": 150, "update_index": 110, "insert": 250, "delete": 60}
# undo record (trx_undo_page_report_modify / _insert): header, the old values
UNDO_BYTES = {"update_non_index": 150, "update_index": 40, "insert": 30, "delete": 220}
BINLOG_STMT_BYTES = 80


class ServerTrx:
    __slots__ = ("id", "locks", "waiting_for", "ctrx", "writes", "conc")

    def __init__(self, trx_id: int) -> None:
        self.id = trx_id
        self.locks: list = []
        self.waiting_for = None
        self.ctrx: Trx | None = None      # the commit path's transaction, at first change
        self.writes = 0
        self.conc = None      # the innodb_thread_concurrency slot it holds (a Semaphore)


class StatementPath:
    """What ``InnoDBServer`` runs for a client: ``run`` and the page steps under it. A
    part of the server, not a server of its own: it works on the attributes
    ``InnoDBServer.__init__`` sets (``pool``, ``tables``, ``locks``, ``ckpt``, ``ibuf``,
    ``redo``, ``commit_path``, the undo ring and the counters)."""

    # -- pages -----------------------------------------------------------------------------
    def _hits(self, pages) -> int:
        """``buf_page_get`` of the leading pages of ``pages`` that are resident (no
        simulated time passes); returns the index of the first that is not (or the
        length): ``_touch`` takes it from there."""
        pool = self.pool
        old, young, access = pool.old, pool.young, pool.access
        i = 0
        for p in pages:
            if p not in old and p not in young:
                break
            access(p)
            i += 1
        pool.read_requests += i
        return i

    def _touch(self, pages):
        """Generator: ``buf_page_get`` of each page in turn."""
        pool = self.pool
        old, young = pool.old, pool.young
        for p in pages:
            pool.read_requests += 1
            if p in old or p in young:
                pool.access(p)
            elif p in self.fresh:
                self.fresh.discard(p)
                yield from pool.create(p)
            else:
                yield from pool.fetch(p)

    def _fix(self, pages):
        """Generator: every page resident and not being written (x-latchable)."""
        pool = self.pool
        for p in pages:
            while True:
                ev = pool.io_fixed.get(p)
                if ev is not None:
                    yield ev
                elif not pool.resident(p):
                    yield from self._touch((p,))
                else:
                    break

    def _undo_page(self, nbytes: int):
        """Generator: the undo page the record goes to (a new one when full)."""
        if self.undo_used + nbytes > PAGE_USABLE_BYTES:
            self.undo_seq += 1
            page = UNDO_FIRST_PAGE + self.undo_seq % self.cfg.undo_ring_pages
            self.undo_used = 0
            self.fresh.add(page)
        self.undo_used += nbytes
        return UNDO_FIRST_PAGE + self.undo_seq % self.cfg.undo_ring_pages

    # -- transactions ---------------------------------------------------------------------
    def run(self, thd: int, trx: Transaction):
        """Generator: run ``trx`` for client thread ``thd`` until it has committed."""
        if not trx.autocommit:
            return self._transaction(thd, trx.ops, True, trx.rollback)  # one frame less
        return self._autocommit(thd, trx)

    def _autocommit(self, thd: int, trx: Transaction):
        for op in trx.ops:
            yield from self._transaction(thd, (op,), False)

    def _transaction(self, thd: int, ops, explicit: bool, rollback: bool = False):
        cpu, cfg, conc = self.cpu, self.cfg, self.conc
        while True:
            self.next_trx_id += 1
            t = ServerTrx(self.next_trx_id)
            if conc is not None:          # srv_conc_enter_innodb
                ev = conc.acquire()
                if not ev.triggered:
                    yield ev
                t.conc = conc
            try:
                if explicit:
                    yield from cpu.run(cfg.stmt_cycles)          # BEGIN
                for op in ops:
                    yield from self._op(thd, t, op)
            except Deadlock:
                # the victim: rolled back (its changes undone in place, not modelled
                # as page work) and retried by the client
                self.locks.release_all(t)
                self.trx_rollbacks += 1
                yield from cpu.run(cfg.stmt_cycles)
                if t.conc is not None:
                    t.conc.release()
                continue
            if explicit:
                yield from cpu.run(cfg.stmt_cycles)              # COMMIT / ROLLBACK
            if t.conc is not None:
                # innobase_commit / innobase_rollback leave InnoDB's concurrency first
                # (srv_conc_force_exit_innodb): the commit's log waits hold no slot
                t.conc.release()
                t.conc = None
            if rollback:             # undone in place like a deadlock victim; no commit
                self.locks.release_all(t)
                self.trx_rollbacks += 1
                return
            if t.ctrx is not None:
                cp = self.commit_path
                t0 = self.sim.now_ns
                if cp.binlog is None:
                    yield from cp.commit_low(t.ctrx, flush=True)
                else:
                    yield from cp.commit_2pc(t.ctrx)
                cp.trx_committed += 1
                if t0 >= cp.measure_from_ns:
                    cp.commit_lat.add(self.sim.now_ns - t0)
            self.locks.release_all(t)
            self.trx_committed += 1
            self.com_commit += explicit
            return

    def _op(self, thd: int, t: ServerTrx, op):
        cfg, cpu = self.cfg, self.cpu
        tbl = self.tables[op.table]
        kind = op.kind
        if kind in WRITE_KINDS:
            yield from self.ckpt.free_check()
            if kind == "insert" and tbl.tdef.clustered_key != "primary":
                yield from self.appends.insert(thd, t, tbl, op)
            else:
                yield from self._change(thd, t, tbl, op)
            return
        rows = op.rows
        pages = tbl.read_pages(op)
        cycles = cfg.stmt_cycles + len(pages) * cfg.page_access_cycles + rows * cfg.row_read_cycles
        if op.variant in SORT_VARIANTS:
            cycles += rows * cfg.sort_row_cycles
        yield from cpu.run(cycles)
        i = self._hits(pages)
        if i < len(pages):
            yield from self._touch(pages[i:])
        self.rows_read += rows

    def _change(self, thd: int, t: ServerTrx, tbl: TableLayout, op):
        cfg, cpu, pool = self.cfg, self.cpu, self.pool
        kind, pk = op.kind, op.key
        yield from self.locks.lock(t, (op.table, pk))
        latches = self.commit_path.latches
        if t.ctrx is None:
            t.ctrx = Trx(t.id, thd, self._stmt(len(tbl.tdef.secondary)), 0)
            t.ctrx.binlog_bytes = self.commit_path._trx_binlog_bytes(t.ctrx.stmt)
            yield from latches.trx_start(t.ctrx)
        if kind == "insert" and pk > tbl.rows:
            page = tbl.grow(pk)                 # a new leaf at the right end
            if page is not None:
                self.fresh.add(page)
                yield from self.autoextend.allocate(page)     # the file may grow first
        buffered = []           # (leaf, op, entry bytes): changes the change buffer takes
        if self.ibuf.ops:
            tdef, ibuf, resident = tbl.tdef, self.ibuf, pool.resident

            def take(name, leaf, sop):
                if not resident(leaf) and ibuf.wants(sop, tdef, name):
                    buffered.append((leaf, sop, ibuf.entry_bytes(tdef)))
                    return True
                return False
            pages, changed = tbl.change_pages(op, take)
        else:
            pages, changed = tbl.change_pages(op)
        i = self._hits(pages)
        if i < len(pages):
            yield from self._touch(pages[i:])
        undo_bytes = UNDO_BYTES[kind]
        undo = self._undo_page(undo_bytes)
        changed.append(undo)
        if t.ctrx.undo is False:                    # trx_undo_assign_undo
            yield from latches._section(latches.rseg_mutex, cfg.undo_assign_cycles)
            t.ctrx.undo = True
        yield from cpu.run(cfg.stmt_cycles + (len(pages) + 2 * len(buffered)) * cfg.page_access_cycles
                           + cfg.lock_rec_cycles + cfg.undo_record_cycles + self._row_cycles[kind])
        if buffered:
            yield from self.ibuf.insert(buffered, changed)
        io_fixed, resident = pool.io_fixed, pool.resident
        if any(p in io_fixed or not resident(p) for p in changed):
            yield from self._fix(changed)
        lsn = yield from self.redo.append(REDO_BYTES[kind] + undo_bytes, cfg.mtr_commit_cycles)
        for p in changed:
            pool.modify(p, lsn)
        t.writes += 1
        if kind == "insert":
            self.rows_inserted += 1
        elif kind == "delete":
            self.rows_deleted += 1
        else:
            self.rows_updated += 1

    def _stmt(self, n_sec: int) -> Statement:
        s = self._stmts.get(n_sec)
        if s is None:
            s = self._stmts[n_sec] = Statement("update", BINLOG_STMT_BYTES, 200, 0)
        return s
