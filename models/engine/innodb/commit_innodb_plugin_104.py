"""InnoDB Plugin 1.0.4 on MySQL 5.1: group commit restored around the mutex.

The plugin's ``innobase_xa_prepare`` returns at once when ``innodb_support_xa=0``;
otherwise it writes and fsyncs the prepare record (``trx_prepare_for_mysql``) *before*
taking ``prepare_commit_mutex``. ``innobase_commit`` sets ``trx->flush_log_later`` so
``innobase_commit_low`` only appends the commit record, releases the mutex, and then
``trx_commit_complete_for_mysql`` writes and fsyncs the log:

    prepare record: write + fsync              (innodb_support_xa=1; no mutex held)
    lock prepare_commit_mutex                  (innodb_support_xa=1 only)
      binlog write (+ fdatasync per sync_binlog, under LOCK_log)
      commit record appended to the log buffer
    unlock prepare_commit_mutex
    commit record: write + fsync
    unlog: LOCK_log again (rotation check)

Both fsyncs happen outside the mutex, in ``log_write_up_to``: a thread that finds a
flush running waits for it and then needs no fsync of its own if that flush covered
its LSN, so one fsync serves every thread that appended before it started. The
serial section shrinks to the binlog write and the commit record - but the commit
record is the whole ``trx_commit_off_kernel`` (``innobase_commit_low`` with
``flush_log_later``): ``kernel_mutex`` three times (one of them for the table lock's
release, walking the queue of the other clients' IX locks), ``rseg->mutex`` twice and
``log_sys->mutex`` (``latches``), each shared with the statements and prepares of
every other client, so waits for them lengthen the serial section. With
``sync_binlog=1`` the binlog fdatasync is still inside the mutex, one per commit.
"""
from __future__ import annotations

from ...sim import Mutex
from .commit_base import CommitPath, Trx


class InnoDBPlugin104(CommitPath):
    name = "innodb_plugin_104"

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.prepare_commit_mutex = Mutex(self.sim, "prepare_commit_mutex", barging=True)
        self.mutex_hold_ns = 0

    def commit_2pc(self, trx: Trx):
        xa = self.cfg.innodb_support_xa
        mutex = self.prepare_commit_mutex
        if xa:
            yield from self.prepare(trx)
            yield from self.cpu.lock(mutex)
        t0 = self.sim.now_ns
        yield from self.binlog_write(trx)
        lsn = yield from self.commit_low(trx, flush=False)
        if xa:
            self.mutex_hold_ns += self.sim.now_ns - t0
            mutex.release()
        yield from self.redo.commit_flush(lsn)     # trx_commit_complete_for_mysql
        yield from self.binlog.unlog()

    def lock_stats(self) -> dict:
        m = self.prepare_commit_mutex
        return {"prepare_commit_mutex.acquisitions": m.acquisitions,
                "prepare_commit_mutex.contended": m.contended,
                "prepare_commit_mutex.wait_s": m.wait_ns_total / 1e9,
                "prepare_commit_mutex.hold_s": self.mutex_hold_ns / 1e9}
