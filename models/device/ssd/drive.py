"""A SATA flash SSD: NCQ command queue, a controller that processes commands one at a
time, a small volatile DRAM/SRAM write buffer, FLUSH, and flash dies behind channels
with a page-mapped FTL (``ftl.py``; compiled in ``ftl_kernels.py`` and ``kernels.py``).

Modelled, per command (all reservations in command arrival order, integer ns):

- Controller firmware: ``read_cmd_us`` / ``write_cmd_us`` / ``flush_cmd_us`` of serial
  processing per command. This is what bounds small random reads (one embedded CPU):
  1 / 28 us = ~35.7 k IOPS, the X25-E data sheet's 35 k.
- Host link (SATA 3 Gb/s = 300 MB/s after 8b/10b): one transfer at a time, shared by
  reads and writes. A read's data starts to flow as soon as its first page is in the
  controller and ends no earlier than the last page's arrival plus its own transfer.
- Flash (``ftl``, ``kernels``): ``channels`` x ``dies_per_channel`` dies,
  tR / tPROG / tBERS, the channel transfer rate, writes placed on the die that can
  take them first, greedy GC with over-provisioning. Internal parallelism is
  therefore explicit per die and channel, not ``n_servers``; sequential and random
  ceilings, and the write amplification of random writes, emerge from it.
- Write cache (WCE on): a write completes when its data is in the buffer (command
  overhead + link transfer); its pages are programmed in the background right away.
  When the buffer (``write_cache_bytes``) is full, the data transfer waits until
  programs free space, so sustained writes complete at flash speed. A write larger
  than the buffer streams in: past the first buffer-full, each page waits for room
  that programs (its own earlier pages included) free, and the write completes when
  its last page is in. FUA writes and WCE off complete when their pages are programmed.
- Power-loss protection (``power_loss_protection``, as ``nvme.py``'s): the buffer is
  durable - FLUSH CACHE costs its command time (after the NCQ drain), FUA writes
  complete in the buffer, ``volatile_bytes()`` is 0; WCE off: still when programmed.
- Statistics count time up to now: ``busy_ns`` includes the busy period in progress,
  ``cache_wait_ns`` (time write commands waited for buffer space, summed over
  commands; a command's waits are taken as one interval from when its transfer
  could have started) only the part of each wait that has elapsed, so neither can
  exceed the elapsed time (times the commands waiting). The flash counters
  (pages written, GC copies, erases) count work as it is booked, which for a write
  queued behind a long GC can be later than now.
- FLUSH CACHE (non-queued ATA command): the host drains the NCQ queue first, so the
  flush starts once every accepted command is done; without power-loss
  protection it waits for the buffer to be programmed and its open NAND page padded
  (with more than one unit per NAND page: ``kernels``), then commits the FTL
  metadata (``flush_metadata_pages`` NAND pages programmed one after another on the
  die free first, each a whole page's tPROG) if anything was written or trimmed since
  the last flush. No new command is accepted while it runs. A flush with nothing
  written costs only its command overhead. ``nobarrier`` is the filesystem's
  business: it never sends FLUSH.
- ``volatile_bytes()``: acknowledged write data still only in the buffer. Programmed
  pages are counted as durable (a page-mapped FTL rebuilds its map from the pages'
  out-of-band LPN tags after power loss), so the metadata commit is a cost, not a
  durability state.
- Precondition (the drive's history before the run): ``fresh`` (secure-erased:
  nothing mapped; reads of unwritten pages return zeros without touching flash),
  ``sequential`` (written once in order) or ``random`` (the steady state after
  uniform random page overwrites, where GC victims still hold most of their pages:
  data-sheet random-write conditions; seeded by the run's ``rng`` when the builder
  passes one, else by ``precondition_seed``). ``precondition_span_fraction`` is the
  share of the LBA space (from LBA 0) ever written; the rest is unmapped, which acts
  as extra spare area (a 9.5 GB database on a 64 GB drive that was secure-erased
  first sees far less write amplification than one on a drive written end to end).
- SLC cache (``slc_cache_bytes``, ``slc_cache_dynamic_bytes``, ``slc_program_us``;
  none by default): a TLC drive's host writes program in SLC mode at
  ``slc_program_us`` a unit while the cache has room, then at ``program_us`` (straight
  to TLC); idle time folds the cache back (``kernels``: the SLC cache). Its size is
  ``slc_cache_bytes`` plus ``slc_cache_dynamic_bytes`` times the share of the LBAs the
  precondition left unwritten (an empty drive lends free blocks to the cache, a full
  one has only the static part), fixed for the run.

Default config: Intel X25-E 64 GB (SSDSA2SH064G1, 50 nm SLC, SATA 3 Gb/s). Data sheet
(Intel X25-E SATA SSD product manual): sequential read 250 MB/s, sequential write
170 MB/s, 4 KB random read 35,000 IOPS, 4 KB random write 3,300 IOPS, latency read
75 us / write 85 us (512 B, QD1), 10 channels, NCQ 32. Flash timings are typical
50 nm SLC NAND figures (tR 25 us, tPROG 250 us, tBERS 1.5 ms, 4 KB pages, 64-page
blocks).

- Read priority (``read_priority``, on by default): the controller queues per die and
  serves a host read - and a partial-page write's read of the old page it merges with -
  before the programs, GC copies and erases already queued there,
  once the operation in progress ends (no program/erase suspend), and its channel
  transfer before the queued program and GC transfers, as flash firmware schedules
  reads first; reads keep their arrival order among themselves. Off, a read
  waits for everything booked on its die before it, a whole foreground GC included
  (tens of ms: a 50/50 16 KB random mix at QD4 on a steady-state X25-E then does ~350
  IOPS, a tenth of what either pure workload gives).

Deliberately not modelled: read hits on data still in the write buffer (reads queue
at the die instead), background GC in idle time, power states, SATA FIS-level interleaving of transfers,
thermal throttling, the mapping-table cache (the X25-E keeps its map in 16 MB DRAM).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...checks import at_least
from ...sim import Simulator
from ..request import FLUSH, IORequest
from . import kernels as K
from .flash import FlashDrive, FlashGeometry, check_flash


@dataclass(frozen=True)
class SSDConfig(FlashGeometry):
    """A flash SSD; defaults are an Intel X25-E 64 GB (see the module docstring).

    Derived (no published figure for the X25-E, chosen from its data sheet):
    ``read_cmd_us`` = 75 us read latency (512 B) - tR - 512 B over channel and link;
    ``write_cmd_us`` = 85 us write latency (512 B) - 512 B over the link;
    ``channel_MBps`` = 25 (ONFI asynchronous mode, 40 ns cycle): 10 channels give the
    250 MB/s sequential read; ``raw_capacity_bytes`` = 64 GiB of flash behind 64 GB of
    LBAs (Intel's ~7 % spare practice); ``write_cache_bytes`` = 256 KiB (the X25
    controller buffers user data in on-chip SRAM; its DRAM holds the map).

    Calibrated (the README's Calibrations table): ``flush_metadata_pages`` = 23 pages
    (92 KiB of map segments and checkpoint, programmed one after another on one die
    at each FLUSH that follows writes). No measurement of the X25-E's FLUSH cost has
    been published, so the page count was chosen so that xfs with barriers - two
    FLUSHes per fsync - meets the one published figure, ~50 commits/s (E4.x25e.barrier,
    49/s simulated); a flush after writes then costs ~10 ms. The first choice, 32 pages
    (~13.5 ms), gave 36/s.
    """

    capacity_bytes: int = 125_045_424 * 512          # 64 GB user capacity (LBA count)
    raw_capacity_bytes: int = 64 * 2**30             # physical flash
    channels: int = 10                               # data sheet: 10 channels
    dies_per_channel: int = 2
    page_bytes: int = 4096
    pages_per_block: int = 64
    nand_page_bytes: int = 0                         # one sense = one 4 KB page
    read_us: float = 25.0                            # tR (SLC)
    program_us: float = 250.0                        # tPROG (SLC)
    erase_us: float = 1500.0                         # tBERS (SLC)
    channel_MBps: float = 25.0
    host_MBps: float = 300.0                         # SATA 3 Gb/s after 8b/10b
    read_cmd_us: float = 28.0
    write_cmd_us: float = 83.0
    flush_cmd_us: float = 28.0                       # non-data command: like a read's
    queue_depth: int = 32                            # NCQ
    write_cache: bool = True                         # WCE (hdparm -W)
    write_cache_bytes: int = 256 * 1024
    flush_metadata_pages: int = 23                   # calibrated: E4.x25e.barrier (docstring)
    power_loss_protection: bool = False              # X25-E: none (buffer is volatile)
    gc_min_free_blocks: int = 2                      # per die: GC below this
    gc_copyback: bool = False                        # GC copies go through the controller (ECC)
    die_allocation: str = "dynamic"                  # or "static" (lpn % dies)
    read_priority: bool = True                       # host reads before queued die work
    precondition: str = "random"
    precondition_span_fraction: float = 1.0          # share of the LBAs ever written
    precondition_seed: int = 0
    slc_cache_bytes: int = 0                         # SLC-mode write cache (X25-E: all SLC, none)
    slc_cache_dynamic_bytes: int = 0                 # more of it on an empty drive
    slc_program_us: float = 0.0                      # per unit in SLC mode (with a cache)
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        check_flash(self)
        at_least(self, 1, "queue_depth")
        if self.host_MBps <= 0:
            raise ValueError(f"host_MBps: must be > 0, got {self.host_MBps!r}")


class SSD(FlashDrive):
    """Flash SSD (see module docstring). ``SSD(sim, name, cfg)``."""

    kind = "ssd"
    fua = False          # a SATA drive: libata advertises no FUA

    def __init__(self, sim: Simulator, name: str, cfg: SSDConfig = SSDConfig(),
                 rng: np.random.Generator | None = None) -> None:
        # the NCQ slots; the link is SATA's, one transfer at a time both ways
        super().__init__(sim, name, cfg, rng, cfg.queue_depth, cfg.host_MBps)
        self._ctrl_free = 0          # controller calendar (one firmware CPU)
        self._flush_pending = False
        self.cache_full_waits = 0
        # time writes waited for buffer space: each waiting command's wait as one
        # interval from when it could have started its transfer; intervals still open
        # (they may end in the future) count only up to now
        self._wait_done = 0
        self._waits: list[tuple[int, int]] = []

    # -- interface ----------------------------------------------------------------------
    def can_accept(self) -> bool:
        # FLUSH CACHE is non-queued: nothing else is issued while it is outstanding
        return self.inflight < self.queue_depth and not self._flush_pending

    def submit(self, req: IORequest) -> None:
        if req.op == FLUSH:
            self._flush_pending = True
        else:
            self.check_range(req)
        super().submit(req)

    def _finish(self, req: IORequest) -> None:
        if req.op == FLUSH:
            self._flush_pending = False
        super()._finish(req)

    # -- commands -------------------------------------------------------------------------
    def _cmd(self, now: int, cost: int) -> int:
        t = max(now, self._ctrl_free) + cost
        self._ctrl_free = t
        return t

    # _read and _write book the controller as _cmd does, written out: calling _cmd here
    # (and sharing NVMe's _read) cost ~8 % of fio randread's CPU on this drive
    # (bench.cases.fio_case("ssd"), 6 rounds alternating)
    def _read(self, req: IORequest, now: int) -> int:
        t = max(now, self._ctrl_free) + self._read_cmd
        self._ctrl_free = t
        return K.read_cmd(self._i32, self._i64, self._ch_bpns, self._link_bpns,
                          req.offset_bytes, req.size_bytes, t, now)

    def _write(self, req: IORequest, now: int) -> int:
        t = max(now, self._ctrl_free) + self._write_cmd
        self._ctrl_free = t
        ack = K.write_cmd(self._i32, self._i64, self._ch_bpns, self._link_bpns,
                          self._cache_cap, req.offset_bytes, req.size_bytes, t, now)
        out = self._out
        durable, waited = int(out[1]), int(out[2])
        if waited > 0:
            self.cache_full_waits += 1
            waits = self._waits
            if waits:
                keep = []
                for w in waits:
                    if w[1] <= now:
                        self._wait_done += w[1] - w[0]
                    else:
                        keep.append(w)
                waits = self._waits = keep
            waits.append((t, t + waited))
        return self._acknowledged(req, now, ack, durable)

    def _flush(self, now: int) -> int:
        # non-queued: after the NCQ drain, every accepted command done
        return self._flush_done(max(self._cmd(now, self._flush_cmd), self._last_done), now)

    # -- statistics -----------------------------------------------------------------------
    @property
    def cache_wait_ns(self) -> int:
        """Time write commands have waited for buffer space so far (up to now)."""
        now = self.sim.now_ns
        return self._wait_done + sum(min(e, now) - s for s, e in self._waits if s < now)

    def _buffer_stats(self) -> dict:
        return {"cache_full_waits": self.cache_full_waits, "cache_wait_ns": self.cache_wait_ns}
