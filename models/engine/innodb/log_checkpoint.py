"""Redo-log checkpoints and the free check (``log0log.cc`` of MySQL 5.5 / 5.6), on top of
the ``RedoLog`` of ``redo.py``.

- **Capacity** (``log_calc_max_ages``): the log group holds
  ``innodb_log_files_in_group`` x (``innodb_log_file_size`` - the 2 KB file header);
  a tenth is kept as safety, then ``LOG_CHECKPOINT_FREE_PER_THREAD`` (4 pages) per
  thread for ``10 + innodb_thread_concurrency`` threads and ``LOG_CHECKPOINT_EXTRA_FREE``
  (8 pages) are set aside - if that is half the capacity or more the log is too small
  (InnoDB refuses to start) -, and a tenth of the rest again: that is the margin
  ``max_checkpoint_age``. ``max_modified_age_async`` = margin x 7/8,
  ``max_modified_age_sync`` = margin x 15/16, ``max_checkpoint_age_async`` = margin x 31/32.
- **Checkpoint age** = LSN - the oldest modification of the oldest dirty page (or the
  LSN if none is dirty): how much log recovery would have to replay.
- **Free check** (``log_free_check`` -> ``log_check_margins`` ->
  ``log_checkpoint_margin``), called by a user thread before each change: if the
  modified age passes ``max_modified_age_sync`` the thread itself asks for a
  flush-list batch of every page older than ``oldest + 2 x (age - sync point)`` and
  waits for the batch to end (or for another thread's batch, then asks again),
  looping until the age is back under the sync point - the stall users see
  (``Innodb_checkpoint_sync_waits`` and their time; not MySQL counters). 5.1 / 5.5
  (``log_checkpoint_margin``) also preflush between the async and the sync point:
  the thread runs a batch of every page older than ``oldest + (age - async point)``
  itself - in those versions ``buf_flush_list`` writes the batch in the caller's
  thread and ``buf_flush_buffered_writes`` waits for every write of it, so the
  thread is held for the whole batch (``async_preflushes``) -; if another batch is
  running it goes on without waiting. (5.6 leaves the async zone to the page
  cleaner.) If the log since the last checkpoint passes
  ``max_checkpoint_age_async`` it writes a checkpoint (waits for one at
  ``max_checkpoint_age``).
- **Checkpoint** (``log_checkpoint``): the log flushed up to the oldest modification,
  the data files synced (``fil_flush_file_spaces``; not with ``nosync``), the
  checkpoint info - one log block, ``OS_FILE_LOG_BLOCK_SIZE`` bytes - written to the
  header of the first log file, alternately at ``LOG_CHECKPOINT_1`` / ``_2`` (block 1
  / block 3), and the log file synced (``log_io_complete``: not with ``O_DSYNC``,
  whose log files are opened O_SYNC, nor with ``nosync``). Percona Server's ``innodb_log_block_size`` is that block size (the
  whole header is 4 blocks, ``redo.LOG_FILE_HDR_BLOCKS``): with 4096-byte blocks the
  checkpoint is a 4096-byte write at 4096 / 12288, a whole page - no read-modify-write
  of an uncached header page, as with 512 bytes at 512 / 1536. The master thread also checkpoints periodically
  (``checkpoint_every_s``: 7 s in 5.6, 10 s before).

Deliberately not modelled: the archived log, several log groups, the checkpoint's own
redo. (The log-buffer-full wait, ``Innodb_log_waits``, is ``RedoLog.append``'s.)
"""
from __future__ import annotations

from ...sim import Event

UNIV_PAGE_SIZE = 16384
LOG_CHECKPOINT_FREE_PER_THREAD = 4 * UNIV_PAGE_SIZE
LOG_CHECKPOINT_EXTRA_FREE = 8 * UNIV_PAGE_SIZE
LOG_POOL_PREFLUSH_RATIO_ASYNC = 8
LOG_POOL_PREFLUSH_RATIO_SYNC = 16
LOG_POOL_CHECKPOINT_RATIO_ASYNC = 32
LOG_CHECKPOINT_1 = 1          # in log blocks (OS_FILE_LOG_BLOCK_SIZE)
LOG_CHECKPOINT_2 = 3


def calc_max_ages(capacity_bytes: int, thread_concurrency: int) -> dict:
    """``log_calc_max_ages``: the margins of a log group of ``capacity_bytes``; raises
    ValueError naming ``innodb_log_file_size`` when the log is too small."""
    smallest = capacity_bytes - capacity_bytes // 10
    free = LOG_CHECKPOINT_FREE_PER_THREAD * (10 + thread_concurrency) + LOG_CHECKPOINT_EXTRA_FREE
    if free >= smallest // 2:
        raise ValueError("innodb_log_file_size: the log files are too small for "
                         f"innodb_thread_concurrency {thread_concurrency} (InnoDB needs "
                         f"{2 * free * 10 // 9 + 1} bytes of log capacity, has {capacity_bytes})")
    margin = smallest - free
    margin -= margin // 10
    return {"log_group_capacity": smallest,
            "max_modified_age_async": margin - margin // LOG_POOL_PREFLUSH_RATIO_ASYNC,
            "max_modified_age_sync": margin - margin // LOG_POOL_PREFLUSH_RATIO_SYNC,
            "max_checkpoint_age_async": margin - margin // LOG_POOL_CHECKPOINT_RATIO_ASYNC,
            "max_checkpoint_age": margin}


class LogCheckpointer:
    """Checkpoints of ``redo`` (a ``RedoLog``) for a pool with ``oldest_modification()``
    flushed by ``flusher`` (``buffer.flush.Flusher``); ``files``: the ``DataFiles``."""

    def __init__(self, sim, redo, pool, flusher, files, version: str,
                 thread_concurrency: int, data_fsync: bool = True) -> None:
        self.sim = sim
        self.redo = redo
        self.pool = pool
        self.flusher = flusher
        self.files = files
        self.version = version
        self.data_fsync = data_fsync
        m = calc_max_ages(redo.capacity, thread_concurrency)   # log_group_get_capacity
        self.capacity = m["log_group_capacity"]
        self.max_modified_age_async = m["max_modified_age_async"]
        self.max_modified_age_sync = m["max_modified_age_sync"]
        self.max_checkpoint_age_async = m["max_checkpoint_age_async"]
        self.max_checkpoint_age = m["max_checkpoint_age"]
        self.checkpoint_every_s = 7 if version == "5.6" else 10
        self.last_checkpoint_lsn = redo.lsn
        self.checkpoint_no = 0
        self._checkpoint_done: Event | None = None
        # counters
        self.checkpoints = 0
        self.sync_waits = 0
        self.sync_wait_ns = 0
        self.async_preflushes = 0
        self.log_fsyncs = 0

    # -- ages ---------------------------------------------------------------------------
    def oldest_lsn(self) -> int:
        """``log_buf_pool_get_oldest_modification``."""
        return self.pool.oldest_modification() or self.redo.lsn

    def checkpoint_age(self) -> int:
        """LSN - oldest modification (``Innodb_checkpoint_age``)."""
        return self.redo.lsn - self.oldest_lsn()

    # -- log_free_check ---------------------------------------------------------------------
    def free_check(self):
        """Generator: ``log_free_check`` before a change (cheap when under the margins)."""
        redo = self.redo
        t0 = None
        while True:
            oldest = self.oldest_lsn()
            age = redo.lsn - oldest
            sync = age > self.max_modified_age_sync
            if sync:
                advance = 2 * (age - self.max_modified_age_sync)
            elif self.version != "5.6" and age > self.max_modified_age_async:
                advance = age - self.max_modified_age_async
            else:
                advance = 0
            if advance:
                if not sync:
                    # 5.1 / 5.5 past the async point: this thread runs the batch itself
                    # (buf_flush_list -> buf_flush_buffered_writes waits for its
                    # writes); if another batch is running it goes on without waiting
                    n = yield from self.flusher.flush_list_batch(1 << 30, oldest + advance,
                                                                 "preflush")
                    if n is not None:
                        self.async_preflushes += 1
                    break
                if t0 is None:
                    t0 = self.sim.now_ns
                    self.sync_waits += 1
                n = yield from self.flusher.flush_list_batch(1 << 30, oldest + advance, "sync")
                if n is None:
                    yield from self.flusher.wait_list_batch()
                elif n == 0:
                    # every page below the limit is being written by another batch
                    if self.flusher.lru_batch_end is not None:
                        yield self.flusher.lru_batch_end
                    elif self.pool.io_fixed:
                        yield next(iter(self.pool.io_fixed.values()))
                    else:
                        break
                continue
            break
        if t0 is not None:
            self.sync_wait_ns += self.sim.now_ns - t0
        ckpt_age = redo.lsn - self.last_checkpoint_lsn
        if ckpt_age > self.max_checkpoint_age_async:
            yield from self.checkpoint(sync=ckpt_age > self.max_checkpoint_age)

    # -- log_checkpoint ---------------------------------------------------------------------
    def checkpoint(self, sync: bool = False):
        """Generator: write a checkpoint at the oldest modification (``log_checkpoint``)."""
        if self._checkpoint_done is not None:
            if sync:
                yield self._checkpoint_done
            return
        oldest = self.oldest_lsn()
        if oldest <= self.last_checkpoint_lsn:
            return
        done = self._checkpoint_done = Event(self.sim)
        redo = self.redo
        if redo.flushed_lsn < oldest:
            yield from redo.write_up_to(oldest, True, from_trx=False)
        if self.data_fsync:
            for space in self.files.distinct_spaces(self.files.files):
                yield self.files.fsync(space)
        f = redo.files[0]
        slot = LOG_CHECKPOINT_1 if self.checkpoint_no % 2 == 0 else LOG_CHECKPOINT_2
        yield redo.fs.pwrite(f, slot * redo.block, redo.block, direct=redo.direct,
                             sync=redo.open_sync)
        if redo.cfg.innodb_flush_method not in ("O_DSYNC", "nosync"):   # log_io_complete
            self.log_fsyncs += 1
            yield redo.fs.fsync(f)
        self.checkpoint_no += 1
        self.checkpoints += 1
        self.last_checkpoint_lsn = max(self.last_checkpoint_lsn, oldest)
        self._checkpoint_done = None
        done.succeed()

    def stats(self) -> dict:
        return {"checkpoint_age": self.checkpoint_age(),
                "checkpoint_lsn_age": self.redo.lsn - self.last_checkpoint_lsn,
                "max_modified_age_async": self.max_modified_age_async,
                "max_modified_age_sync": self.max_modified_age_sync,
                "max_checkpoint_age": self.max_checkpoint_age,
                "checkpoints": self.checkpoints, "sync_waits": self.sync_waits,
                "sync_wait_s": self.sync_wait_ns / 1e9,
                "async_preflushes": self.async_preflushes}
