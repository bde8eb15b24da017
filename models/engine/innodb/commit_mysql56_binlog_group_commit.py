"""MySQL 5.6 binary log group commit (``MYSQL_BIN_LOG::ordered_commit``, WL#5223).

``prepare_commit_mutex`` is gone. InnoDB's prepare writes and fsyncs the prepare
record as before (shared through ``log_write_up_to``). The binary log side is a
pipeline of three stages, each with a queue and a mutex (``Stage_manager``):

- **flush** (``LOCK_log``): a thread appends itself to the flush queue; if the queue
  was empty it is the *leader*, otherwise a follower that sleeps until the leader
  signals it done. The leader takes ``LOCK_log``, takes the whole queue (everyone who
  arrived while it waited for the mutex) and writes every session's binlog cache
  with one ``write()``.
- **sync** (``LOCK_sync``): the leader enrolls the group in the sync queue and
  releases ``LOCK_log`` (the next flush group can form meanwhile); if that queue was
  not empty it becomes a follower of the group ahead. The sync leader takes the
  queue and ``fdatasync``s the binlog when ``sync_binlog`` groups have been written
  since the last sync - one fsync per group, however large.
- **commit** (``LOCK_commit``), with ``binlog_order_commits=1``: the same hand-over;
  the leader commits every transaction of the queue in InnoDB in binlog order. 5.6
  sets ``HA_IGNORE_DURABILITY`` here, so InnoDB appends the commit record without
  flushing the log (the prepare record and the binlog are durable; crash recovery
  commits prepared transactions found in the binlog; the commit records reach disk
  with the next prepare flush or the master thread's). With
  ``binlog_order_commits=0`` the sync leader releases ``LOCK_sync`` and each thread
  commits itself after being woken.

With ``innodb_support_xa=0`` there is no prepare record, and the commit record is not
flushed either (HA_IGNORE_DURABILITY): only the master thread's once-a-second flush
(or a later writer) makes it durable.

Finally the leader wakes every follower of its group (``signal_done``: a broadcast
on ``m_cond_done``; the followers wake one after another through ``m_lock_done``).

Deliberately not modelled: ``binlog_max_flush_queue_time``, the engine log flush
before a binlog rotation, 5.7's move of the prepare fsync into the flush stage
(``binlog_group_commit_sync_delay`` and friends).
"""
from __future__ import annotations

from ...sim import Event, Mutex
from .commit_base import CommitPath, Trx

FLUSH, SYNC, COMMIT = 0, 1, 2


class MySQL56BinlogGroupCommit(CommitPath):
    name = "mysql56_binlog_group_commit"

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        sim = self.sim
        self.LOCK_sync = Mutex(sim, "LOCK_sync", barging=True)
        self.LOCK_commit = Mutex(sim, "LOCK_commit", barging=True)
        self.m_lock_done = Mutex(sim, "m_lock_done")
        self.queues: list[list[Trx]] = [[], [], []]
        self.stage_groups = [0, 0, 0]
        self.stage_trx = [0, 0, 0]

    def commit_2pc(self, trx: Trx):
        if self.cfg.innodb_support_xa:
            yield from self.prepare(trx)
        yield from self.ordered_commit(trx)

    def _enroll(self, stage: int, group: list[Trx], leave: Mutex | None) -> bool:
        """``Stage_manager::enroll_for``: append ``group``; True if it found the queue
        empty (its head is the stage leader). Releases ``leave`` either way."""
        q = self.queues[stage]
        leader = not q
        q.extend(group)
        if leave is not None:
            leave.release()
        return leader

    def _fetch(self, stage: int) -> list[Trx]:
        q, self.queues[stage] = self.queues[stage], []
        self.stage_groups[stage] += 1
        self.stage_trx[stage] += len(q)
        return q

    def ordered_commit(self, trx: Trx):
        cpu, binlog = self.cpu, self.binlog
        trx.done = Event(self.sim)
        # flush stage
        if not self._enroll(FLUSH, [trx], None):
            yield from self._follow(trx)
            return
        yield from cpu.lock(binlog.LOCK_log)
        queue = self._fetch(FLUSH)
        yield from cpu.run(self.cfg.binlog_cycles * len(queue))
        yield from binlog.write_group([t.binlog_bytes for t in queue])
        # sync stage
        if not self._enroll(SYNC, queue, binlog.LOCK_log):
            yield from self._follow(trx)
            return
        yield from cpu.lock(self.LOCK_sync)
        queue = self._fetch(SYNC)
        yield from binlog.sync_group()
        # commit stage
        if self.cfg.binlog_order_commits:
            if not self._enroll(COMMIT, queue, self.LOCK_sync):
                yield from self._follow(trx)
                return
            yield from cpu.lock(self.LOCK_commit)
            queue = self._fetch(COMMIT)
            for t in queue:          # ha_commit_low with HA_IGNORE_DURABILITY
                yield from self.commit_low(t, flush=False)
            self.LOCK_commit.release()
        else:
            self.LOCK_sync.release()
        for t in queue:              # signal_done
            if t is not trx:
                t.done.succeed()
        if not trx.committed:
            yield from self.commit_low(trx, flush=False)
        yield from binlog.rotate_if_needed()

    def _follow(self, trx: Trx):
        """A follower sleeps until its group's leader is done, then commits itself if
        the leader did not (``finish_commit``)."""
        yield from self.cpu.wait_broadcast(trx.done, self.m_lock_done)
        if not trx.committed:
            yield from self.commit_low(trx, flush=False)

    def lock_stats(self) -> dict:
        out = {}
        for i, name in enumerate(("flush", "sync", "commit")):
            g = self.stage_groups[i]
            out[f"stage.{name}.groups"] = g
            out[f"stage.{name}.group_size_avg"] = self.stage_trx[i] / g if g else 0.0
        for m in (self.LOCK_sync, self.LOCK_commit):
            out[f"{m.name}.contended"] = m.contended
            out[f"{m.name}.wait_s"] = m.wait_ns_total / 1e9
        return out
