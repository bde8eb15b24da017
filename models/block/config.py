"""Configuration of one Linux request queue (``/sys/block/<dev>/queue/...``)."""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import MAX_SECONDS, above, at_least, at_most

LEGACY_SCHEDULERS = ("noop", "deadline", "cfq")     # the legacy request queue (base.py)
MQ_SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")   # blk-mq (mq/)
SCHEDULERS = LEGACY_SCHEDULERS + MQ_SCHEDULERS
REQUEST_LISTS = ("read_write", "sync_async")     # the legacy queue's two request lists
BLKDEV_SYNCS = ("none", "flush", "fua")   # the device node's fsync / O_SYNC writes


@dataclass(frozen=True)
class BlockConfig:
    """Request-queue knobs under their sysfs names.

    ``scheduler`` (``queue/scheduler``): noop | deadline | cfq pick the legacy request
    queue; none | mq-deadline | kyber | bfq pick blk-mq (``models/block/mq/``). ``None``
    (YAML ``null``): the ``kernel``'s default, resolved by the pipeline
    (``models/linux.py``) before a queue is built.
    ``nr_requests``: requests that may be allocated per queue (blk-mq: per hardware
    context, the scheduler tags); one more submitter sleeps. ``None``: the kernel's
    default - 128 (``BLKDEV_MAX_RQ``) on the legacy queue; on blk-mq the hardware
    context's tag depth with ``none``, twice ``min(tag depth, 128)`` with a scheduler
    (``blk_mq_init_sched``).
    ``max_sectors_kb``: largest request the queue builds by merging (and the size bios
    are split to).
    deadline (``queue/iosched/``): ``read_expire_ms``, ``write_expire_ms``,
    ``fifo_batch``, ``writes_starved``, ``front_merges``.
    mq-deadline reads the same five (its sysfs names and defaults are deadline's).
    ``deadline_contiguous_batches`` (no sysfs name: the kernel's code): deadline's batch
    ends at the first request that does not start where the last one ended, and a
    sweep that lost its place restarts at the lowest sector - Linux up to 2.6.27;
    from 2.6.28 a batch is ``fifo_batch`` requests in sector order and a new one starts
    at the oldest request (``models/block/deadline.py``). ``None``: the kernel's
    (``models/linux.py``), and 2.6.18's where no kernel is given. mq-deadline is
    always the newer one.
    ``request_lists`` (no sysfs name: the kernel's code): how the legacy queue splits its
    requests into two lists of ``nr_requests`` each (``request_list.count[2]``):
    ``read_write`` (Linux up to 2.6.29) or ``sync_async`` (2.6.30+, commit 1faa16d2:
    reads, O_DIRECT / fsync writes and flushes are sync). ``None``: the kernel's
    (``models/linux.py``), and 2.6.18's where no kernel is given. blk-mq has one tag
    pool per hardware context and ignores it.
    ``flush_merging`` (no sysfs name: the kernel's code): the flush machinery of Linux
    2.6.37+ (``block/blk-flush.c``, commit ae1b1539): at most one cache FLUSH in
    flight per flush queue (the legacy queue's one, blk-mq's per hardware context),
    and every FLUSH asked while it runs or waits is served by the next one. Before
    2.6.37 each FLUSH went to the device. ``None``: the kernel's (``models/linux.py``),
    and 2.6.18's (off) where no kernel is given.
    ``fua`` (``queue/fua``, read-only in Linux: set by the driver): the queue takes
    FUA writes; ``None``: the device's (``Device.fua``: SAS / SCSI, NVMe and RAID
    controllers yes, SATA drives behind libata no - ``true`` is ``libata.fua=1``).
    ``blkdev_sync`` (no sysfs name: the kernel's code, ``block/fops.c``): what
    ``fsync(2)`` of the block device node and its ``O_SYNC`` / ``O_DSYNC`` writes (fio's
    ``sync=1`` with ``direct=1``) send - ``none``: no FLUSH at all (Linux before
    ab0a9735 of 2.6.33, which RHEL 6's 2.6.32 carries: ``block_fsync`` only wrote the
    device's dirty pages); ``flush``: fsync sends a FLUSH, and an O_SYNC write is
    followed by one (``generic_write_sync``) - for an asynchronous write (libaio)
    taken when it is submitted, not when it completes (up to 3.10; 3.11 moved it to
    the completion); ``fua`` (4.10+): an O_SYNC write carries FUA
    (``dio_bio_write_op``), a synchronous one (psync) is then followed by a FLUSH, an
    asynchronous one is not. ``None``: the kernel's (``models/linux.py``), and
    2.6.18's (``none``) where no kernel is given.
    cfq: ``quantum`` (requests dispatched per queue turn), ``slice_sync_ms``,
    ``slice_async_ms``, ``back_seek_max_kb`` / ``back_seek_penalty`` (sysfs
    ``back_seek_max`` in KB, 16384, and ``back_seek_penalty``, 2: a request up to that
    far behind the head may go next, its distance counted that many times),
    ``fifo_expire_sync_ms`` / ``fifo_expire_async_ms`` (125 / 250 ms: a queue's oldest
    request waiting longer goes next, once a slice).
    kyber: ``read_lat_nsec``, ``write_lat_nsec`` (target latencies, 2 ms / 10 ms).
    bfq: ``slice_idle_ms`` (how long an emptied sync queue keeps the device for its
    process's next request, 8 ms; rotational devices only), ``timeout_sync_ms``
    (longest service of one queue, 125 ms),
    ``max_budget_sectors`` (sysfs ``max_budget``: sectors one queue may be served per
    turn; the kernel's 0 = auto-tune is not modelled, 16384 is its fixed default).
    """

    scheduler: str | None = "noop"
    nr_requests: int | None = 128
    max_sectors_kb: int = 512
    read_expire_ms: float = 500.0
    write_expire_ms: float = 5000.0
    fifo_batch: int = 16
    writes_starved: int = 2
    front_merges: bool = True
    deadline_contiguous_batches: bool | None = None
    request_lists: str | None = None
    flush_merging: bool | None = None
    fua: bool | None = None
    blkdev_sync: str | None = None
    quantum: int = 8
    slice_sync_ms: float = 100.0
    slice_async_ms: float = 40.0
    back_seek_max_kb: int = 16384
    back_seek_penalty: int = 2
    fifo_expire_sync_ms: float = 125.0
    fifo_expire_async_ms: float = 250.0
    read_lat_nsec: int = 2_000_000
    write_lat_nsec: int = 10_000_000
    slice_idle_ms: float = 8.0
    timeout_sync_ms: float = 125.0
    max_budget_sectors: int = 16384

    @property
    def contiguous_batches(self) -> bool:
        """deadline's batches of Linux before 2.6.28 (``deadline_contiguous_batches``)."""
        return self.deadline_contiguous_batches is not False

    def __post_init__(self) -> None:
        if self.scheduler is not None and self.scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler: must be one of {', '.join(SCHEDULERS)}, got {self.scheduler!r}")
        if self.nr_requests is not None:
            at_least(self, 1, "nr_requests")
        if self.blkdev_sync not in (None, *BLKDEV_SYNCS):
            raise ValueError(f"blkdev_sync: must be one of {', '.join(BLKDEV_SYNCS)}, "
                             f"got {self.blkdev_sync!r}")
        if self.request_lists not in (None, *REQUEST_LISTS):
            raise ValueError(f"request_lists: must be one of {', '.join(REQUEST_LISTS)}, "
                             f"got {self.request_lists!r}")
        at_least(self, 1, "read_lat_nsec", "write_lat_nsec", "max_budget_sectors")
        above(self, 0, "timeout_sync_ms")
        at_least(self, 0, "slice_idle_ms")
        at_most(self, MAX_SECONDS * 1e3, "slice_idle_ms")
        at_most(self, MAX_SECONDS * 1e3, "timeout_sync_ms")
        at_most(self, MAX_SECONDS * 1e9, "read_lat_nsec", "write_lat_nsec")
        at_least(self, 4, "max_sectors_kb")
        above(self, 0, "read_expire_ms", "write_expire_ms", "slice_sync_ms", "slice_async_ms")
        at_most(self, MAX_SECONDS * 1e3, "read_expire_ms", "write_expire_ms", "slice_sync_ms",
                "slice_async_ms")
        at_least(self, 1, "fifo_batch", "writes_starved", "quantum", "back_seek_penalty")
        at_least(self, 0, "back_seek_max_kb")
        above(self, 0, "fifo_expire_sync_ms", "fifo_expire_async_ms")
        at_most(self, MAX_SECONDS * 1e3, "fifo_expire_sync_ms", "fifo_expire_async_ms")
