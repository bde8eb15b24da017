"""The commit path of MySQL + InnoDB: one autocommitted statement from execution to the
acknowledged commit. The base owns the statement's CPU, the redo log, the binary log,
the statistics; a protocol subclass (``commit_<protocol>.py``) decides only how the
two-phase commit between InnoDB and the binary log is ordered and locked.

What every protocol shares (MySQL 5.1 ``ha_commit_trans`` and InnoDB):

- **Statement**: the server thread is woken by the client's query packet (one
  wake-up), executes the statement on a core (``insert_row_cycles`` /
  ``update_row_cycles``: parse, open table, row change, undo record, client protocol)
  and appends the row change's redo records to the log buffer (``mtr_commit``).
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

CPU figures are cycles of the server's cores (``models.engine.cpu``), the same for
every experiment; they are estimates of MySQL 5.1's code path on a 2009 Xeon (a
single-row autocommitted INSERT costs a few tens of microseconds of one core,
excluding I/O waits; mysqlslap/sysbench single-thread rates with durability off are
some 10-30 thousand statements/s).

Deliberately not modelled: row-lock and auto-increment-lock waits (the statements of
different clients touch different rows), ``kernel_mutex`` and other short InnoDB
latches, the query cache, statement parsing as a function of text length, rollback.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

from ...metrics.latency import LatencyRecorder
from ...sim import Simulator
from .binlog import Binlog, BinlogConfig, trx_event_bytes
from .redo import RedoConfig, RedoLog

PROTOCOLS = ("mysql51_builtin", "innodb_plugin_104", "mysql56_binlog_group_commit")
# Redo written by prepare: undo-header state and the XID (XIDDATASIZE 128 + 12 bytes
# of formatID/lengths, an MLOG_WRITE_STRING record) plus the state byte records.
PREPARE_REDO_BYTES = 170
# Redo written by commit: undo-segment state / history-list records of trx_commit.
COMMIT_REDO_BYTES = 60

_REDO_KEYS = tuple(f.name for f in fields(RedoConfig))
_BINLOG_KEYS = tuple(f.name for f in fields(BinlogConfig))


@dataclass(frozen=True)
class CommitConfig:
    """The engine's configuration: MySQL/InnoDB variables under their own names, the
    commit protocol, and CPU costs in cycles.

    ``commit_protocol``: ``mysql51_builtin`` | ``innodb_plugin_104`` |
    ``mysql56_binlog_group_commit``. ``innodb_support_xa``: two-phase commit with the
    binary log (prepare record + fsync). ``binlog_order_commits`` (5.6): the commit
    stage leader commits the group in binlog order. The redo-log keys are those of
    ``RedoConfig``, the binary-log keys those of ``BinlogConfig``. ``log_files_cached``:
    the redo log files' pages are in the page cache at start (see ``fs_open_file``).

    CPU per operation (cycles): ``insert_row_cycles`` / ``update_row_cycles`` (a
    single-row statement without its commit), ``prepare_cycles``
    (``trx_prepare_off_kernel``), ``binlog_cycles`` (copying the session cache and the
    Xid event into the binlog under LOCK_log), ``commit_cycles``
    (``trx_commit_off_kernel``). The kernel's share of write()/fsync() is charged by
    the filesystem layer.
    """

    commit_protocol: str = "mysql51_builtin"
    innodb_support_xa: bool = True
    binlog_order_commits: bool = True
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
    # CPU costs, cycles
    insert_row_cycles: int = 70_000
    update_row_cycles: int = 90_000
    prepare_cycles: int = 3_000
    binlog_cycles: int = 6_000
    commit_cycles: int = 8_000

    def __post_init__(self) -> None:
        if self.commit_protocol not in PROTOCOLS:
            raise ValueError(f"commit_protocol: must be one of {', '.join(PROTOCOLS)}, "
                             f"got {self.commit_protocol!r}")
        for key in ("insert_row_cycles", "update_row_cycles", "prepare_cycles",
                    "binlog_cycles", "commit_cycles"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key}: must be >= 0, got {getattr(self, key)}")
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
    ``redo_bytes``: redo records of the row change and its undo record."""

    kind: str
    text_len: int
    row_bytes: int
    redo_bytes: int


class Trx:
    __slots__ = ("id", "thd", "stmt", "binlog_bytes", "done", "committed", "start_ns")

    def __init__(self, trx_id: int, thd: int, stmt: Statement, binlog_bytes: int) -> None:
        self.id = trx_id
        self.thd = thd
        self.stmt = stmt
        self.binlog_bytes = binlog_bytes
        self.done = None
        self.committed = False
        self.start_ns = 0


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
        self.bcfg = cfg.binlog()
        self.binlog = (Binlog(sim, self.bcfg, fs, lambda n: open_file(n, None), cpu)
                       if cfg.log_bin else None)
        self.cycles = {"insert": cfg.insert_row_cycles, "update": cfg.update_row_cycles}
        self.trx_started = 0
        self.trx_committed = 0
        self.statement_lat = LatencyRecorder()
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

    # -- one autocommitted statement -------------------------------------------------------
    def execute(self, thd: int, stmt: Statement):
        """Run ``stmt`` for client thread ``thd`` and commit it (a generator)."""
        cpu, sim = self.cpu, self.sim
        t0 = sim.now_ns
        yield from cpu.run_ns(cpu.wakeup_ns)          # woken by the client's packet
        yield from cpu.run(self.cycles[stmt.kind])
        yield from self.redo.append(stmt.redo_bytes)
        self.trx_started += 1
        trx = Trx(self.trx_started, thd, stmt, self._trx_binlog_bytes(stmt))
        trx.start_ns = sim.now_ns
        if self.binlog is None:
            yield from self.commit_low(trx, flush=True)
        else:
            yield from self.commit_2pc(trx)
        self.trx_committed += 1
        if t0 >= self.measure_from_ns:
            self.commit_lat.add(sim.now_ns - trx.start_ns)
            self.statement_lat.add(sim.now_ns - t0)

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
        yield from self.cpu.run(self.cfg.prepare_cycles)
        lsn = yield from self.redo.append(PREPARE_REDO_BYTES)
        yield from self.redo.commit_flush(lsn)

    def binlog_write(self, trx: Trx):
        """``log_xid`` -> ``MYSQL_BIN_LOG::write`` of the session's cache (5.1)."""
        yield from self.cpu.run(self.cfg.binlog_cycles)
        yield from self.binlog.write_trx(trx.binlog_bytes)

    def commit_low(self, trx: Trx, flush: bool):
        """``innobase_commit_low``: the commit record; with ``flush`` the log is then
        written/fsynced per innodb_flush_log_at_trx_commit (otherwise the caller does
        it later, ``flush_log_later``, or never, HA_IGNORE_DURABILITY). Returns the LSN."""
        yield from self.cpu.run(self.cfg.commit_cycles)
        lsn = yield from self.redo.append(COMMIT_REDO_BYTES)
        trx.committed = True
        if flush:
            yield from self.redo.commit_flush(lsn)
        return lsn

    # -- statistics ---------------------------------------------------------------------
    def stats(self) -> dict:
        out = {"protocol": self.name, "trx_committed": self.trx_committed}
        for k, v in self.redo.stats().items():
            out[f"redo.{k}"] = v
        if self.binlog is not None:
            for k, v in self.binlog.stats().items():
                out[f"binlog.{k}"] = v
        out.update(self.lock_stats())
        return out

    def lock_stats(self) -> dict:
        return {}
