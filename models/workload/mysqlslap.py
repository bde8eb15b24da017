"""mysqlslap (and a sysbench update_key-like load): client connections that each run
autocommitted single-row statements back to back against a simulated server.

Modelled (mysqlslap option names): ``concurrency`` client connections, each a
simulated thread that sends a statement, waits for the reply and sends the next (no
think time); ``number_of_queries`` statements in total, divided evenly among the
clients (mysqlslap gives each client ``number_of_queries / concurrency``);
``iterations`` repeats the run (the report averages them, as mysqlslap's "Average
number of seconds to run all queries").

``load_type``:

- ``write`` - ``--auto-generate-sql --auto-generate-sql-load-type=write``: ``INSERT
  INTO t1 VALUES (<int>,'<128 random chars>')`` into ``t1 (intcol1 INT(32), charcol1
  VARCHAR(128))`` (``number_int_cols`` / ``number_char_cols`` columns each,
  mysqlslap's defaults 1 / 1). The table has no primary key, so InnoDB keys the
  clustered index on its hidden row id: every row goes to the right-most leaf page
  (``Statement.rec_bytes``: the record that fills it). With
  ``auto_generate_sql_add_autoincrement`` mysqlslap adds ``id serial`` (BIGINT
  UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE) and sends ``VALUES (NULL,...)``: the
  clustered index is keyed on ``id`` (the first NOT NULL unique index; no
  ``DB_ROW_ID``), values come from the table's auto-increment counter instead of
  the server-wide row id, and every row still goes to the right-most leaf.
- ``update_key`` - sysbench oltp ``update_key``: ``UPDATE sbtest SET k=k+1 WHERE
  id=<random>``, one row by primary key, autocommitted.

Per statement the engine gets its SQL text length, row image and redo volume
(``models.engine.innodb.Statement``). Redo per row change, estimated from InnoDB's
record formats: an insert logs the new compact record (row + 18 bytes of hidden
columns + 5-byte header) in an ``MLOG_COMP_REC_INSERT`` (~25 bytes of page/offset/
index info), an undo-insert record with its ``MLOG_UNDO_INSERT`` wrapper (~30) and
page-header updates (~30); an in-place update of one INT logs
``MLOG_COMP_REC_UPDATE_IN_PLACE`` (~35 + the field), the undo-update record with the
old value and its wrapper (~60) and undo page updates (~30).

Reports: ``tps`` (transactions - committed statements - per second of the run),
``seconds`` (mean per iteration), latency percentiles of whole statements and of
their commit, and fsyncs per transaction of each log (from the engine's counters).

Deliberately not modelled: connection set-up, the client's own CPU, schema
creation and the preload of ``auto-generate-sql-write-number`` rows, row-lock
conflicts between clients (sysbench's random ids rarely collide on a big table).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import at_least
from ..engine.innodb.commit_base import Statement
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator

LOAD_TYPES = ("write", "update_key")
INT_TEXT = 10            # a random int as mysqlslap prints it (up to 10 digits)
CHAR_COL = 128           # mysqlslap's VARCHAR(128) filled with 128 random characters
ROW_HIDDEN = 6 + 6 + 7   # DB_ROW_ID, DB_TRX_ID, DB_ROLL_PTR
REC_HEADER = 5           # compact record header
SBTEST_ROW = 4 + 4 + 120 + 60   # sysbench sbtest: id, k, c CHAR(120), pad CHAR(60)
UNDO_INSERT_REDO = 30    # the undo-insert record in its MLOG_UNDO_INSERT wrapper
UNDO_UPDATE_REDO = 60    # the undo-update record (old value) in its wrapper


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
            raise ValueError(f"load_type: must be one of {', '.join(LOAD_TYPES)}, "
                             f"got {self.load_type!r}")
        if self.number_int_cols < 0 or self.number_char_cols < 0 \
                or self.number_int_cols + self.number_char_cols < 1:
            raise ValueError("number_int_cols: the table needs at least one column "
                             f"(number_int_cols={self.number_int_cols}, "
                             f"number_char_cols={self.number_char_cols})")


def statement_for(cfg: MysqlslapConfig) -> Statement:
    """The one statement shape the load sends (all statements are alike in size)."""
    if cfg.load_type == "write":
        values = cfg.number_int_cols * (INT_TEXT + 1) + cfg.number_char_cols * (CHAR_COL + 3)
        text_len = len("INSERT INTO t1 VALUES ()") + values - 1
        row = cfg.number_int_cols * 4 + cfg.number_char_cols * (CHAR_COL + 1)
        ncols = cfg.number_int_cols + cfg.number_char_cols
        hidden, key = ROW_HIDDEN, "row_id"
        if cfg.auto_generate_sql_add_autoincrement:
            text_len += len("NULL,")
            row += 8                              # id BIGINT UNSIGNED
            hidden, key = ROW_HIDDEN - 6, "auto_increment"     # no DB_ROW_ID
        rec = row + hidden + REC_HEADER + -(-ncols // 8)   # + the NULL-flags bitmap
        redo = (row + hidden + REC_HEADER) + 25 + UNDO_INSERT_REDO + 30
        return Statement("insert", text_len, row, redo, undo_redo_bytes=UNDO_INSERT_REDO,
                         rec_bytes=rec, clustered_key=key)
    text_len = len("UPDATE sbtest SET k=k+1 WHERE id=") + 7
    return Statement("update", text_len, 2 * SBTEST_ROW, 35 + 4 + UNDO_UPDATE_REDO + 30,
                     undo_redo_bytes=UNDO_UPDATE_REDO)


class Mysqlslap:
    """``concurrency`` clients against ``engine`` (a ``models.engine.innodb.CommitPath``).

    ``start()`` starts the server (``engine.start()``) and the first iteration; the
    simulator stops when the last iteration's last client is done."""

    def __init__(self, sim: Simulator, cfg: MysqlslapConfig, engine,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"scale: must be > 0, got {scale}")
        if not hasattr(engine, "execute"):
            raise ValueError(f"mysqlslap runs on the InnoDB commit path (engine="
                             f"mysql51_builtin, innodb_plugin_104 or "
                             f"mysql56_binlog_group_commit), not on {type(engine).__name__}")
        self.sim = sim
        self.cfg = cfg
        self.engine = engine
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.queries = max(cfg.concurrency, int(round(cfg.number_of_queries * scale)))
        self.stmt = statement_for(cfg)
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
        self.engine.start()
        self.started_ns = self.sim.now_ns
        self.engine.measure_from_ns = self.started_ns
        self._before = self.engine.stats()
        self._start_iteration()

    def _start_iteration(self) -> None:
        c = self.cfg.concurrency
        per, extra = divmod(self.queries, c)
        self.running = c
        self._iter_start = self.sim.now_ns
        for i in range(c):
            self.sim.spawn(self._client(i, per + (1 if i < extra else 0)), f"client{i}")

    def _client(self, thd: int, n: int):
        sim, engine, stmt, lat = self.sim, self.engine, self.stmt, self.stmt_lat
        for _ in range(n):
            t0 = sim.now_ns
            yield from engine.execute(thd, stmt)
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
        self._after = self.engine.stats()
        self.engine.stop()
        self.sim.stop()

    # -- results -------------------------------------------------------------------------
    def results(self) -> dict:
        """mysqlslap's summary plus commit-path counters per transaction."""
        end = self.finished_ns if self.finished_ns is not None else self.sim.now_ns
        after = self._after or self.engine.stats()
        before = self._before
        elapsed_s = (end - self.started_ns) / 1e9
        trx = after["trx_committed"] - before.get("trx_committed", 0)
        out = {
            "concurrency": self.cfg.concurrency,
            "queries_per_iteration": self.queries,
            "iterations_done": len(self.iteration_s),
            "seconds": float(np.mean(self.iteration_s)) if self.iteration_s else elapsed_s,
            "transactions": trx,
            "tps": trx / elapsed_s if elapsed_s > 0 else 0.0,
        }
        for log in ("redo", "binlog"):
            key = f"{log}.fsyncs"
            n = after.get(key, 0) - before.get(key, 0)
            out[f"fsyncs_{log}"] = n
            out[f"fsyncs_per_trx_{log}"] = n / trx if trx else 0.0
            out[f"fsyncs_{log}_s"] = n / elapsed_s if elapsed_s > 0 else 0.0
        out["fsyncs_per_trx"] = out["fsyncs_per_trx_redo"] + out["fsyncs_per_trx_binlog"]
        flushes = after["redo.flushes"] - before.get("redo.flushes", 0)
        reqs = after["redo.flush_requests"] - before.get("redo.flush_requests", 0)
        out["redo_group_size_avg"] = reqs / flushes if flushes else 0.0
        groups = after.get("binlog.groups", 0) - before.get("binlog.groups", 0)
        out["binlog_group_size_avg"] = trx / groups if groups else 0.0
        out.update(self.stmt_lat.summary(prefix="statement_lat"))
        out.update(self.engine.commit_lat.summary(prefix="commit_lat"))
        return out
