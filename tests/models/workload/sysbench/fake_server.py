"""A stand-in for the InnoDB server's client interface (``create_tables``, ``start``,
``interval_over``, ``stop``, ``run``, ``status``): each operation costs CPU time on ``cores`` simulated
CPUs (a semaphore), plus ``commit_ns`` per commit; it counts what it was asked."""
from __future__ import annotations

from collections import Counter

from models.sim.sync import Semaphore


class FakeServer:
    def __init__(self, sim, op_ns: int = 20_000, row_ns: int = 200, commit_ns: int = 50_000,
                 cores: int = 1000) -> None:
        self.sim = sim
        self.op_ns, self.row_ns, self.commit_ns = op_ns, row_ns, commit_ns
        # not `cpu`: the pipeline reads an engine's cpu.stats()
        self.cores = Semaphore(sim, cores, "cores")
        self.tables = ()
        self.started = self.stopped = False
        self.ops: Counter = Counter()
        self.trx: list = []            # (thd, Transaction, start_ns)
        self.commits = 0
        self.dirty = 0
        self.deadlocks = 0
        self.deadlock_every = 0        # every n-th transaction is a deadlock victim once

    def create_tables(self, tables) -> None:
        assert not self.started, "create_tables after start"
        self.tables = tuple(tables)

    def start(self) -> None:
        self.started = True

    def interval_over(self) -> None:
        self.interval_ended_ns = self.sim.now_ns

    def stop(self) -> None:
        self.stopped = True

    def run(self, thd: int, trx):
        assert self.started and not self.stopped
        self.trx.append((thd, trx, self.sim.now_ns))
        if self.deadlock_every and len(self.trx) % self.deadlock_every == 0:
            yield self.op_ns                  # the first attempt, rolled back and retried
            self.deadlocks += 1
        for op in trx.ops:
            yield self.cores.acquire()
            yield self.op_ns + self.row_ns * op.rows
            self.cores.release()
            self.ops[op.kind] += 1
            if op.kind not in ("point_select", "range_select"):
                self.dirty += 1
            if trx.autocommit:
                yield self.commit_ns
                self.commits += 1
        if not trx.autocommit:
            yield self.commit_ns
            self.commits += 1

    def status(self) -> dict:
        return {"Com_commit": self.commits,
                "Innodb_rows_read": self.ops["point_select"] + self.ops["range_select"],
                "Innodb_buffer_pool_pages_dirty": self.dirty,
                "Innodb_buffer_pool_pages_flushed": 0,
                "Innodb_deadlocks": self.deadlocks,
                "version_comment": "fake"}

    def stats(self) -> dict:
        """The engine interface of the pipeline (``<metric_prefix>.<stat>`` columns)."""
        return {"commits": self.commits, "ops": sum(self.ops.values())}
