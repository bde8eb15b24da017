"""A fio-like job: characterise any simulated device the way one characterises a real one.

Modelled (fio option names; fio's HOWTO for their meaning): ``rw`` = read | write |
randread | randwrite | randrw | readwrite, or ``rw`` (fio's alias of readwrite;
``rwmixread`` % reads for the mixed ones; fio's postfix ``randread:8`` / ``write:4k``,
``rw_sequencer`` and ``percentage_random``; where each I/O goes is
``models.workload.fio_offsets``; fio's
trim modes are refused as not modelled),
``bs`` (``r[,w]``), ``bsrange``, ``bssplit`` (each I/O's size:
``models.workload.fio_bs``), ``iodepth``, ``numjobs`` (each job its own region of ``size`` bytes starting at
``offset`` + job * ``size``; ``size`` and ``offset`` as fio writes them, ``4k``, ``1g``
or a percentage of the device, ``20%``), ``ioengine`` = libaio | io_uring (asynchronous,
``iodepth`` in flight) | sync | psync (one synchronous I/O at a time: iodepth 1),
``iodepth_batch_submit`` (I/Os per ``io_submit()``; submitted under a plug so the
block layer can merge them), ``iodepth_batch_complete_min`` (completions reaped
before refilling), ``ramp_time_s`` (lead-in: statistics start after it), ``runtime_s``
(counted from the ramp's end, as fio's: a job runs ramp + runtime; at its end the job
issues nothing more, and the I/Os it has in flight complete and count - fio's ``do_io``
reaps them, and the job's measured time runs to the last), ``startdelay_s``
(fio ``startdelay``: the job starts that long after the run - or its stonewall - and
then runs its ramp and runtime), ``time_based``
(false: each job stops once it has done ``size`` bytes, as fio does without it; true,
the default here: it loops over its region until its runtime is over), ``loops`` (a
job that is not time based passes over its region that many times), ``io_size`` (the
bytes of I/O of such a pass, within the region: ``size=20g io_size=5g`` stops after
5 GB, ``io_size=40g`` goes over the region twice; a percentage is of the region),
``number_ios`` (stop after that many I/Os per job); a job whose sizes vary and that is
not time based stops after ``loops`` x ``io_size`` bytes (``size`` by default).

Latencies, as fio times them: an asynchronous engine's I/O is issued when its
``io_submit`` returns - at once unless the call sleeps for a request (``nr_requests``,
blk-mq tags), then when every bio of the call is queued; its ``slat`` is that sleep
(``FioJob.slat``: the ones that are not 0), its ``clat`` (``FioJob.lat``) runs from the
issue to the completion (0 if it completed while the call slept: fio reaps it after
the call). A synchronous engine's call has no slat: its sleep is in its clat.

Also modelled, as fio documents them:

- ``thinktime_us`` (fio ``thinktime``) after every ``thinktime_blocks`` completions the
  job waits for its I/Os in flight, then stalls that long before it issues again (fio's
  ``handle_thinktime`` quiesces first);
- ``rate_iops`` / ``rate`` = ``r[,w]``: each job's reads and writes capped each, I/Os
  or bytes a second, evenly or as Poisson arrivals (``rate_process``);
  ``rate_iops_min`` / ``rate_min`` (``rate_cycle_ms``): a job that
  falls below ends with fio's error (``models.workload.fio_pace``);
- ``random_distribution`` = random | zipf:<theta> | pareto:<h> | normal:<pct> |
  zoned:<access>/<size %>:... | zoned_abs:<access>/<bytes>:...
  (``models.workload.fio_random``);
- ``fsync`` / ``fdatasync`` = N: after every N writes the job waits for its I/Os in
  flight, then for a FLUSH of the device (``fsync(2)`` of a block device is a cache
  flush, for either call, from Linux 2.6.32 - ``BlockConfig.blkdev_sync``; before, it
  sends nothing), then goes on; their latencies are the ``sync`` statistics;
- ``sync`` = none | sync (1) | dsync: the job's writes are ``O_SYNC`` / ``O_DSYNC`` (the
  same on a block device), as the kernel's device node sends them
  (``BlockConfig.blkdev_sync``): before 2.6.32 as plain writes; 2.6.32-3.10 each
  followed by a FLUSH - a synchronous engine's write completes when its FLUSH has, an
  asynchronous one's FLUSH is sent as the write is queued and the job waits for it
  before it issues again (``fio_pace``); from 4.10 each write carries FUA (on a queue
  without FUA: the write, then a FLUSH - ``models/block/fua.py``) and a synchronous
  engine's write is followed by a FLUSH as well. Latency (``clat``) of a synchronous
  engine's write runs to the end of its FLUSH, as fio's ``pwrite`` does;
- ``end_fsync`` (``fsync_on_close``, one file per job): a job that writes ends with an
  fsync of the device (as ``fsync``'s, by kernel) inside its runtime - once the
  runtime is over (or the job's I/O is done) it issues nothing more, its I/Os in
  flight complete and count, then the sync, and the job's measured time runs to its
  end (fio's ``do_io``). Its latency is not a ``sync`` statistic (fio does not count
  it).

Only ``direct=1`` (``buffered=0``) is modelled here: the job submits straight to a
block device (``direct=0``, through a filesystem and the page cache, is
``models.workload.fio_buffered``).

Reports per job group: IOPS, MB/s and completion latency percentiles (submit to
completion, ms), per direction.

Deliberately not modelled: verify, per-direction distributions,
``thinktime_blocks_type=issue``; a holed sequential pass
(``rw=write:4k``) with sizes that vary is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..block import BlockQueue
from ..checks import MAX_SECONDS, above, at_least, at_most
from ..device.request import FLUSH, READ, WRITE, IORequest
from ..fs.config import O_DSYNC, O_SYNC
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size
from .fio_bs import block_sizes
from .fio_pace import Pace, min_bytes_per_s, rate_ns_per_io
from .fio_offsets import (RW_SEQUENCERS, Offsets, byte_limit, io_limit, percentage_random,
                          rw_postfix, size_percent)
from .fio_random import parse_distribution
from .fio_stats import FioGroup

# fio's rw= values (options.c, "rw"): the spelling -> the mode run; the trim ones are not
RW_MODES = {**{m: m for m in ("read", "write", "randread", "randwrite", "randrw", "readwrite")},
            "rw": "readwrite"}
RW_NOT_MODELLED = ("trim", "randtrim", "trimwrite", "randtrimwrite")
IOENGINES = ("libaio", "io_uring", "psync", "sync")
SYNC_ENGINES = ("psync", "sync")     # one I/O at a time: iodepth is 1
# fio's sync= values (options.c, "sync"): the open flag of the job's writes
SYNC_FLAGS = {"none": 0, "0": 0, "sync": O_SYNC, "1": O_SYNC, "dsync": O_DSYNC}


@dataclass(frozen=True)
class FioConfig:
    rw: str = "randread"
    bs: str = "4k"
    bsrange: str = ""
    bssplit: str = ""
    iodepth: int = 1
    numjobs: int = 1
    size: str = "1g"
    offset: str = "0"
    rwmixread: int = 50
    ioengine: str = "libaio"
    direct: bool = True
    iodepth_batch_submit: int = 1
    iodepth_batch_complete_min: int = 1
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
        if skip and not self.fixed_bs:
            raise ValueError(f"rw: a holed sequential pass ({self.rw!r}) with sizes that "
                             f"vary (bs per direction, bsrange, bssplit) is not modelled")
        size_pct = size_percent(self.size, "size")
        offset_pct = size_percent(self.offset, "offset")
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
        if offset_pct is not None:
            if not 0 <= offset_pct < 100:
                raise ValueError(f"offset: a percentage must be in [0, 100), got {self.offset!r}")
        elif parse_size(self.offset, "offset") % 512:
            raise ValueError(f"offset: must be a multiple of 512 bytes, got {self.offset!r}")
        at_least(self, 1, "iodepth", "numjobs", "iodepth_batch_submit", "iodepth_batch_complete_min")
        if self.iodepth_batch_submit > self.iodepth:
            raise ValueError(f"iodepth_batch_submit: must be <= iodepth ({self.iodepth})")
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
        """(reads, writes) ``fio_bs.DirSizes`` from ``bs``, ``bsrange``, ``bssplit``."""
        return block_sizes(self.bs, self.bsrange, self.bssplit)

    @property
    def bs_bytes(self) -> int:
        """The smallest size of any direction (fio's ``td_min_bs``): the region's
        alignment and the random offsets' grid."""
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


class _Job:
    """One fio job: keeps ``iodepth`` I/Os in flight against one block queue."""

    def __init__(self, fio: "FioJob", index: int, rng: np.random.Generator) -> None:
        cfg = fio.cfg
        self.fio = fio
        self.index = index
        self.rng = rng
        self.region_start = fio.offset_bytes + index * fio.size_bytes
        self.offsets = Offsets(cfg, fio.size_bytes, rng)
        self._draw = self.offsets.next
        sync_engine = cfg.ioengine in SYNC_ENGINES
        self.iodepth = 1 if sync_engine else cfg.iodepth
        self.batch = 1 if sync_engine else cfg.iodepth_batch_submit
        self.complete_min = 1 if sync_engine else cfg.iodepth_batch_complete_min
        self.in_flight = 0
        # an asynchronous engine's io_submit that sleeps (no request free) delays its
        # I/Os' issue time: fio's slat (a synchronous engine's sleep is in its call, clat)
        self.timed_submit = not sync_engine
        self.call: Sequence[IORequest] = ()      # the bios of the sleeping io_submit
        self.early: list[IORequest] = []        # ... completed before it returned
        self.depth_ios = [0] * (self.iodepth + 1)   # I/Os issued at each depth (io_u_map)
        self.reaped = 0          # completions since the last refill
        self.issued = 0
        self.limit = io_limit(cfg, fio.size_bytes)
        self.byte_limit = byte_limit(cfg, fio.size_bytes)
        self.issued_bytes = 0
        self.blocked = False
        # O_SYNC / O_DSYNC writes (fio sync=) as the kernel's device node sends them
        # (BlockConfig.blkdev_sync; unset: 2.6.18's, nothing)
        mode = fio.blkdev_sync
        dsync = bool(cfg.o_sync) and mode != "none"
        self.fua_op = WRITE if dsync and mode == "fua" else -1   # writes carry FUA
        self.flush_after_write = dsync and sync_engine    # generic_write_sync's FLUSH
        self.flush_at_submit = dsync and mode == "flush" and not sync_engine
        self.end_sync = cfg.end_fsyncs

    def exhausted(self) -> bool:
        """Has the job issued all it issues (``number_ios``, or its passes over the
        region: in I/Os, or in bytes when its sizes vary)?"""
        return ((self.limit is not None and self.issued >= self.limit)
                or (self.byte_limit is not None and self.issued_bytes >= self.byte_limit))

    def refill(self) -> None:
        """Queue new I/Os up to iodepth, submitting in batches of iodepth_batch_submit."""
        fio = self.fio
        if self.blocked or fio.stopping:
            return
        self.reaped = 0
        iodepth, batch, limit = self.iodepth, self.batch, self.limit
        submit, draw, start = fio.queue.submit, self._draw, self.region_start
        blimit = self.byte_limit
        fua_op = self.fua_op
        if batch == 1:      # one bio per io_submit: no list, no plug
            on_done, index, depth_ios = self.on_done, self.index, self.depth_ios
            while self.in_flight < iodepth:
                if limit is not None and self.issued >= limit:
                    return
                if blimit is not None and self.issued_bytes >= blimit:
                    return
                op, off, nbytes = draw()
                self.in_flight += 1
                self.issued += 1
                self.issued_bytes += nbytes
                depth_ios[self.in_flight] += 1
                bio = IORequest(op, start + off, nbytes, on_done, True, op == fua_op, index)
                gate = submit(bio)
                if gate is not None:
                    self._wait(gate, (bio,))
                    return
            return
        while self.in_flight < iodepth:
            room = iodepth - self.in_flight
            n = batch if batch < room else room
            if limit is not None:
                left = limit - self.issued
                if left <= 0:
                    return
                if left < n:
                    n = left
            if blimit is not None and self.issued_bytes >= blimit:
                return
            if n < batch and room >= batch:
                return
            bios = []
            for _ in range(n):
                op, off, nbytes = draw()
                self.issued_bytes += nbytes
                bios.append(IORequest(op, start + off, nbytes, self.on_done, True,
                                      op == fua_op, self.index))
                if blimit is not None and self.issued_bytes >= blimit:
                    break
            n = len(bios)
            self.in_flight += n
            self.issued += n
            self.depth_ios[self.in_flight] += n
            gate = submit(bios[0] if n == 1 else bios, n > 1)
            if gate is not None:
                self._wait(gate, bios)
                return

    def _wait(self, gate, bios: Sequence[IORequest]) -> None:
        """The block layer has no request free: the ``io_submit`` call sleeps until its
        bios are queued. An asynchronous engine's bios are issued when it returns
        (``IORequest.tag``: -1 while it sleeps, then the time it returned)."""
        self.blocked = True
        if self.timed_submit:
            for b in bios:
                b.tag = -1
            self.call = bios
        gate.add_callback(self._unblocked)

    def _unblocked(self, _value) -> None:
        self.blocked = False
        if self.call:
            now = self.fio.sim.now_ns
            for b in self.call:
                b.tag = now
            self.call = ()
            for b in self.early:        # reaped once the call has returned: clat 0
                self._count_issued(b, now)
            self.early = []
        self.refill()

    def _count_issued(self, bio: IORequest, issued: int) -> None:
        """Count a bio whose ``io_submit`` slept: its clat from the call's return (or 0
        when it completed before), its slat up to it (``FioJob.slat``, sparse)."""
        fio, op = self.fio, bio.op
        samples = fio.lat[op].samples
        samples.append(bio.done_ns - issued if bio.done_ns > issued else 0)
        fio.slat[op].append((len(samples) - 1, issued - bio.submit_ns))

    def on_done(self, bio: IORequest) -> None:
        fio = self.fio
        self.in_flight -= 1
        self.reaped += 1
        if bio.submit_ns >= fio.measure_from_ns:
            op = bio.op
            issued = bio.tag
            if issued is None:          # issued as submitted: clat from there, slat 0
                fio.lat[op].samples.append(bio.done_ns - bio.submit_ns)  # LatencyRecorder.add
            elif issued < 0:            # its io_submit still sleeps
                self.early.append(bio)
            else:
                self._count_issued(bio, issued)
            fio.bytes_done[op] += bio.size_bytes
        if self.reaped >= self.complete_min or self.in_flight == 0:
            self.refill()
        if not self.in_flight:
            self.end_if_done()

    def end_if_done(self) -> None:
        """Nothing in flight and nothing more to issue: the job ends - after its
        ``end_fsync`` when it has one (fio's ``fio_file_fsync`` once the I/O loop
        drained, inside the job's runtime)."""
        fio = self.fio
        if self.in_flight or not (fio.stopping or self.exhausted()):
            return
        if self.end_sync:
            self.end_sync = False
            self.in_flight += 1
            fio.fsync_device(self.index, self._end_synced)
            return
        fio.job_finished()

    def _end_synced(self, _flush: IORequest) -> None:
        self.in_flight -= 1
        self.fio.job_finished()


class _PacedJob(_Job):
    """A job with think time, a rate cap, periodic syncs or O_SYNC writes
    (``models.workload.fio_pace``): the same loop, issuing at most what the pace allows
    now. A job whose O_SYNC writes are synced when submitted issues one I/O at a time
    until a write makes it wait for its FLUSH."""

    def __init__(self, fio: "FioJob", index: int, rng: np.random.Generator) -> None:
        super().__init__(fio, index, rng)
        self.pace = Pace(self, fio.cfg)
        self.max_depth = self.iodepth
        self._draw = self._paced_draw

    def refill(self) -> None:
        while True:
            if self.blocked or self.fio.stopping:
                return
            allowed = self.pace.allowance()
            if allowed <= 0:
                return
            issued = self.issued
            self.iodepth = min(self.max_depth, self.in_flight + allowed)
            try:
                super().refill()
            finally:
                self.iodepth = self.max_depth
            if not self.blocked:
                self.pace.issued_all_due()
            if not self.flush_at_submit or self.issued == issued:
                return

    def _paced_draw(self) -> tuple[int, int, int]:
        """The drawn direction as the pace lets it go (a rate cap may switch it), and
        the offset and size of an I/O of the direction it goes in."""
        op = self.pace.issue(self.offsets.direction())
        off, nbytes = self.offsets.offset(op)
        self.pace.issued(op, nbytes)
        return op, off, nbytes

    def on_done(self, bio: IORequest) -> None:
        if self.flush_after_write and bio.op == WRITE:
            # a synchronous O_SYNC write returns once the FLUSH that follows it has
            self.fio.fsync_device(self.index, lambda f, bio=bio: self._write_synced(bio, f))
            return
        self.pace.completed(bio)
        super().on_done(bio)

    def _write_synced(self, bio: IORequest, flush: IORequest) -> None:
        bio.done_ns = flush.done_ns
        self.pace.completed(bio)
        super().on_done(bio)


class FioJob(FioGroup):
    """A group of ``numjobs`` jobs with the same options against one block queue."""

    def __init__(self, sim: Simulator, cfg: FioConfig, queue: BlockQueue,
                 rng: np.random.Generator) -> None:
        if not cfg.direct:
            raise ValueError("direct: the block-device fio job is direct=1 (buffered=0); "
                             "direct=0 runs on a filesystem (models.workload.fio_buffered)")
        self.offset_bytes, self.size_bytes = cfg.region(queue.device.capacity_bytes)
        end = self.offset_bytes + cfg.numjobs * self.size_bytes
        if end > queue.device.capacity_bytes:
            raise ValueError(f"size: numjobs x size + offset ({end} bytes) exceeds device "
                             f"{queue.device.name!r} ({queue.device.capacity_bytes} bytes)")
        self.sim = sim
        self.cfg = cfg
        self.queue = queue
        self.blkdev_sync = queue.cfg.blkdev_sync or "none"    # unset: 2.6.18's
        self.lat = {READ: LatencyRecorder(), WRITE: LatencyRecorder()}   # clat
        # slat of the I/Os whose io_submit slept: (index into lat's samples, ns); every
        # other I/O's is 0
        self.slat: dict[int, list[tuple[int, int]]] = {READ: [], WRITE: []}
        self.bytes_done = {READ: 0, WRITE: 0}
        self.stopping = False
        self.running = 0
        self.ramp_ns = int(cfg.ramp_time_s * 1e9)
        self.runtime_ns = int(cfg.runtime_s * 1e9)      # measured, after the ramp
        self.measure_from_ns = self.ramp_ns
        seeds = rng.bit_generator.seed_seq.spawn(cfg.numjobs) if hasattr(rng.bit_generator, "seed_seq") else None
        job_cls = _Job if cfg.plain else _PacedJob
        self.jobs = [job_cls(self, j, np.random.default_rng(seeds[j]) if seeds else rng)
                     for j in range(cfg.numjobs)]
        self.started_ns = 0
        self.finished_ns: int | None = None
        self._iostat_from: tuple | None = None
        self.sync_lat = LatencyRecorder()      # fsync/fdatasync: drain + FLUSH

    def start(self) -> None:
        """Start the jobs, after ``startdelay``."""
        delay_ns = int(self.cfg.startdelay_s * 1e9)
        if delay_ns:
            self.measure_from_ns = self.sim.now_ns + delay_ns + self.ramp_ns
            self.sim.after(delay_ns, self._start_now)
        else:
            self._start_now()

    def _start_now(self, _arg=None) -> None:
        self.running = len(self.jobs)
        self.started_ns = self.sim.now_ns
        self.measure_from_ns = self.started_ns + self.ramp_ns
        self._iostat_from = self.queue.snapshot()
        if self.ramp_ns:    # without a ramp the measured interval starts with the job
            self.sim.at(self.measure_from_ns, self._begin_measure)
        # fio: runtime counts from the ramp's end (reset_all_stats resets td->epoch)
        self.sim.at(self.measure_from_ns + self.runtime_ns, self.runtime_over)
        for job in self.jobs:
            job.refill()

    def _begin_measure(self, _arg=None) -> None:
        self._iostat_from = self.queue.snapshot()
        self.measure_from_ns = self.sim.now_ns
        for job in self.jobs:
            job.depth_ios = [0] * len(job.depth_ios)

    def submit_latencies(self):
        return None if self.cfg.ioengine in SYNC_ENGINES else self.slat

    def jobs_stop(self) -> None:
        for job in self.jobs:
            job.end_if_done()

    def fsync_device(self, issuer: int, on_done) -> None:
        """``fsync(2)`` of the block device: a FLUSH from 2.6.32 (``on_done`` gets it at
        its completion), nothing before (``BlockConfig.blkdev_sync`` none: ``on_done``
        at once, with a request that took no time)."""
        flush = IORequest(FLUSH, 0, 0, on_done, True, False, issuer)
        if self.blkdev_sync == "none":
            flush.submit_ns = flush.done_ns = self.sim.now_ns
            self.sim.at(self.sim.now_ns, on_done, flush)
            return
        # with nr_requests exhausted the FLUSH waits in the queue; nothing else to hold
        self.queue.submit(flush)

    def job_finished(self) -> None:
        self.running -= 1
        if self.running == 0 and self.finished_ns is None:
            self._stop()
