"""The InnoDB server that reads and writes pages: tables on tablespace files, the buffer
pool that writes (``buffer``), redo with checkpoints (``redo`` + ``log_checkpoint``),
row locks, undo, and the commit path of ``commit_base`` (E2's protocols) for commits.

The statement path - what a transaction does, page by page - is ``statements.py``
(``StatementPath``, which ``InnoDBServer`` is built on).

Status (``status()``): SHOW GLOBAL STATUS names; ``stats()`` the same for the metric
columns. Deliberately not modelled: purge as work, the adaptive hash index, foreign keys, statement rollback
other than a deadlock victim's, MVCC read views (consistent reads cost nothing extra).
"""
from __future__ import annotations

from ....sim import Semaphore
from ..btree import PAGE_USABLE_BYTES
from ..tablespace import PAGE_SIZE
from ..commit_base import Statement
from ..log_checkpoint import LogCheckpointer
from ..ops import TableDef
from ..buffer.cleaner import BackgroundFlusher
from ..buffer.dblwr import Doublewrite
from ..buffer.flush import Flusher
from ..buffer.pool import WritePool
from .append import RightEndInserts
from .autoextend import Autoextend
from .ibuf import ChangeBuffer
from .files import DataFiles
from .layout import TableLayout
from .locks import LockTable
from .series import Series
from .statements import REDO_BYTES, UNDO_BYTES, StatementPath
from .status import global_status
from . import warmup


class InnoDBServer(StatementPath):
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
