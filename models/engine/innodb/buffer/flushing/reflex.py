"""XtraDB 5.1's ``innodb_adaptive_checkpoint=reflex`` (``srv_master_thread``,
``srv_adaptive_checkpoint == 1``; Percona Server 5.1 sources; dropped in 5.5). Follows
the source.

Once a second, below ``innodb_max_dirty_pages_pct``, by the checkpoint age against
``max_checkpoint_age`` (the log margin, ``log_sys->max_checkpoint_age``):

- up to 1/2: nothing;
- 1/2 to 3/4 ("1st defence line"): a flush-list batch of ``PCT_IO(10)`` pages;
- 3/4 to 7/8 ("2nd defence line"): ``PCT_IO(100)``;
- above 7/8 (``max_modified_age_async``): nothing from the master thread - the user
  threads' own preflush past the async point takes over (the flushing storm,
  ``LogCheckpointer.free_check``).

In both bands the thread does not sleep before its next loop (``skip_sleep``): the
batches follow each other for as long as the age stays in the band, so the weak band
flushes ``PCT_IO(10)`` per batch time, not per second. (A loop whose batch wrote
nothing sleeps, so the model never spins at one instant.)
"""
from __future__ import annotations

from .base import Batch, MasterThread


class Reflex(MasterThread):
    name = "reflex"

    def adaptive(self) -> Batch | None:
        oldest = self.pool.oldest_modification()
        if not oldest:
            return None
        age = self.lsn - oldest
        m = self.ckpt.max_checkpoint_age
        if age > m - m // 8:
            return None
        if age > m - m // 4:
            self.skip_sleep = True
            return Batch(self.pct_io(100))
        if age > m // 2:
            self.skip_sleep = True
            return Batch(self.pct_io(10))
        return None
