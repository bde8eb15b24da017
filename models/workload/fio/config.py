"""A fio job's options (``FioConfig``), checked as fio checks them, and the values fio
accepts for ``rw``, ``ioengine`` and ``sync``; what each option does is the package's
docstring (``models/workload/fio/__init__.py``)."""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import MAX_SECONDS, above, at_least, at_most
from ...fs.config import O_DSYNC, O_SYNC
from ...units import parse_size
from .bs import block_align, block_sizes
from .distribution import parse_distribution
from .offsets import RW_SEQUENCERS, percentage_random, rw_postfix, size_percent
from .pace import min_bytes_per_s, rate_ns_per_io

# fio's rw= values (options.c, "rw"): the spelling -> the mode run; the trim ones are not
RW_MODES = {**{m: m for m in ("read", "write", "randread", "randwrite", "randrw", "readwrite")},
            "rw": "readwrite"}
RW_NOT_MODELLED = ("trim", "randtrim", "trimwrite", "randtrimwrite")
IOENGINES = ("libaio", "io_uring", "psync", "sync")
SYNC_ENGINES = ("psync", "sync")     # one I/O at a time: iodepth is 1
# fio's sync= values (options.c, "sync"): the open flag of the job's writes
SYNC_FLAGS = {"none": 0, "0": 0, "sync": O_SYNC, "1": O_SYNC, "dsync": O_DSYNC}
# fio's fadvise_hint= values (options.c): none, by the job's pattern, or one advice
FADVISE_HINTS = ("0", "1", "random", "sequential", "noreuse")


@dataclass(frozen=True)
class FioConfig:
    rw: str = "randread"
    bs: str = "4k"
    bsrange: str = ""
    bssplit: str = ""
    ba: str = ""                # fio's ba / blockalign: random offsets' alignment
    iodepth: int = 1
    numjobs: int = 1
    size: str = "1g"
    offset: str = "0"
    offset_increment: str = "0"
    rwmixread: int = 50
    ioengine: str = "libaio"
    direct: bool = True
    iodepth_batch_submit: int = 1
    iodepth_batch_complete_min: int = 1
    iodepth_low: int = 0
    fadvise_hint: str = "1"
    runtime_s: float = 10.0
    ramp_time_s: float = 0.0
    startdelay_s: float = 0.0
    number_ios: int = 0
    io_size: str = ""
    loops: int = 1
    time_based: bool = True
    thinktime_us: float = 0.0
    thinktime_blocks: int = 1
    rate_iops: str = "0"
    rate: str = "0"
    rate_min: str = "0"
    rate_iops_min: str = "0"
    rate_cycle_ms: int = 1000
    rate_process: str = "linear"
    random_distribution: str = "random"
    fsync: int = 0
    fdatasync: int = 0
    sync: str = "none"
    end_fsync: bool = False
    rw_sequencer: str = "sequential"
    percentage_random: str = "100"

    def __post_init__(self) -> None:
        base = self.rw.partition(":")[0]
        if base in RW_NOT_MODELLED:
            raise ValueError(f"rw: {self.rw!r} is a fio mode that is not modelled here (no trims "
                             f"are issued); modelled: {', '.join(RW_MODES)}")
        if base not in RW_MODES:
            raise ValueError(f"rw: must be one of {', '.join(RW_MODES)} (with fio's optional "
                             f":<postfix>), got {self.rw!r}")
        seq_nr, skip = rw_postfix(self.rw, RW_MODES[base].startswith("rand"))
        percentage_random(self.percentage_random)
        if self.rw_sequencer not in RW_SEQUENCERS:
            raise ValueError(f"rw_sequencer: must be one of {', '.join(RW_SEQUENCERS)}, "
                             f"got {self.rw_sequencer!r}")
        if self.ioengine not in IOENGINES:
            raise ValueError(f"ioengine: must be one of {', '.join(IOENGINES)}, got {self.ioengine!r}")
        sizes = block_sizes(self.bs, self.bsrange, self.bssplit)
        bs = min(s.min_bs for s in sizes)
        block_align(self.ba, sizes)
        if skip and not self.fixed_bs:
            raise ValueError(f"rw: a holed sequential pass ({self.rw!r}) with sizes that "
                             f"vary (bs per direction, bsrange, bssplit) is not modelled")
        size_pct = size_percent(self.size, "size")
        if size_pct is not None:
            if not 0 < size_pct <= 100:
                raise ValueError(f"size: a percentage must be in (0, 100], got {self.size!r}")
        elif parse_size(self.size, "size") < bs:
            raise ValueError(f"size: must be at least the smallest block size ({bs} "
                             f"bytes), got {self.size!r}")
        if str(self.io_size).strip():
            io_pct = size_percent(self.io_size, "io_size")
            if io_pct is not None:
                if io_pct <= 0:
                    raise ValueError(f"io_size: a percentage must be > 0, got {self.io_size!r}")
            elif parse_size(self.io_size, "io_size") < bs:
                raise ValueError(f"io_size: must be at least the smallest block size ({bs} "
                                 f"bytes), got {self.io_size!r}")
        for name in ("offset", "offset_increment"):
            value = getattr(self, name)
            pct = size_percent(value, name)
            if pct is not None:
                if not 0 <= pct < 100:
                    raise ValueError(f"{name}: a percentage must be in [0, 100), got {value!r}")
            elif parse_size(value, name) % 512:
                raise ValueError(f"{name}: must be a multiple of 512 bytes, got {value!r}")
        at_least(self, 1, "iodepth", "numjobs", "iodepth_batch_submit", "iodepth_batch_complete_min")
        if self.iodepth_batch_submit > self.iodepth:
            raise ValueError(f"iodepth_batch_submit: must be <= iodepth ({self.iodepth})")
        at_least(self, 0, "iodepth_low")
        if str(self.fadvise_hint).lower() not in FADVISE_HINTS:
            raise ValueError(f"fadvise_hint: must be one of {', '.join(FADVISE_HINTS)}, "
                             f"got {self.fadvise_hint!r}")
        if self.iodepth_batch_complete_min > self.iodepth:
            raise ValueError(f"iodepth_batch_complete_min: must be <= iodepth ({self.iodepth})")
        if not 0 <= self.rwmixread <= 100:
            raise ValueError(f"rwmixread: must be in 0..100, got {self.rwmixread}")
        above(self, 0, "runtime_s")
        at_most(self, MAX_SECONDS, "runtime_s", "ramp_time_s", "startdelay_s")
        at_least(self, 0, "startdelay_s", "ramp_time_s", "number_ios", "thinktime_us", "fsync", "fdatasync")
        rate_ns_per_io(self)
        min_bytes_per_s(self)
        at_least(self, 1, "rate_cycle_ms", "loops")
        if self.rate_process not in ("linear", "poisson"):
            raise ValueError(f"rate_process: must be linear or poisson, got {self.rate_process!r}")
        at_least(self, 1, "thinktime_blocks")
        at_most(self, MAX_SECONDS * 1e6, "thinktime_us")
        parse_distribution(self.random_distribution)
        if self.fsync and self.fdatasync:
            raise ValueError("fdatasync: set fsync or fdatasync, not both")
        if str(self.sync).lower() not in SYNC_FLAGS:
            raise ValueError(f"sync: must be one of none (0), sync (1), dsync, "
                             f"got {self.sync!r}")

    @property
    def mode(self) -> str:
        """``rw`` as run, without its postfix: fio's alias ``rw`` is ``readwrite``."""
        return RW_MODES[self.rw.partition(":")[0]]

    @property
    def sync_every(self) -> int:
        """Writes between two syncs (fsync or fdatasync: both flush a block device)."""
        return self.fsync or self.fdatasync

    @property
    def end_fsyncs(self) -> bool:
        """Does each job end with an fsync (``end_fsync``, and the job writes: fio's
        ``should_fsync``)?"""
        return self.end_fsync and self.mode not in ("read", "randread")

    @property
    def o_sync(self) -> int:
        """The open flag of the job's writes (fio ``sync``): 0, ``O_SYNC`` or
        ``O_DSYNC``."""
        return SYNC_FLAGS[str(self.sync).lower()]

    @property
    def paced(self) -> bool:
        """Think time, a rate cap, periodic syncs or O_SYNC writes: issuing pauses."""
        return bool(self.thinktime_us or any(rate_ns_per_io(self)) or self.sync_every
                    or any(min_bytes_per_s(self)) or self.o_sync)

    @property
    def plain(self) -> bool:
        """No pace: the job needs none of ``_PacedJob``'s steps."""
        return not self.paced

    @property
    def block_sizes(self):
        """(reads, writes) ``bs.DirSizes`` from ``bs``, ``bsrange``, ``bssplit``."""
        return block_sizes(self.bs, self.bsrange, self.bssplit)

    @property
    def random_align(self) -> tuple[int, int]:
        """(reads, writes) alignment of random offsets: ``ba``, else ``min_bs``."""
        return block_align(self.ba, self.block_sizes)

    @property
    def bs_bytes(self) -> int:
        """The smallest size of any direction (fio's ``td_min_bs``): the region's
        alignment and, unless ``ba`` says otherwise, the random offsets' grid."""
        return min(s.min_bs for s in self.block_sizes)

    @property
    def fixed_bs(self) -> bool:
        """Every I/O of either direction has the one size ``bs_bytes``."""
        r, w = self.block_sizes
        return r.fixed and w.fixed and r.min_bs == w.min_bs

    def region(self, capacity_bytes: int) -> tuple[int, int]:
        """(offset, size) in bytes on a device of ``capacity_bytes``. Percentages are
        of the device, as fio's ``size=20%`` / ``offset=10%``: the offset aligned down
        to the smallest block size, the size capped at what lies beyond the offset and
        aligned to it."""
        bs = self.bs_bytes
        pct = size_percent(self.offset, "offset")
        offset = (int(capacity_bytes * pct / 100) // bs * bs if pct is not None
                  else parse_size(self.offset, "offset"))
        pct = size_percent(self.size, "size")
        if pct is None:
            return offset, parse_size(self.size, "size")
        size = min(int(capacity_bytes * pct / 100), capacity_bytes - offset) // bs * bs
        if size < bs:
            raise ValueError(f"size: {self.size} of the device beyond offset {offset} holds no "
                             f"block of {bs} bytes")
        return offset, size

    @property
    def fadvise(self) -> str | None:
        """The ``posix_fadvise`` advice fio gives a file it opens (ioengines.c
        ``td_io_open_file``): ``fadvise_hint=1``, fio's default, advises ``random`` for a
        random mode and ``sequential`` otherwise; 0: none."""
        hint = str(self.fadvise_hint).lower()
        if hint == "0":
            return None
        if hint == "1":
            return "random" if self.mode.startswith("rand") else "sequential"
        return hint

    def increment(self, capacity_bytes: int) -> int:
        """``offset_increment`` in bytes: how far each clone's region starts after the
        one before (fio's ``get_start_offset``: a percentage is of the device, aligned
        down to the smallest block size)."""
        pct = size_percent(self.offset_increment, "offset_increment")
        if pct is None:
            return parse_size(self.offset_increment, "offset_increment")
        return int(capacity_bytes * pct / 100) // self.bs_bytes * self.bs_bytes
