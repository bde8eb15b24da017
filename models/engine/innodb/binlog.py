"""The MySQL binary log: an appended file of events, synced per ``sync_binlog``.

Modelled after ``MYSQL_BIN_LOG`` (sql/log.cc of 5.1, sql/binlog.cc of 5.6):

- **Events.** A transaction's events are collected in the session's binlog cache
  (``binlog_cache_size``; a bigger transaction spills to a temporary file, counted in
  ``Binlog_cache_disk_use``) and written to the binlog at commit as one block:
  ``BEGIN`` (a Query event), the statement (``binlog_format=STATEMENT``: a Query event
  with the SQL text; ``ROW``: a Table_map and a Write/Update_rows event with the row
  images), and the ``Xid`` event. Sizes follow the v4 event format: a 19-byte common
  header, a 13-byte Query post-header, ~26 bytes of status variables, the database
  name and the text.
- **Writing.** ``write_trx`` is ``MYSQL_BIN_LOG::write(THD*, IO_CACHE*, Log_event*)``
  of 5.1: under ``LOCK_log``, copy the cache into the binlog's IO_CACHE and
  ``flush_and_sync``: one buffered ``write()`` of the block, then, if
  ``sync_binlog`` is N > 0 and this is the N-th write since the last sync, an
  ``fdatasync()`` (``my_sync``) - still holding ``LOCK_log``, so with
  ``sync_binlog=1`` every commit waits for its own binlog fsync, one at a time.
  The 5.6 group commit instead calls ``write_group`` (one write for the whole flush
  queue, caller holds ``LOCK_log``) and ``sync_group`` (the sync stage: the counter
  counts groups, not transactions).
- **Rotation** (``max_binlog_size``): 5.1 checks the size in ``unlog`` after the
  engine commit (``rotate_and_purge``, one more ``LOCK_log`` acquisition per commit),
  5.6 at the end of ``ordered_commit``. When the file is past the limit, a Rotate event is appended, a new ``mysql-bin.NNNNNN`` is created with its
  4-byte magic and Format_description event, and the index file gets a line and an
  ``fdatasync``. The new file is made by ``open_file(name)`` (the engine decides where
  it lives).

Deliberately not modelled: waiting at rotation for prepared XIDs to commit, purge of
old binlogs, ``binlog_max_flush_queue_time``, checksums (5.6.2+), GTID events, the
temporary-file I/O of a spilled binlog cache (only counted), the binlog dump threads
of replicas.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ...checks import at_least
from ...sim import Mutex, Simulator
from ...units import parse_size

FORMATS = ("STATEMENT", "ROW")
EVENT_HEADER = 19            # v4 common header
QUERY_POST_HEADER = 13
QUERY_STATUS_VARS = 26       # flags2, sql_mode, catalog, charset (5.1 typical)
XID_EVENT = EVENT_HEADER + 8
ROTATE_EVENT_FIXED = EVENT_HEADER + 8
BINLOG_MAGIC = 4
FORMAT_DESCRIPTION_EVENT = 106   # 5.1 / 5.5 (without checksums)
TABLE_MAP_FIXED = EVENT_HEADER + 8 + 4
ROWS_EVENT_FIXED = EVENT_HEADER + 8 + 2


@dataclass(frozen=True)
class BinlogConfig:
    """Binary-log variables under their MySQL names.

    ``log_bin``: binary log on. ``sync_binlog``: 0 = never fsync (the OS writes it back),
    N = fdatasync after every N-th commit (5.1) / commit group (5.6).
    ``max_binlog_size``: rotate after a write takes the file past it.
    ``binlog_cache_size``: per-session transaction cache; bigger transactions spill.
    ``binlog_format``: STATEMENT or ROW (event sizes). ``db_name``: the schema name the
    Query events carry (mysqlslap's is ``mysqlslap``)."""

    log_bin: bool = True
    sync_binlog: int = 0
    max_binlog_size: str = "1G"
    binlog_cache_size: str = "32K"
    binlog_format: str = "STATEMENT"
    db_name: str = "mysqlslap"

    def __post_init__(self) -> None:
        at_least(self, 0, "sync_binlog")
        size = parse_size(self.max_binlog_size, "max_binlog_size")
        if not 4096 <= size <= 1 << 30:
            raise ValueError(f"max_binlog_size: must be in 4096..1G, got {self.max_binlog_size!r}")
        if parse_size(self.binlog_cache_size, "binlog_cache_size") < 4096:
            raise ValueError(f"binlog_cache_size: must be >= 4096, got {self.binlog_cache_size!r}")
        if self.binlog_format not in FORMATS:
            raise ValueError(f"binlog_format: must be STATEMENT or ROW, got {self.binlog_format!r}")

    @property
    def max_binlog_size_bytes(self) -> int:
        return parse_size(self.max_binlog_size, "max_binlog_size")

    @property
    def binlog_cache_size_bytes(self) -> int:
        return parse_size(self.binlog_cache_size, "binlog_cache_size")


def query_event_bytes(text_len: int, db_len: int) -> int:
    return EVENT_HEADER + QUERY_POST_HEADER + QUERY_STATUS_VARS + db_len + 1 + text_len


def trx_event_bytes(cfg: BinlogConfig, statements: list[tuple[int, int]]) -> int:
    """Bytes a transaction adds to the binlog: BEGIN, its statements - each given as
    (SQL text length, row image bytes) - and the Xid event."""
    db = len(cfg.db_name)
    n = query_event_bytes(len("BEGIN"), db) + XID_EVENT
    for text_len, row_bytes in statements:
        if cfg.binlog_format == "STATEMENT":
            n += query_event_bytes(text_len, db)
        else:
            n += TABLE_MAP_FIXED + db + 1 + 3 + 1 + 8 + ROWS_EVENT_FIXED + row_bytes
    return n


class Binlog:
    """The binary log on a filesystem; ``open_file(name)`` creates a binlog file or the
    index and returns its handle. ``fs`` offers ``pwrite`` / ``fdatasync`` Events that
    fire when the system call returns (its kernel CPU and I/O are the filesystem's);
    ``cpu`` pays wake-ups of threads that sleep on ``LOCK_log``."""

    def __init__(self, sim: Simulator, cfg: BinlogConfig, fs: Any,
                 open_file: Callable[[str], Any], cpu) -> None:
        self.sim = sim
        self.cfg = cfg
        self.fs = fs
        self.open_file = open_file
        self.cpu = cpu
        self.max_size = cfg.max_binlog_size_bytes
        self.cache_size = cfg.binlog_cache_size_bytes
        self.LOCK_log = Mutex(sim, "LOCK_log", barging=True)
        self.index = open_file("mysql-bin.index")
        self.index_pos = 0
        self.file_no = 0
        self.file = None
        self.pos = 0
        self.sync_counter = 0
        # statistics
        self.writes = 0
        self.bytes_written = 0
        self.fsyncs = 0               # fdatasync() of binlog files (sync_binlog)
        self.index_fsyncs = 0         # fdatasync() of the index file at rotation
        self.rotations = 0
        self.cache_disk_use = 0
        self.groups = 0
        self.group_trx = 0
        self._opening = None

    # -- helpers -----------------------------------------------------------------------
    def _append(self, nbytes: int):
        """Buffered write of ``nbytes`` at the end of the current file."""
        self.writes += 1
        self.bytes_written += nbytes
        off = self.pos
        self.pos += nbytes
        yield self.fs.pwrite(self.file, off, nbytes, direct=False)

    def open(self):
        """Open the first binlog file (server start-up)."""
        if self.file is None:
            yield from self._new_file()

    def _new_file(self):
        self.file_no += 1
        name = f"mysql-bin.{self.file_no:06d}"
        self.file = self.open_file(name)
        self.pos = 0
        yield from self._append(BINLOG_MAGIC + FORMAT_DESCRIPTION_EVENT)
        line = len(name) + 3  # "./" + name + "\n"
        off, self.index_pos = self.index_pos, self.index_pos + line
        yield self.fs.pwrite(self.index, off, line, direct=False)
        self.index_fsyncs += 1
        yield self.fs.fdatasync(self.index)

    def _maybe_rotate(self):
        if self.pos >= self.max_size:
            self.rotations += 1
            yield from self._append(ROTATE_EVENT_FIXED + len("mysql-bin.000000"))
            yield from self._new_file()

    def _sync(self):
        self.fsyncs += 1
        yield self.fs.fdatasync(self.file)

    def cache_spills(self, trx_bytes: int) -> bool:
        return trx_bytes > self.cache_size

    # -- 5.1: one transaction per write ------------------------------------------------
    def write_trx(self, trx_bytes: int):
        """``MYSQL_BIN_LOG::write`` of one transaction cache, with its own
        ``flush_and_sync`` (sync_binlog counts transactions)."""
        if self.cache_spills(trx_bytes):
            self.cache_disk_use += 1
        yield from self.cpu.lock(self.LOCK_log)
        if self.file is None:
            yield from self._new_file()
        yield from self._append(trx_bytes)
        n = self.cfg.sync_binlog
        if n:
            self.sync_counter += 1
            if self.sync_counter >= n:
                self.sync_counter = 0
                yield from self._sync()
        self.groups += 1
        self.group_trx += 1
        self.LOCK_log.release()

    def unlog(self):
        """``TC_LOG_BINLOG::unlog`` (5.1), after the engine commit: the transaction is
        no longer prepared, then ``rotate_and_purge(0)`` takes ``LOCK_log`` again to
        check the size - the rotation deferred by ``write`` (an Xid event was written)."""
        yield from self.cpu.lock(self.LOCK_log)
        yield from self._maybe_rotate()
        self.LOCK_log.release()

    # -- 5.6: the stages of ordered_commit (the caller holds the stage mutexes) ----------
    def write_group(self, trx_bytes: list[int]):
        """Flush stage: every queued session's cache in one write (caller holds
        ``LOCK_log``)."""
        for b in trx_bytes:
            if self.cache_spills(b):
                self.cache_disk_use += 1
        if self.file is None:
            yield from self._new_file()
        self.groups += 1
        self.group_trx += len(trx_bytes)
        yield from self._append(sum(trx_bytes))

    def sync_group(self):
        """Sync stage: ``sync_binlog_file``; the counter counts groups."""
        n = self.cfg.sync_binlog
        if n:
            self.sync_counter += 1
            if self.sync_counter >= n:
                self.sync_counter = 0
                yield from self._sync()

    def rotate_if_needed(self):
        """After the commit stage, under ``LOCK_log`` (5.6 ``ordered_commit`` end)."""
        if self.pos >= self.max_size:
            yield from self.cpu.lock(self.LOCK_log)
            yield from self._maybe_rotate()
            self.LOCK_log.release()

    def stats(self) -> dict:
        return {"writes": self.writes, "bytes_written": self.bytes_written,
                "fsyncs": self.fsyncs, "index_fsyncs": self.index_fsyncs, "rotations": self.rotations,
                "files": self.file_no, "cache_disk_use": self.cache_disk_use,
                "groups": self.groups,
                "group_size_avg": self.group_trx / self.groups if self.groups else 0.0,
                "lock_log_contended": self.LOCK_log.contended,
                "lock_log_wait_s": self.LOCK_log.wait_ns_total / 1e9}
