"""mq-deadline: the deadline policy on blk-mq (``block/mq-deadline.c``).

The algorithm and the sysfs knobs with their defaults are those of the legacy
``deadline`` (``read_expire`` 500 ms, ``write_expire`` 5 s, ``fifo_batch`` 16,
``writes_starved`` 2, ``front_merges`` 1): per-direction sector-sorted and FIFO
lists, batches in sector order, reads preferred until writes have been starved
``writes_starved`` times, an expired FIFO head starts the next batch. One instance
serves the whole request queue, as ``dd`` is per queue and not per hardware context.
So this is ``..deadline.Deadline`` itself, under its blk-mq name, with the batching of
Linux 2.6.28+ (``fifo_batch`` requests whether contiguous or not; a new batch at the
oldest request), whatever ``deadline_contiguous_batches`` says.

Not modelled: the I/O priority classes and ``prio_aging_expire`` of Linux 5.14+,
``async_depth`` (the share of scheduler tags async requests may take, 5.14+), zoned
write locking.
"""
from __future__ import annotations

from ..config import BlockConfig
from ..deadline import Deadline


class MQDeadline(Deadline):
    name = "mq-deadline"

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__(cfg)
        self.contiguous = False
