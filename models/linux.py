"""Linux kernel releases: which block-layer queue a device gets and the defaults that
changed between releases, for the knobs the models have.

``KernelConfig.version`` names one of ``RELEASES``. ``pipeline.spec`` applies it to the
composed config before the model configs are built: a setting the user (or an
experiment, or a preset) wrote explicitly wins; a setting left ``null`` takes the
kernel's default; a setting the kernel does not have (a blk-mq scheduler on a kernel
without blk-mq, a legacy elevator on 5.0+) is a one-line error naming the key.

What changes per release (the README's "Kernel versions" table is this, in prose):

- **Queue kind and default scheduler** (``block.scheduler: null``): the legacy request
  queue with ``cfq`` (the default elevator since 2.6.18) up to 3.10; blk-mq appeared in
  3.13, NVMe uses it from 3.19 (only it), SCSI / SATA from 4.19 by default
  (``CONFIG_SCSI_MQ_DEFAULT``; ``scsi_mod.use_blk_mq=0`` still gives the legacy queue);
  5.0 removed the legacy queue. A blk-mq kernel defaults to ``mq-deadline`` on a
  single-queue device and ``none`` on a multi-queue one (``elevator_get_default``).
- **Stable pages** (``fs.stable_pages: null``): every device 3.0-3.8; from 3.9 only
  devices that need them (none modelled) - commit 1d1d1a767206.
- **sync_file_range writeback** (``fs.sfr_write_waits: null``): ``WB_SYNC_ALL`` before
  4.20 (commit 23d0127096cb).
- **Barriers** (``fs.nobarrier: null``): ext3 mounts with barriers from 3.1 (before,
  ``barrier=0``: the filesystem's own default, ``FsConfig.barrier``).
- **fsync's cache flush** (``fs.fsync_flushes_cache: null``): with barriers, an fsync
  that needs no journal commit flushes the drive cache on every filesystem from 2.6.32
  (ext3 gained it then); before, ext3 sent nothing, the others are kept as they were.
- **O_SYNC** (``fs.osync_is_dsync: null``): proper O_SYNC from 2.6.33; before, the
  filesystem's own default (ext3 as O_DSYNC) is kept, so ext4 / xfs on a 2.6.18 kernel
  (an anachronism some experiments use) behave as they always did here.
- **deadline's batches** (``block.deadline_contiguous_batches: null``): up to 2.6.27 a
  batch ends at the first request that does not continue the last one, and a sweep
  that lost its place restarts at the lowest sector; from 2.6.28 (commits 6f5d8aa6,
  63de428b) a batch is ``fifo_batch`` requests in sector order and a new one starts at
  the oldest request (``models/block/deadline.py``).
- **Request lists** (``block.request_lists: null``): the legacy queue's two lists of
  ``nr_requests`` each count reads and writes up to 2.6.29, sync and async requests
  from 2.6.30 (commit 1faa16d2; an O_DIRECT or fsync write then shares the readers'
  list, background writeback has the other) - ``models/block/requests.py``.
- **Flush merging** (``block.flush_merging: null``): from 2.6.37 (blk-flush, commit
  ae1b1539) one cache FLUSH is in flight per flush queue and every FLUSH asked
  meanwhile is served by the next one; before, each went to the device
  (``models/block/blk_flush.py``).
- **The device node's fsync and O_SYNC writes** (``block.blkdev_sync: null``):
  none before 2.6.32 (``block_fsync`` sent no FLUSH; vanilla 2.6.33 added it, commit
  ab0a9735, and RHEL 6's 2.6.32 carries it); a FLUSH after each from 2.6.32 - for an
  asynchronous O_SYNC write at its submission, up to 3.10; FUA on the write from 4.10
  (``dio_bio_write_op``), plus the FLUSH for a synchronous one
  (``models/block/config.py``).
- **Congestion**: a blk-mq queue is never congested (only the legacy request
  allocator set the flag), so the flusher does not back off from it
  (``models/block/mq/queue.py``).

The same on every release, deliberately (what the models do not distinguish): the
bdi flusher threads of 2.6.32+ (2.6.18's pdflush is not modelled), the IO-less dirty
throttling of 3.2+ (``models/fs/pagecache.py``), REQ_FLUSH / FUA of 2.6.37+ (the
2.6.18-2.6.36 barrier that drained the queue around a flush is not modelled; the
flush merging of 2.6.37+ is),
write-back throttling (``wbt``, 4.10+), the scheduler's own changes between releases
(mq-deadline's priorities of 5.14+, bfq's tuning).
"""
from __future__ import annotations

from dataclasses import dataclass

from .block.config import LEGACY_SCHEDULERS, MQ_SCHEDULERS

RELEASES = ("2.6.18", "2.6.32", "3.10", "4.19", "5.15", "6.1")


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


@dataclass(frozen=True)
class KernelConfig:
    """``version``: the Linux release (``kernel=5.15``), one of ``RELEASES``; the
    published experiments ran on 2.6.18 (RHEL 5), the default."""

    version: str = "2.6.18"

    def __post_init__(self) -> None:
        if self.version not in RELEASES:
            raise ValueError(f"version: unknown release {self.version!r} (known: "
                             f"{', '.join(RELEASES)}; on the command line kernel=3.10, "
                             "in YAML a quoted '3.10')")

    @property
    def release(self) -> tuple[int, ...]:
        return _v(self.version)

    # -- block layer -------------------------------------------------------------------
    def has_legacy_queue(self) -> bool:
        return self.release < (5, 0)

    def has_blk_mq(self, nvme: bool) -> bool:
        """blk-mq for an NVMe drive from 3.19, for SCSI / SATA from 3.17 (scsi-mq,
        opt-in; 3.13 brought blk-mq itself)."""
        return self.release >= ((3, 19) if nvme else (3, 17))

    def nvme_needs_blk_mq(self) -> bool:
        return self.release >= (3, 19)

    def default_scheduler(self, nvme: bool, multi_queue: bool) -> str:
        """``queue/scheduler`` of a new device: ``nvme``: an NVMe drive (blk-mq only
        from 3.19); ``multi_queue``: it has more than one hardware queue."""
        if (nvme and self.nvme_needs_blk_mq()) or self.release >= (4, 19):
            return "none" if multi_queue else "mq-deadline"
        return "cfq"

    def deadline_contiguous_batches(self) -> bool:
        """deadline's batches end at a non-contiguous request (before 2.6.28)."""
        return self.release < (2, 6, 28)

    def request_lists(self) -> str:
        """How the legacy queue's two request lists divide requests."""
        return "read_write" if self.release < (2, 6, 30) else "sync_async"

    def flush_merging(self) -> bool:
        """One FLUSH in flight per flush queue, the ones asked meanwhile sharing the
        next (blk-flush, 2.6.37+)."""
        return self.release >= (2, 6, 37)

    def blkdev_sync(self) -> str:
        """What fsync of a block device node and its O_SYNC writes send."""
        v = self.release
        return "none" if v < (2, 6, 32) else "flush" if v < (4, 10) else "fua"

    def check_scheduler(self, scheduler: str, nvme: bool) -> str | None:
        """Why ``scheduler`` cannot be used on this release (None: it can)."""
        if scheduler in MQ_SCHEDULERS and not self.has_blk_mq(nvme):
            return (f"{scheduler} is a blk-mq scheduler; Linux {self.version} has only the "
                    f"legacy request queue ({', '.join(LEGACY_SCHEDULERS)})")
        if scheduler in LEGACY_SCHEDULERS:
            if not self.has_legacy_queue():
                return (f"{scheduler} is a legacy elevator, removed in Linux 5.0 (kernel "
                        f"{self.version}); use one of {', '.join(MQ_SCHEDULERS)}")
            if nvme and self.nvme_needs_blk_mq():
                return (f"{scheduler} is a legacy elevator; NVMe uses blk-mq only from "
                        f"Linux 3.19 (kernel {self.version}): use one of "
                        f"{', '.join(MQ_SCHEDULERS)}")
        return None

    # -- filesystem and page cache ---------------------------------------------------
    def fs_defaults(self) -> dict:
        """``FsConfig`` keys this release decides when the config leaves them null."""
        v = self.release
        out = {"stable_pages": (3, 0) <= v < (3, 9), "sfr_write_waits": v < (4, 20)}
        if v >= (3, 1):
            out["nobarrier"] = False
        if v >= (2, 6, 32):
            out["fsync_flushes_cache"] = True
        if v >= (2, 6, 33):
            out["osync_is_dsync"] = False
        return out
