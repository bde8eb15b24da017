"""Configuration of the filesystem and page-cache layer, under Linux names.

``PageCacheConfig`` mirrors ``/proc/sys/vm/*`` (``dirty_ratio``, ``dirty_background_ratio``,
``dirty_expire_centisecs``, ``dirty_writeback_centisecs``) plus the memory the page
cache may use and the per-file read-ahead window (``read_ahead_kb``).

``FsConfig`` mirrors mount options (``nobarrier``, ``data=ordered``, ``commit=``) and
mkfs choices (journal size), the kernel-version switches the issue names (stable page
writes, the pre-4.20 ``sync_file_range`` writeback mode) and the per-call CPU costs of
the kernel paths. The CPU costs are physical (one value for every experiment),
order-of-magnitude figures for a 2009-2012 Xeon (syscall entry/exit ~0.5-1 us, a 4 KB
memcpy ~1 us at ~4 GB/s, a context switch / wake-up of a sleeping thread a few us);
they are not tuned to any published figure - except ``wakeup_ns``, calibrated (with
the RAID controller's latency) on the E2 / E4 figures (``models/engine/cpu.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import at_least
from ..units import parse_size

PAGE_BYTES = 4096  # page-cache page = filesystem block (4 KB on x86 for all modelled fs)

# sync_file_range(2) flags, as in <fcntl.h>
SYNC_FILE_RANGE_WAIT_BEFORE = 1
SYNC_FILE_RANGE_WRITE = 2
SYNC_FILE_RANGE_WAIT_AFTER = 4

# open(2) flags of a synchronous file, as in <asm-generic/fcntl.h> (x86 Linux >= 2.6.33:
# O_SYNC = __O_SYNC | O_DSYNC; before, O_SYNC had O_DSYNC's value and meaning)
O_DSYNC = 0o10000
O_SYNC = 0o4010000

FS_TYPES = ("ext3", "ext4", "xfs", "zfs")
DATA_MODES = ("ordered", "writeback")
PREALLOCATE = ("none", "fallocate", "posix_fallocate", "zero_fill")
# posix_fadvise advice (POSIX_FADV_*) Filesystem.fadvise takes (noreuse changes nothing)
FADVISE = ("normal", "sequential", "random", "noreuse")


@dataclass(frozen=True)
class PageCacheConfig:
    """The page cache (global for all filesystems that share it).

    - ``memory_bytes``: memory the page cache may use (``4g``); clean pages beyond it
      are evicted in LRU order.
    - ``dirty_background_ratio`` / ``dirty_ratio``: percent of ``memory_bytes`` dirty
      before background writeback starts / before writers are throttled
      (``balance_dirty_pages``). Linux >= 2.6.22 defaults 10 / 20 (RHEL 5: 10 / 40).
    - ``dirty_expire_centisecs``: dirty data older than this is written by the flusher
      (default 3000 = 30 s); ``dirty_writeback_centisecs``: flusher wake-up period
      (default 500 = 5 s).
    - ``read_ahead_kb``: maximum read-ahead window of a sequential buffered reader.
    """

    memory_bytes: int | str = "4g"
    dirty_background_ratio: int = 10
    dirty_ratio: int = 20
    dirty_expire_centisecs: int = 3000
    dirty_writeback_centisecs: int = 500
    read_ahead_kb: int = 128

    def __post_init__(self) -> None:
        if self.memory_pages < 64:
            raise ValueError(f"memory_bytes: must be at least 256 KB, got {self.memory_bytes!r}")
        if not 0 <= self.dirty_background_ratio <= 100:
            raise ValueError(f"dirty_background_ratio: must be in 0..100, got {self.dirty_background_ratio}")
        if not 1 <= self.dirty_ratio <= 100:
            raise ValueError(f"dirty_ratio: must be in 1..100, got {self.dirty_ratio}")
        at_least(self, 1, "dirty_expire_centisecs", "dirty_writeback_centisecs")
        if self.read_ahead_kb < 0 or self.read_ahead_kb % 4:
            raise ValueError(f"read_ahead_kb: must be a non-negative multiple of 4, got {self.read_ahead_kb}")

    @property
    def memory_pages(self) -> int:
        return parse_size(self.memory_bytes, "memory_bytes") // PAGE_BYTES


@dataclass(frozen=True)
class FsConfig:
    """One mounted filesystem.

    - ``type``: ext3 | ext4 | xfs | zfs.
    - ``nobarrier``: mount option; ``None`` = the filesystem's default: ext3 mounts
      with ``barrier=0`` on every kernel before 3.1 (the E4 era), ext4 / xfs with
      barriers on, zfs flushes the vdev caches (``zfs_nocacheflush=0``).
    - ``data``: ext3/ext4 ``data=ordered`` (default) or ``data=writeback``.
    - ``journal_bytes``: jbd/jbd2 journal (mke2fs: 128 MB on a large fs), xfs log
      (``logsize``) or the ZIL region.
    - ``commit_interval_s``: ext3/ext4 ``commit=`` (5 s); xfs log sync (30 s,
      ``xfssyncd_centisecs``); zfs ``zfs_txg_timeout`` (5 s).
    - ``stable_pages``: ``write()`` to a page under writeback waits for it (every
      device in Linux 3.0-3.8; from 3.9 only devices that need stable pages,
      commit 1d1d1a767206). The pipeline's default is ``None``: the ``kernel``'s
      (``models/linux.py``), as for ``sfr_write_waits``.
    - ``sfr_write_waits``: ``SYNC_FILE_RANGE_WRITE`` writes with ``WB_SYNC_ALL`` and so
      waits for dirty pages already under writeback (every kernel before 4.20,
      commit 23d0127096cb); ``False`` models the newer ``WB_SYNC_NONE`` behaviour.
    - ``osync_is_dsync``: an ``O_SYNC`` write syncs like ``O_DSYNC`` (``fdatasync``), not
      like ``fsync``: every kernel before 2.6.33 ("For now, when the user asks for O_SYNC,
      we'll actually give O_DSYNC", mm/filemap.c; proper O_SYNC came with commit
      6b2f3d1f769b). ``None`` = the fs default: ext3 (the RHEL 5 2.6.18 kernel) yes,
      ext4 / xfs / zfs no.
    - ``fsync_flushes_cache``: with barriers, an fsync / fdatasync whose inode needs no
      journal commit (an overwrite) still flushes the device cache so that the data
      itself is stable. ext3 does from Linux 2.6.32 (``ext3_sync_file`` gained
      ``blkdev_issue_flush``, "ext3: Flush disk caches on fsync when needed"); before,
      it sent nothing and the overwritten data could sit in the drive's cache. ``None``
      = the kernel's (``models/linux.py``): from 2.6.32 yes; before, ext3 no, ext4 /
      xfs / zfs yes, as they always did here.
    - ``fallocate_supported``: ``None`` = the fs default (ext4/xfs yes; ext3 and
      ZFS-on-Linux of the era no: glibc's ``posix_fallocate`` then zero-fills).
    - CPU costs per kernel path (``*_ns``): ``syscall_ns`` (entry/exit + VFS),
      ``copy_ns_per_page`` (copy_from_user of 4 KB), ``alloc_ns`` (block allocator +
      journal handle per allocating call), ``wakeup_ns`` (a thread sleeping on I/O
      or on another thread is woken and scheduled on its idle core: IPI, idle-state
      exit, context switch - the same 20 us as the engine's ``cpu.wakeup_us``, where
      its calibration is explained), ``commit_cpu_ns`` (building one
      journal / log / ZIL commit), ``bio_ns`` (building and submitting one bio).
    """

    type: str = "ext4"
    nobarrier: bool | None = None
    data: str = "ordered"
    journal_bytes: int | str = "128m"
    commit_interval_s: float | None = None
    stable_pages: bool | None = False
    sfr_write_waits: bool | None = True
    fallocate_supported: bool | None = None
    osync_is_dsync: bool | None = None
    fsync_flushes_cache: bool | None = None
    syscall_ns: int = 1_000
    copy_ns_per_page: int = 1_000
    alloc_ns: int = 3_000
    wakeup_ns: int = 20_000
    commit_cpu_ns: int = 10_000
    bio_ns: int = 1_000

    def __post_init__(self) -> None:
        if self.type not in FS_TYPES:
            raise ValueError(f"type: must be one of {', '.join(FS_TYPES)}, got {self.type!r}")
        if self.data not in DATA_MODES:
            raise ValueError(f"data: must be one of {', '.join(DATA_MODES)}, got {self.data!r}")
        if self.journal_pages < 256:
            raise ValueError(f"journal_bytes: must be at least 1 MB, got {self.journal_bytes!r}")
        if self.commit_interval_s is not None and self.commit_interval_s <= 0:
            raise ValueError(f"commit_interval_s: must be > 0, got {self.commit_interval_s}")
        at_least(self, 0, "syscall_ns", "copy_ns_per_page", "alloc_ns", "wakeup_ns",
                 "commit_cpu_ns", "bio_ns")

    @property
    def journal_pages(self) -> int:
        return parse_size(self.journal_bytes, "journal_bytes") // PAGE_BYTES

    @property
    def barrier(self) -> bool:
        if self.nobarrier is None:
            return self.type != "ext3"
        return not self.nobarrier

    @property
    def commit_interval_ns(self) -> int:
        if self.commit_interval_s is not None:
            return int(self.commit_interval_s * 1e9)
        return int((30.0 if self.type == "xfs" else 5.0) * 1e9)

    @property
    def osync_datasync(self) -> bool:
        """Does an ``O_SYNC`` write sync only what ``fdatasync`` would?"""
        if self.osync_is_dsync is None:
            return self.type == "ext3"
        return self.osync_is_dsync

    @property
    def fsync_flush(self) -> bool:
        """With barriers, does an fsync that commits nothing flush the device cache?"""
        if self.fsync_flushes_cache is None:
            return self.type != "ext3"
        return self.fsync_flushes_cache

    @property
    def can_fallocate(self) -> bool:
        if self.fallocate_supported is None:
            return self.type in ("ext4", "xfs")
        return self.fallocate_supported
