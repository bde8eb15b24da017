"""What every background flushing policy answers, once per loop of the flushing thread
(``buffer.cleaner.BackgroundFlusher``): how many pages of the LRU tail, how many of the
flush list and up to which LSN, and whether the thread sleeps before its next loop.

- ``FlushPolicy``: the interface. ``lru_depth(active)`` (the 5.6 page cleaner's LRU
  batch; 0 elsewhere), ``plan(active)`` -> a ``Batch`` or None, ``done(flushed)`` with
  the pages the batch wrote (called every loop, 0 when nothing was flushed), and two
  attributes the thread reads after ``plan``: ``skip_sleep`` (XtraDB's ``skip_sleep``:
  the next loop starts at once) and ``sleep_ns`` (the loop's period; XtraDB's
  ``keep_average`` runs ten loops a second).
- ``MasterThread``: the 1-second loop of ``srv_master_thread`` (5.1, 5.5, XtraDB):
  above ``innodb_max_dirty_pages_pct`` a flush-list batch of ``PCT_IO(100)`` whatever
  the algorithm, and no sleep before the next loop (``skip_sleep``: the batch "may
  have taken even more than 1 second, and also, there may be more to flush"; not in
  XtraDB 5.5, whose loop only keeps to the second), else the algorithm's
  ``adaptive()``. After every ten 1-second loops, the flushing of its
  10-second part (``ten_second_batches``, before the checkpoint): ``PCT_IO(100)``
  pages if fewer than ``PCT_IO(3)`` I/Os are pending and the last ten seconds did
  fewer than ``PCT_IO(200)`` (``SRV_PEND_IO_THRESHOLD``, ``SRV_PAST_IO_ACTIVITY``:
  spare I/O capacity), then - "to make a new checkpoint younger" - ``PCT_IO(100)``
  pages if more than 70 % of the pool is dirty, else ``PCT_IO(10)``. The same in the
  5.1, plugin, 5.5 and XtraDB 5.1 / 5.5 sources.

A policy reads the state (pool, flusher counters, log margins) and decides; the thread
owns time, the batches and the checkpoint. The master thread's insert buffer merge
runs in ``server/ibuf.py`` on this policy's ``pct_io``, ``n_ios`` and
``n_pending_ios``. Deliberately not modelled: the rest of the master thread's 10-second
part (purge), its background loop when the server is idle.
"""
from __future__ import annotations

from dataclasses import dataclass

LSN_MAX = 1 << 62
SECOND_NS = 1_000_000_000


@dataclass(frozen=True)
class Batch:
    """A flush-list batch (``buf_flush_list`` / ``buf_flush_batch(BUF_FLUSH_LIST)``): up
    to ``pages`` pages (neighbours count) whose oldest modification is below
    ``lsn_limit``. ``retry``: if another flush-list batch is running, wait for its end
    and ask again (XtraDB's ``estimate`` polls every 5 ms) instead of giving up."""

    pages: int
    lsn_limit: int = LSN_MAX
    retry: bool = False


class FlushPolicy:
    """``cfg``: the server config; ``pool`` (``WritePool``), ``flusher`` (``Flusher``),
    ``ckpt`` (``LogCheckpointer``, which holds the redo log as ``ckpt.redo``)."""

    name = ""
    thread = "srv_master"

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        self.cfg = cfg
        self.pool = pool
        self.flusher = flusher
        self.ckpt = ckpt
        self.io_capacity = cfg.innodb_io_capacity
        self.skip_sleep = False
        self.sleep_ns = SECOND_NS

    def start(self) -> None:
        """The flushing thread starts (the server's start: after a warm replay has
        moved the LSN)."""

    def pct_io(self, pct: float) -> int:
        """``PCT_IO(p)``: p % of ``innodb_io_capacity`` pages."""
        return int(self.io_capacity * pct / 100.0)

    @property
    def lsn(self) -> int:
        return self.ckpt.redo.lsn

    def n_ios(self) -> int:
        """The master thread's I/O count: ``log_sys->n_log_ios + n_pages_read +
        n_pages_written``."""
        return self.ckpt.redo.file_writes + self.pool.reads + self.flusher.pages_flushed

    def n_pending_ios(self) -> int:
        """``buf_get_n_pending_ios() + log_sys->n_pending_writes``: pages being read or
        written, log writes in flight."""
        return len(self.pool.reading) + len(self.pool.io_fixed) + self.ckpt.redo.n_pending_writes

    def lru_depth(self, active: bool) -> int:
        return 0

    def plan(self, active: bool) -> Batch | None:
        raise NotImplementedError

    def done(self, flushed: int) -> None:
        pass

    def ten_second_batches(self):
        """Generator of the flush-list batches of the thread's 10-second part, each asked
        for after the one before it ran (none for the 5.6 page cleaner)."""
        return iter(())


class MasterThread(FlushPolicy):
    """``srv_master_thread``'s once-a-second flushing (``srv0srv.c``); ``adaptive()`` is
    the algorithm's, run below ``innodb_max_dirty_pages_pct``."""

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.n_ios_very_old = self.n_ios()
        # XtraDB 5.5's master thread never skips its sleep (the loop keeps the second
        # by next_itr_time alone); 5.1, the plugin, 5.5 and XtraDB 5.1 do after a
        # PCT_IO(100) batch
        self.skips_sleep = cfg.version != "percona_5.5"

    def plan(self, active: bool) -> Batch | None:
        self.skip_sleep = False
        self.sleep_ns = SECOND_NS
        if self.pool.dirty_pct() > self.cfg.innodb_max_dirty_pages_pct:
            self.above_dirty_limit()
            # "there may be more to flush" (srv0srv.c); XtraDB 5.5 sleeps on
            self.skip_sleep = self.skips_sleep
            return Batch(self.pct_io(100))
        return self.adaptive()

    def ten_second_batches(self):
        if (self.n_pending_ios() < self.pct_io(3)
                and self.n_ios() - self.n_ios_very_old < self.pct_io(200)):
            yield Batch(self.pct_io(100))
        yield Batch(self.pct_io(100) if self.pool.dirty_pct() > 70 else self.pct_io(10))
        self.n_ios_very_old = self.n_ios()     # at the loop's start again

    def above_dirty_limit(self) -> None:
        """The ``PCT_IO(100)`` branch ran instead of the algorithm (XtraDB resets
        ``lsn_old`` and ``prev_adaptive_checkpoint`` there)."""

    def adaptive(self) -> Batch | None:
        return None
