"""MySQL 5.1 with its built-in InnoDB: the whole two-phase commit under one mutex.

``innobase_xa_prepare`` of the built-in InnoDB (MySQL 5.0/5.1 ``ha_innodb.cc``) takes
the global ``prepare_commit_mutex`` first - "for ibbackup to work the order of
transactions in binlog and InnoDB must be the same" - and only then checks
``innodb_support_xa``; ``innobase_commit`` releases it after ``innobase_commit_low``,
which writes *and fsyncs* the commit record (``trx_commit_off_kernel`` with
``flush_log_later`` unset). So, one transaction at a time:

    lock prepare_commit_mutex
      prepare record: write + fsync            (innodb_support_xa=1 only)
      binlog write (+ fdatasync per sync_binlog, under LOCK_log)
      commit record: write + fsync
    unlock prepare_commit_mutex
    unlog: LOCK_log again (rotation check)

No other thread can be waiting inside ``log_write_up_to`` when a flush starts, so no
fsync is ever shared: 2 redo fsyncs per transaction with ``innodb_support_xa=1``, 1
with 0, at every concurrency, and throughput is bounded by the serial section.
"""
from __future__ import annotations

from ...sim import Mutex
from .commit_base import CommitPath, Trx


class MySQL51Builtin(CommitPath):
    name = "mysql51_builtin"

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.prepare_commit_mutex = Mutex(self.sim, "prepare_commit_mutex", barging=True)
        self.mutex_hold_ns = 0

    def commit_2pc(self, trx: Trx):
        mutex = self.prepare_commit_mutex
        yield from self.cpu.lock(mutex)
        t0 = self.sim.now_ns
        if self.cfg.innodb_support_xa:
            yield from self.prepare(trx)
        yield from self.binlog_write(trx)
        yield from self.commit_low(trx, flush=True)
        self.mutex_hold_ns += self.sim.now_ns - t0
        mutex.release()
        yield from self.binlog.unlog()

    def lock_stats(self) -> dict:
        m = self.prepare_commit_mutex
        return {"prepare_commit_mutex.acquisitions": m.acquisitions,
                "prepare_commit_mutex.contended": m.contended,
                "prepare_commit_mutex.wait_s": m.wait_ns_total / 1e9,
                "prepare_commit_mutex.hold_s": self.mutex_hold_ns / 1e9}
