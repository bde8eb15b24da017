"""mysqlslap: client connections that each run autocommitted single-row INSERTs back to
back against the InnoDB server (experiment E2).

Modelled (mysqlslap option names): ``concurrency`` client connections, each a
simulated thread that sends a statement, waits for the reply and sends the next (no
think time); ``number_of_queries`` statements in total, divided evenly among the
clients (mysqlslap gives each client ``number_of_queries / concurrency``);
``iterations`` repeats the run (the report averages them, as mysqlslap's "Average
number of seconds to run all queries").

``load_type=write`` - ``--auto-generate-sql --auto-generate-sql-load-type=write``:
``INSERT INTO t1 VALUES (<int>,'<128 random chars>')`` into ``t1 (intcol1 INT(32),
charcol1 VARCHAR(128))`` (``number_int_cols`` / ``number_char_cols`` columns each,
mysqlslap's defaults 1 / 1). The table has no primary key, so InnoDB keys the clustered
index on its hidden row id: every row goes to the right-most leaf page
(``TableDef.clustered_key="row_id"``). With ``auto_generate_sql_add_autoincrement``
mysqlslap adds ``id serial`` (BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE) and sends
``VALUES (NULL,...)``: the clustered index is keyed on ``id`` (the first NOT NULL
unique index; no ``DB_ROW_ID``), and every row still goes to the right-most leaf.

Each INSERT is a ``Transaction`` of one ``insert`` operation, autocommitted, run by the
server (``yield from server.run(thd, trx)``: the pages through the buffer pool, the
shared latches, the commit protocol of ``engine.commit_protocol``); the client's
packet wakes the server thread first (the CPU model's ``wakeup_ns``). The workload
gives the server the table (its row: 4 bytes per INT, 129 per VARCHAR(128) with its
length byte, the NULL-flags bitmap) and the statement's text length (its binary-log
event); the record format and the redo are the server's.

Reports: ``tps`` (transactions - committed statements - per second of the run),
``seconds`` (mean per iteration), latency percentiles of whole statements and of
their commit, and fsyncs per transaction of each log (from the server's status:
``Innodb_os_log_fsyncs``, the binary log's fsyncs).

Deliberately not modelled: connection set-up, the client's own CPU, schema
creation and the preload of ``auto-generate-sql-write-number`` rows, mysqlslap's other
load types (``update``, ``read``, ``mixed``; sysbench's ``oltp_*`` tests cover updates
and reads).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import at_least
from ..engine.innodb.ops import Op, TableDef, Transaction
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator

LOAD_TYPES = ("write",)
INT_TEXT = 10            # a random int as mysqlslap prints it (up to 10 digits)
CHAR_COL = 128           # mysqlslap's VARCHAR(128) filled with 128 random characters
TABLE = "t1"


@dataclass(frozen=True)
class MysqlslapConfig:
    concurrency: int = 1
    number_of_queries: int = 100_000
    iterations: int = 1
    load_type: str = "write"
    number_int_cols: int = 1
    number_char_cols: int = 1
    auto_generate_sql_add_autoincrement: bool = False

    def __post_init__(self) -> None:
        at_least(self, 1, "concurrency")
        if self.number_of_queries < self.concurrency:
            raise ValueError(f"number_of_queries: must be >= concurrency ({self.concurrency}), "
                             f"got {self.number_of_queries}")
        at_least(self, 1, "iterations")
        if self.load_type not in LOAD_TYPES:
            raise ValueError(f"load_type: must be one of {', '.join(LOAD_TYPES)} (updates and "
                             f"reads: workload=sysbench), got {self.load_type!r}")
        if self.number_int_cols < 0 or self.number_char_cols < 0 \
                or self.number_int_cols + self.number_char_cols < 1:
            raise ValueError("number_int_cols: the table needs at least one column "
                             f"(number_int_cols={self.number_int_cols}, "
                             f"number_char_cols={self.number_char_cols})")


def table_for(cfg: MysqlslapConfig) -> tuple[TableDef, int]:
    """``t1`` as mysqlslap creates it (empty) and the text length of its INSERT."""
    values = cfg.number_int_cols * (INT_TEXT + 1) + cfg.number_char_cols * (CHAR_COL + 3)
    text_len = len("INSERT INTO t1 VALUES ()") + values - 1
    ncols = cfg.number_int_cols + cfg.number_char_cols
    row = cfg.number_int_cols * 4 + cfg.number_char_cols * (CHAR_COL + 1) + -(-ncols // 8)
    key = "row_id"
    if cfg.auto_generate_sql_add_autoincrement:
        text_len += len("NULL,")
        row += 8                              # id BIGINT UNSIGNED
        key = "auto_increment"
    return TableDef(TABLE, 0, row, (), clustered_key=key), text_len


class Mysqlslap:
    """``concurrency`` clients against ``server`` (a ``models.engine.innodb.server``
    ``InnoDBServer``).

    ``start()`` starts the server and the first iteration; the simulator stops when the
    last iteration's last client is done."""

    def __init__(self, sim: Simulator, cfg: MysqlslapConfig, server,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"scale: must be > 0, got {scale}")
        if not hasattr(server, "create_tables"):
            raise ValueError(f"mysqlslap runs on the InnoDB server (engine=mysql51_builtin, "
                             f"innodb_plugin_104, mysql56_binlog_group_commit or "
                             f"innodb_server_56), not on {type(server).__name__}")
        self.sim = sim
        self.cfg = cfg
        self.server = server
        self.queries = max(cfg.concurrency, int(round(cfg.number_of_queries * scale)))
        tdef, text_len = table_for(cfg)
        server.create_tables([tdef])
        self.trx = Transaction((Op("insert", TABLE, 0, sql_bytes=text_len),), autocommit=True)
        self.iteration_s: list[float] = []
        self.stmt_lat = LatencyRecorder()
        self.running = 0
        self.started_ns = 0
        self.finished_ns: int | None = None
        self._iter_start = 0
        self._before: dict = {}
        self._after: dict = {}

    # -- running ---------------------------------------------------------------------
    def start(self) -> None:
        self.server.start()
        self.started_ns = self.sim.now_ns
        self.server.commit_path.measure_from_ns = self.started_ns
        self._before = self.server.stats()
        self._start_iteration()

    def _start_iteration(self) -> None:
        c = self.cfg.concurrency
        per, extra = divmod(self.queries, c)
        self.running = c
        self._iter_start = self.sim.now_ns
        for i in range(c):
            self.sim.spawn(self._client(i, per + (1 if i < extra else 0)), f"client{i}")

    def _client(self, thd: int, n: int):
        sim, server, trx, lat = self.sim, self.server, self.trx, self.stmt_lat
        cpu = server.cpu
        for _ in range(n):
            t0 = sim.now_ns
            yield from cpu.run_ns(cpu.wakeup_ns)          # woken by the client's packet
            yield from server.run(thd, trx)
            lat.add(sim.now_ns - t0)
        self.running -= 1
        if self.running == 0:
            self._iteration_done()

    def _iteration_done(self) -> None:
        self.iteration_s.append((self.sim.now_ns - self._iter_start) / 1e9)
        if len(self.iteration_s) < self.cfg.iterations:
            self._start_iteration()
            return
        self.finished_ns = self.sim.now_ns
        self._after = self.server.stats()
        self.server.stop()
        self.sim.stop()

    # -- results -------------------------------------------------------------------------
    def results(self) -> dict:
        """mysqlslap's summary plus the server's log counters per transaction."""
        end = self.finished_ns if self.finished_ns is not None else self.sim.now_ns
        after = self._after or self.server.stats()
        before = self._before

        def delta(key: str) -> float:
            return after.get(key, 0) - before.get(key, 0)

        elapsed_s = (end - self.started_ns) / 1e9
        trx = delta("Handler_commit")        # autocommit INSERTs: no COMMIT statement
        out = {
            "concurrency": self.cfg.concurrency,
            "queries_per_iteration": self.queries,
            "iterations_done": len(self.iteration_s),
            "seconds": float(np.mean(self.iteration_s)) if self.iteration_s else elapsed_s,
            "transactions": trx,
            "tps": trx / elapsed_s if elapsed_s > 0 else 0.0,
        }
        for log, key in (("redo", "Innodb_os_log_fsyncs"), ("binlog", "commit.binlog.fsyncs")):
            n = delta(key)
            out[f"fsyncs_{log}"] = n
            out[f"fsyncs_per_trx_{log}"] = n / trx if trx else 0.0
            out[f"fsyncs_{log}_s"] = n / elapsed_s if elapsed_s > 0 else 0.0
        out["fsyncs_per_trx"] = out["fsyncs_per_trx_redo"] + out["fsyncs_per_trx_binlog"]
        flushes = delta("commit.redo.flushes")
        out["redo_group_size_avg"] = delta("commit.redo.flush_requests") / flushes if flushes else 0.0
        groups = delta("commit.binlog.groups")
        out["binlog_group_size_avg"] = trx / groups if groups else 0.0
        out.update(self.stmt_lat.summary(prefix="statement_lat"))
        out.update(self.server.commit_path.commit_lat.summary(prefix="commit_lat"))
        return out
