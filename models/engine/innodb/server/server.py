"""The InnoDB server that reads and writes pages: tables on tablespace files, the buffer
pool that writes (``buffer``), redo with checkpoints (``redo`` + ``log_checkpoint``),
row locks, undo, and the commit path of ``commit_base`` (E2's protocols) for commits.

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

Status (``status()``): SHOW GLOBAL STATUS names; ``stats()`` the same for the metric
columns. Deliberately not modelled: purge as work, the adaptive hash index, foreign keys, statement rollback
other than a deadlock victim's, MVCC read views (consistent reads cost nothing extra).
"""
from __future__ import annotations

from ....sim import Semaphore
from ..btree import PAGE_USABLE_BYTES
from ..tablespace import PAGE_SIZE
from ..commit_base import Statement, Trx
from ..log_checkpoint import LogCheckpointer
from ..ops import WRITE_KINDS, TableDef, Transaction
from ..buffer.cleaner import BackgroundFlusher
from ..buffer.dblwr import Doublewrite
from ..buffer.flush import Flusher
from ..buffer.pool import WritePool
from .append import RightEndInserts
from .autoextend import Autoextend
from .ibuf import ChangeBuffer
from .files import UNDO_FIRST_PAGE, DataFiles
from .layout import TableLayout
from .locks import Deadlock, LockTable
from .series import Series
from .status import global_status
from . import warmup

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


class InnoDBServer:
    """``cfg``: an ``InnoDBServerConfig``; ``commit_path``: a ``CommitPath`` on the same
    ``cpu`` (its redo log is the server's); ``fs_system`` / ``fs_tablespace``: the
    filesystems of ibdata1 and of the .ibd files."""

    def __init__(self, sim, cfg, cpu, commit_path, fs_system, fs_tablespace) -> None:
        self.sim = sim
        self.cfg = cfg
        self.cpu = cpu
        self.commit_path = commit_path
        self.redo = commit_path.redo
        self.files = DataFiles(cfg, fs_system, fs_tablespace)
        self.autoextend = Autoextend(sim, self.files,
                                     cfg.autoextend_increment_mb * 2**20 // PAGE_SIZE,
                                     cfg.data_fsync)
        self.pool = WritePool(sim, cfg.pool_pages, cfg.innodb_old_blocks_pct,
                              cfg.innodb_old_blocks_time, self._read)
        self.dblwr = (Doublewrite(self.files, cfg.generation, not cfg.fil_buffering_disabled)
                      if cfg.innodb_doublewrite else None)
        self.ibuf = ChangeBuffer(self)
        self.pool.ibuf = self.ibuf if self.ibuf.ops else None
        self.flusher = Flusher(sim, self.pool, self.files, self.redo, self.dblwr,
                               cfg.flush_neighbors, cfg.generation,
                               cfg.innodb_write_io_threads, cfg.data_fsync, cfg.native_aio)
        self.ckpt = LogCheckpointer(sim, self.redo, self.pool, self.flusher, self.files,
                                    cfg.generation, cfg.innodb_thread_concurrency,
                                    cfg.checkpoint_fsync)
        self.cleaner = BackgroundFlusher(sim, cfg, self.pool, self.flusher, self.ckpt)
        self.series = Series(sim, self)
        self.locks = LockTable(sim)
        self.conc = (Semaphore(sim, cfg.innodb_thread_concurrency, "srv_conc")
                     if cfg.innodb_thread_concurrency else None)
        self.tables: dict[str, TableLayout] = {}
        self.appends = RightEndInserts(self)
        self.next_space = 0                   # space ids: ibdata1 0, the tables from 1
        self.fresh: set[int] = set()          # created pages never written yet
        self.undo_seq = 0
        self.undo_used = PAGE_USABLE_BYTES    # the first record opens a page
        self.next_trx_id = 0
        self._stmts: dict[int, Statement] = {}
        self.started = False
        self._row_cycles = {"update_non_index": cfg.row_update_cycles,
                            "update_index": cfg.row_update_cycles,
                            "insert": cfg.row_insert_cycles, "delete": cfg.row_delete_cycles}
        # counters
        self.rows_read = 0
        self.rows_updated = 0
        self.rows_inserted = 0
        self.rows_deleted = 0
        self.trx_committed = 0      # every commit (Handler_commit)
        self.com_commit = 0         # COMMIT statements: explicit transactions (Com_commit)
        self.trx_rollbacks = 0

    # -- life cycle ------------------------------------------------------------------------
    def create_tables(self, tables) -> None:
        """The tables of ``tables`` (``ops.TableDef``), loaded: files laid out, nothing
        cached; an empty table (``rows=0``) as CREATE TABLE leaves it, its roots new pages."""
        if self.started:
            raise ValueError("create_tables: the server has started")
        for t in tables:
            if not isinstance(t, TableDef):
                raise TypeError(f"create_tables: expected TableDef, got {type(t).__name__}")
            if t.name in self.tables:
                raise ValueError(f"create_tables: table {t.name!r} defined twice")
            self.next_space += 1
            space = self.next_space
            layout = TableLayout(space, t)
            self.files.add_table(space, t.name, layout.n_pages)
            self.tables[t.name] = layout
            if t.rows == 0:      # CREATE TABLE: its root pages are created in the pool
                self.fresh.update(ix.space | ix.base[-1] for ix in layout.indexes.values())

    def create_tablespace(self, name: str, n_pages: int) -> int:
        """A table whose pages the caller lays out (the full scan's fragmented table from
        the layout builder): its file of ``n_pages`` as for ``create_tables``; returns the
        space id (pool page ids ``space << 32 | page_no``)."""
        if self.started:
            raise ValueError("create_tablespace: the server has started")
        self.next_space += 1
        self.files.add_table(self.next_space, name, n_pages)
        return self.next_space

    def preload(self) -> int:
        """Warm pool: every table's upper B+tree levels, then leaves, in free frames until
        the pool is full (``WritePool.preload``); call before ``start``. Returns pages."""
        pages = []
        for tbl in self.tables.values():
            for ix in tbl.indexes.values():
                for lvl in range(ix.height - 1, 0, -1):
                    base = ix.base[lvl]
                    n = 1 if lvl == ix.height - 1 else ix.level_pages[lvl]
                    pages += [ix.space | (base + i) for i in range(n)]
        for tbl in self.tables.values():
            for ix in tbl.indexes.values():
                pages += [ix.space | (ix.base[0] + i) for i in range(ix.n_leaves)]
        return self.pool.preload(pages)

    def warm_replay(self, transactions, turnovers: float) -> dict:
        """After ``preload``: replay the workload's ``transactions`` through the pool
        outside simulated time until it has turned over ``turnovers`` times, leaving it
        as a long run would (``warmup.replay``); call before ``start``."""
        return warmup.replay(self, transactions, turnovers,
                             {k: REDO_BYTES[k] + UNDO_BYTES[k] for k in REDO_BYTES})

    def warm_snapshot(self) -> dict:
        """After ``warm_replay``: what it left, to ``warm_restore`` into another server of
        the same configuration instead of replaying again (``warmup.snapshot``)."""
        return warmup.snapshot(self)

    def warm_restore(self, snap: dict) -> None:
        """After ``preload``, in place of ``warm_replay``: the state ``snap`` recorded."""
        warmup.restore(self, snap)

    def start(self) -> None:
        self.files.open()
        self.started = True
        self.commit_path.start()
        self.cleaner.start()
        self.ibuf.start()
        self.series.start()

    def interval_over(self) -> None:
        """The workload's measured interval has ended: the per-second series stops (the
        server runs on while a client finishes a transaction it is in)."""
        self.series.stop()

    def stop(self) -> None:
        self.commit_path.stop()
        self.cleaner.stop()
        self.ibuf.stop()
        self.series.stop()

    def _read(self, page: int):
        return self.files.read(page)

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

    def table_pages(self) -> dict[str, int]:
        """Pages of each table's .ibd: as loaded, plus the leaves allocated since."""
        return {name: tbl.next_free_page for name, tbl in self.tables.items()}

    # -- status ------------------------------------------------------------------------------
    def status(self) -> dict:
        """SHOW GLOBAL STATUS (``status.global_status``)."""
        return global_status(self)

    def stats(self) -> dict:
        """Metric columns: the status counters, the flusher's and the commit path's."""
        out = dict(self.status())
        for k, v in self.flusher.stats().items():
            out[f"flush.{k}"] = v
        for k, v in self.commit_path.stats().items():
            out[f"commit.{k}"] = v
        out["flushing_algorithm"] = self.cleaner.policy.name
        out.update(self.series.summary())
        return out

    def timeseries(self) -> list[dict]:
        """One row per simulated second (``series.Series``)."""
        return self.series.rows
