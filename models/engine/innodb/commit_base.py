"""The commit path of MySQL + InnoDB: a transaction's commit, from the server's
``ha_commit_trans`` to the acknowledged commit. The base owns the redo log, the binary
log, the shared latches and the statistics; a protocol subclass (``commit_<protocol>.py``)
decides only how the two-phase commit between InnoDB and the binary log is ordered and
locked. The InnoDB server (``server.InnoDBServer``) runs the statements - a mysqlslap
INSERT through the right-most leaf's latches (``server.append``, ``latches``) - and
commits each transaction here.

What every protocol shares (MySQL 5.1 ``ha_commit_trans`` and InnoDB):

- **No binary log** (``log_bin=0``): no two-phase commit (a single participant):
  ``innobase_commit`` appends the commit record and flushes the log per
  ``innodb_flush_log_at_trx_commit``; flushes are shared through
  ``log_write_up_to``.
- **Two-phase commit** (binary log on): ``prepare`` in InnoDB
  (``trx_prepare_off_kernel``: the undo header gets state PREPARED and the XID, about
  ``PREPARE_REDO_BYTES`` of redo, then write/fsync per
  ``innodb_flush_log_at_trx_commit``; skipped entirely with ``innodb_support_xa=0``),
  the binlog write (the transaction coordinator's ``log_xid``), then ``commit`` in
  InnoDB (``trx_commit_off_kernel``: ``COMMIT_REDO_BYTES`` of redo, locks released).
  Both take ``kernel_mutex``, ``rseg->mutex`` and ``log_sys->mutex`` on the way
  (``latches``), competing with the statements of the other clients.

CPU figures are cycles of the server's cores (``models.engine.cpu``), the same for
every experiment; they are estimates of MySQL 5.1's code path on a 2009 Xeon (a
single-row autocommitted INSERT costs a few tens of microseconds of one core,
excluding I/O waits; mysqlslap/sysbench single-thread rates with durability off are
some 10-30 thousand statements/s). ``CommitConfig`` splits them into the parts done
under a shared latch and the rest, with the reasoning for each.

Deliberately not modelled: row-lock waits (the statements of different clients
touch different rows), the latches ``latches`` names as not modelled
(``buf_pool->mutex``, ``btr_search_latch``, ``LOCK_open``, ...), the query cache,
statement parsing as a function of text length, rollback.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

from ...checks import at_least
from ...metrics.latency import LatencyRecorder
from ...sim import Simulator
from .binlog import Binlog, BinlogConfig, trx_event_bytes
from .latches import InnoDBLatches
from .redo import RedoConfig, RedoLog

PROTOCOLS = ("mysql51_builtin", "innodb_plugin_104", "mysql56_binlog_group_commit")
# Redo written by prepare: undo-header state and the XID (XIDDATASIZE 128 + 12 bytes
# of formatID/lengths, an MLOG_WRITE_STRING record) plus the state byte records.
PREPARE_REDO_BYTES = 170
# Redo written by commit: undo-segment state / history-list records of trx_commit.
COMMIT_REDO_BYTES = 60

CYCLE_KEYS = ("trx_start_cycles",
              "lock_table_cycles", "lock_queue_step_cycles", "lock_rec_cycles",
              "row_id_cycles", "autoinc_cycles", "btr_search_cycles", "undo_assign_cycles",
              "undo_record_cycles", "page_insert_cycles", "page_split_cycles",
              "mtr_commit_cycles", "kernel_mutex_cycles", "prepare_cycles",
              "binlog_cycles", "commit_cycles", "lock_release_cycles",
              "undo_cleanup_cycles")
_REDO_KEYS = tuple(f.name for f in fields(RedoConfig))
_BINLOG_KEYS = tuple(f.name for f in fields(BinlogConfig))


@dataclass(frozen=True)
class CommitConfig:
    """The engine's configuration: MySQL/InnoDB variables under their own names, the
    commit protocol, and CPU costs in cycles.

    ``commit_protocol``: ``mysql51_builtin`` | ``innodb_plugin_104`` |
    ``mysql56_binlog_group_commit``. ``innodb_support_xa``: two-phase commit with the
    binary log (prepare record + fsync). ``innodb_autoinc_lock_mode``: 1
    (consecutive, the 5.1 default) or 2 (interleaved); 0 (traditional: the AUTO-INC
    table lock kept to the end of the statement) is not modelled.
    ``binlog_order_commits`` (5.6): the commit stage leader commits the group in
    binlog order. The redo-log keys are those of
    ``RedoConfig``, the binary-log keys those of ``BinlogConfig``. ``log_files_cached``:
    the redo log files' pages are in the page cache at start (see ``fs_open_file``).

    CPU per operation, cycles of a 2.8 GHz 2009 Xeon (~0.36 ns each; a cache line
    owned by another core costs ~100-300 cycles to fetch, an uncontended InnoDB
    mutex enter + exit ~100). A single-row INSERT totals ~70,000 (25 us), its prepare
    ~3,000, its commit ~7,000-8,000:

    - the statement outside InnoDB's shared latches (recv/send of the packets, parse,
      table open and ``mysql_lock_tables``, row conversion, the binlog event into the
      session cache, the reply) is the server's ``stmt_cycles`` (50,000).
    - under ``kernel_mutex``: ``trx_start_cycles`` (1,000: rollback segment, trx id,
      trx list; the shared lines of trx_sys), ``lock_table_cycles`` (1,200: allocate
      and link the IX ``lock_t``) plus ``lock_queue_step_cycles`` (130) for every
      lock in t1's queue that ``lock_table_other_has_incompatible`` - and, at commit,
      ``lock_table_dequeue`` - steps over: a pointer chase through ``lock_t`` structs
      written by other cores, mostly a cache-to-cache transfer each;
      ``lock_rec_cycles`` (600: ``lock_rec_insert_check_and_lock`` - the rec-lock
      hash probe for the next record - or the update's ``lock_rec_lock``);
      ``lock_release_cycles`` (800: ``lock_release_off_kernel``, free the lock heap);
      ``kernel_mutex_cycles`` (300: the short sections - state changes, trx list
      removal, ``trx_n_prepared``).
    - ``row_id_cycles`` (300): ``dict_sys_get_new_row_id`` under ``dict_sys->mutex``;
      with an AUTO_INCREMENT key instead ``autoinc_cycles`` (600:
      ``innobase_lock_autoinc`` .. ``innobase_get_autoinc`` and the counter update,
      under the table's ``autoinc_mutex``; ``innodb_autoinc_lock_mode`` 1 or 2 - for
      a simple INSERT both take only that mutex).
    - ``btr_search_cycles`` (3,000): the descent under ``index->lock`` S - two levels
      of page-directory binary search and record compares, ``buf_page_get`` of each.
    - under the leaf latch: ``undo_record_cycles`` (3,000: build the undo-insert
      record in the undo page), ``page_insert_cycles`` (3,500: record conversion,
      ``page_cur_insert_rec_low``, directory slots, the redo record), or
      ``page_split_cycles`` (40,000 ~ 14 us: ``fseg_alloc_free_page`` searching the
      extent descriptors, ``buf_page_create`` + ``page_create``, the node pointer into
      the parent, sibling links, lock-table update for the split).
    - under ``rseg->mutex``: ``undo_assign_cycles`` (2,500: reuse a cached insert undo
      log, its header rewritten), ``prepare_cycles`` (1,200: undo state PREPARED and
      the XID), ``commit_cycles`` (3,000: undo state at finish, the binlog file name
      and offset into the trx-sys header), ``undo_cleanup_cycles`` (1,500:
      ``trx_undo_insert_cleanup`` caching the undo log).
    - ``mtr_commit_cycles`` (1,200): each mini-transaction's redo copy into the log
      buffer, dirty-page bookkeeping and page-latch release, under ``log_sys->mutex``.
    - ``binlog_cycles`` (6,000): the BEGIN / statement / Xid events copied from the
      session cache into the binlog's IO_CACHE under LOCK_log.

    The kernel's share of write()/fsync() is charged by the filesystem layer.
    """

    commit_protocol: str = "mysql51_builtin"
    innodb_support_xa: bool = True
    binlog_order_commits: bool = True
    innodb_autoinc_lock_mode: int = 1
    # redo log (RedoConfig)
    innodb_flush_log_at_trx_commit: int = 1
    innodb_log_file_size: str = "512M"
    innodb_log_files_in_group: int = 2
    innodb_log_buffer_size: str = "1M"
    innodb_log_block_size: int = 512
    innodb_flush_method: str = "O_DIRECT"
    innodb_flush_log_at_timeout: int = 1
    innodb_sync_spin_loops: int = 20
    innodb_spin_wait_delay: int = 6
    log_files_cached: bool = True
    # binary log (BinlogConfig)
    log_bin: bool = True
    sync_binlog: int = 0
    max_binlog_size: str = "1G"
    binlog_cache_size: str = "32K"
    binlog_format: str = "STATEMENT"
    db_name: str = "mysqlslap"
    # CPU costs, cycles (see above)
    trx_start_cycles: int = 1_000
    lock_table_cycles: int = 1_200
    lock_queue_step_cycles: int = 130
    lock_rec_cycles: int = 600
    row_id_cycles: int = 300
    autoinc_cycles: int = 600
    btr_search_cycles: int = 3_000
    undo_assign_cycles: int = 2_500
    undo_record_cycles: int = 3_000
    page_insert_cycles: int = 3_500
    page_split_cycles: int = 40_000
    mtr_commit_cycles: int = 1_200
    kernel_mutex_cycles: int = 300
    prepare_cycles: int = 1_200
    binlog_cycles: int = 6_000
    commit_cycles: int = 3_000
    lock_release_cycles: int = 800
    undo_cleanup_cycles: int = 1_500

    def __post_init__(self) -> None:
        if self.commit_protocol not in PROTOCOLS:
            raise ValueError(f"commit_protocol: must be one of {', '.join(PROTOCOLS)}, "
                             f"got {self.commit_protocol!r}")
        if self.innodb_autoinc_lock_mode not in (1, 2):
            raise ValueError("innodb_autoinc_lock_mode: must be 1 or 2 (0, the AUTO-INC "
                             f"table lock, is not modelled), got {self.innodb_autoinc_lock_mode!r}")
        at_least(self, 0, *CYCLE_KEYS)
        self.redo()
        self.binlog()

    def redo(self) -> RedoConfig:
        return RedoConfig(**{k: getattr(self, k) for k in _REDO_KEYS})

    def binlog(self) -> BinlogConfig:
        return BinlogConfig(**{k: getattr(self, k) for k in _BINLOG_KEYS})


@dataclass(frozen=True)
class Statement:
    """One autocommitted single-row statement as the engine sees it.

    ``kind``: insert | update (selects the CPU cost); ``text_len``: SQL text length
    (STATEMENT binlog event); ``row_bytes``: row image (ROW binlog event);
    ``redo_bytes``: redo records of the row change and its undo record, of which
    ``undo_redo_bytes`` are the undo record's own mini-transaction; ``rec_bytes``:
    the clustered-index record an insert adds to its leaf page (compact format,
    header and hidden columns included); ``clustered_key``: ``row_id`` (no primary
    key: InnoDB's hidden ``DB_ROW_ID``) or ``auto_increment``."""

    kind: str
    text_len: int
    row_bytes: int
    redo_bytes: int
    undo_redo_bytes: int = 0
    rec_bytes: int = 0
    clustered_key: str = "row_id"


class Trx:
    __slots__ = ("id", "thd", "stmt", "binlog_bytes", "done", "committed", "start_ns", "undo")

    def __init__(self, trx_id: int, thd: int, stmt: Statement, binlog_bytes: int) -> None:
        self.id = trx_id
        self.thd = thd
        self.stmt = stmt
        self.binlog_bytes = binlog_bytes
        self.done = None
        self.committed = False
        self.start_ns = 0
        self.undo = False          # an undo log is assigned (trx_undo_assign_undo)


class CommitPath:
    """Base: runs statements and commits them; ``commit_2pc`` is the protocol's hook.

    ``open_file(name, size_bytes)`` creates a file on the filesystem ``fs`` and returns
    its handle (``size_bytes`` None for files that grow: binlogs and their index).
    Call ``start()`` before the first statement and ``stop()`` after the last.
    """

    name = "base"

    def __init__(self, sim: Simulator, cfg: CommitConfig, cpu, fs: Any,
                 open_file: Callable[[str, int | None], Any]) -> None:
        self.sim = sim
        self.cfg = cfg
        self.cpu = cpu
        self.fs = fs
        rcfg = cfg.redo()
        files = [open_file(f"ib_logfile{i}", rcfg.log_file_size_bytes)
                 for i in range(rcfg.innodb_log_files_in_group)]
        self.redo = RedoLog(sim, rcfg, fs, files, cpu)
        self.latches = InnoDBLatches(sim, cfg, cpu, self.redo)
        self.bcfg = cfg.binlog()
        self.binlog = (Binlog(sim, self.bcfg, fs, lambda n: open_file(n, None), cpu)
                       if cfg.log_bin else None)
        self.trx_committed = 0
        self.commit_lat = LatencyRecorder()
        self.measure_from_ns = 0
        self._binlog_bytes: dict[Statement, int] = {}

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Server start-up: the master thread, the first binlog file."""
        self.redo.start_master()
        if self.binlog is not None:
            self.sim.spawn(self.binlog.open(), "binlog_open")

    def stop(self) -> None:
        self.redo.stop_master()

    def _trx_binlog_bytes(self, stmt: Statement) -> int:
        n = self._binlog_bytes.get(stmt)
        if n is None:
            n = self._binlog_bytes[stmt] = trx_event_bytes(self.bcfg, [(stmt.text_len, stmt.row_bytes)])
        return n

    # -- the steps protocols are made of --------------------------------------------------
    def commit_2pc(self, trx: Trx):
        raise NotImplementedError

    def prepare(self, trx: Trx):
        """``innobase_xa_prepare`` -> ``trx_prepare_off_kernel``: the prepare record,
        then write/fsync per innodb_flush_log_at_trx_commit."""
        lsn = yield from self.latches.prepare_begin(trx, PREPARE_REDO_BYTES)
        yield from self.redo.commit_flush(lsn)
        yield from self.latches.prepare_end(trx)

    def binlog_write(self, trx: Trx):
        """``log_xid`` -> ``MYSQL_BIN_LOG::write`` of the session's cache (5.1)."""
        yield from self.cpu.run(self.cfg.binlog_cycles)
        yield from self.binlog.write_trx(trx.binlog_bytes)

    def commit_low(self, trx: Trx, flush: bool):
        """``innobase_commit_low``: the commit record; with ``flush`` the log is then
        written/fsynced per innodb_flush_log_at_trx_commit (otherwise the caller does
        it later, ``flush_log_later``, or never, HA_IGNORE_DURABILITY). Returns the LSN."""
        lsn = yield from self.latches.commit_begin(trx, COMMIT_REDO_BYTES)
        trx.committed = True
        if flush:
            yield from self.redo.commit_flush(lsn)
        yield from self.latches.commit_end(trx)
        return lsn

    # -- statistics ---------------------------------------------------------------------
    def stats(self) -> dict:
        out = {"protocol": self.name, "trx_committed": self.trx_committed}
        for k, v in self.redo.stats().items():
            out[f"redo.{k}"] = v
        if self.binlog is not None:
            for k, v in self.binlog.stats().items():
                out[f"binlog.{k}"] = v
        out.update(self.latches.stats())
        out.update(self.lock_stats())
        return out

    def lock_stats(self) -> dict:
        return {}
