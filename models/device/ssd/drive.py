"""A SATA flash SSD: NCQ command queue, a controller that processes commands one at a
time, a small volatile DRAM/SRAM write buffer, FLUSH, and flash dies behind channels
with a page-mapped FTL (``ftl.py``; compiled kernels in ``kernels.py``).

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
  protection it waits for the buffer to be programmed, then commits the FTL
  metadata (``flush_metadata_pages`` pages
  programmed one after another on the die free first) if anything was written or
  trimmed since the last flush. No new
  command is accepted while it runs. A flush with nothing written costs only its
  command overhead. ``nobarrier`` is the filesystem's business: it never sends FLUSH.
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

Default config: Intel X25-E 64 GB (SSDSA2SH064G1, 50 nm SLC, SATA 3 Gb/s). Data sheet
(Intel X25-E SATA SSD product manual): sequential read 250 MB/s, sequential write
170 MB/s, 4 KB random read 35,000 IOPS, 4 KB random write 3,300 IOPS, latency read
75 us / write 85 us (512 B, QD1), 10 channels, NCQ 32. Flash timings are typical
50 nm SLC NAND figures (tR 25 us, tPROG 250 us, tBERS 1.5 ms, 4 KB pages, 64-page
blocks).

- Read priority (``read_priority``, on by default): the controller queues per die and
  serves a host read before the programs, GC copies and erases already queued there,
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

import heapq
from dataclasses import dataclass

import numpy as np

from ...checks import at_least
from ...sim import Simulator
from ..base import Device
from ..request import DISCARD, FLUSH, READ, IORequest
from . import kernels as K
from . import ftl as F

_PRECONDITIONS = ("fresh", "sequential", "random")


def _us(x: float) -> int:
    return int(round(x * 1000))


class FlashGeometry:
    """Derived sizes of a flash back end, for any config with the flash fields of
    ``SSDConfig`` (``capacity_bytes``, ``raw_capacity_bytes``, ``channels``,
    ``dies_per_channel``, ``page_bytes``, ``pages_per_block``): the SATA SSD's and the
    NVMe SSD's (``models.device.ssd.nvme``)."""

    @property
    def n_dies(self) -> int:
        return self.channels * self.dies_per_channel

    @property
    def user_pages(self) -> int:
        return self.capacity_bytes // self.page_bytes

    @property
    def blocks_per_die(self) -> int:
        return self.raw_capacity_bytes // (self.n_dies * self.page_bytes * self.pages_per_block)

    @property
    def units_per_nand_page(self) -> int:
        """Mapping units (``page_bytes``) one sense (tR) reads: ``nand_page_bytes`` /
        ``page_bytes``, 1 when ``nand_page_bytes`` is 0."""
        return max(1, self.nand_page_bytes // self.page_bytes)

    @property
    def spare_fraction(self) -> float:
        """Physical pages beyond the logical ones, over the logical ones."""
        phys = self.blocks_per_die * self.n_dies * self.pages_per_block
        return phys / self.user_pages - 1.0


def check_flash(cfg) -> None:
    """Range checks of the flash back end's fields (``SSDConfig`` names them); the
    first failing key is reported, ``ValueError("<key>: ...")``."""
    for key in ("capacity_bytes", "raw_capacity_bytes", "channels", "dies_per_channel",
                "page_bytes", "pages_per_block", "write_cache_bytes", "gc_min_free_blocks"):
        if int(getattr(cfg, key)) < 1:
            raise ValueError(f"{key}: must be >= 1, got {getattr(cfg, key)!r}")
    for key in ("read_us", "program_us", "erase_us"):
        if getattr(cfg, key) < 0:
            raise ValueError(f"{key}: must be >= 0, got {getattr(cfg, key)!r}")
    if cfg.channel_MBps <= 0:
        raise ValueError(f"channel_MBps: must be > 0, got {cfg.channel_MBps!r}")
    at_least(cfg, 0, "flush_metadata_pages")
    if cfg.page_bytes % 512:
        raise ValueError(f"page_bytes: must be a multiple of 512, got {cfg.page_bytes}")
    if cfg.nand_page_bytes < 0 or cfg.nand_page_bytes % cfg.page_bytes:
        raise ValueError(f"nand_page_bytes: must be 0 or a multiple of page_bytes "
                         f"({cfg.page_bytes}), got {cfg.nand_page_bytes}")
    if cfg.pages_per_block % cfg.units_per_nand_page:
        raise ValueError(f"nand_page_bytes: {cfg.nand_page_bytes} must divide an erase block "
                         f"({cfg.pages_per_block} x {cfg.page_bytes} bytes)")
    if cfg.die_allocation not in ("dynamic", "static"):
        raise ValueError(f"die_allocation: must be 'dynamic' or 'static', got {cfg.die_allocation!r}")
    if cfg.precondition not in _PRECONDITIONS:
        raise ValueError(f"precondition: must be one of {_PRECONDITIONS}, got {cfg.precondition!r}")
    if not 0.0 <= cfg.precondition_span_fraction <= 1.0:
        raise ValueError("precondition_span_fraction: must be in [0, 1], got "
                         f"{cfg.precondition_span_fraction}")
    if cfg.write_cache_bytes < cfg.page_bytes:
        raise ValueError(f"write_cache_bytes: must hold at least one page ({cfg.page_bytes})")
    # every die must keep GC able to make progress: its share of logical pages plus
    # the free-block reserve and two open blocks must fit in its physical blocks
    per_die_user = -(-cfg.user_pages // cfg.n_dies)
    need = -(-per_die_user // cfg.pages_per_block) + cfg.gc_min_free_blocks + 3
    if cfg.blocks_per_die < need:
        raise ValueError(f"raw_capacity_bytes: {cfg.raw_capacity_bytes} leaves no spare "
                         f"area ({cfg.blocks_per_die} blocks per die, need >= {need})")


def flash_state(cfg, rng: np.random.Generator | None) -> F.FTLState:
    """The flash back end of ``cfg`` (fields as ``SSDConfig``'s): the FTL state with
    its write-buffer heap sized for ``write_cache_bytes``, preconditioned as
    ``cfg.precondition`` says (seeded by ``rng`` if given, else ``precondition_seed``)."""
    slots = cfg.write_cache_bytes // 512 + cfg.write_cache_bytes // cfg.page_bytes + 64
    ftl = F.FTLState(cfg.user_pages, cfg.n_dies, cfg.channels, cfg.blocks_per_die,
                     cfg.pages_per_block, cfg.gc_min_free_blocks, cfg.page_bytes,
                     cfg.gc_copyback, cfg.die_allocation == "dynamic",
                     (_us(cfg.read_us), _us(cfg.program_us), _us(cfg.erase_us)), slots,
                     cfg.units_per_nand_page, cfg.read_priority)
    if cfg.precondition != "fresh":
        rng = rng if rng is not None else np.random.default_rng(cfg.precondition_seed)
        F.precondition(ftl, cfg.precondition, rng,
                       int(cfg.user_pages * cfg.precondition_span_fraction))
    return ftl


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
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        if not self.price_usd >= 0:
            raise ValueError(f"price_usd: must be >= 0, got {self.price_usd}")
        check_flash(self)
        at_least(self, 1, "queue_depth")
        for key in ("read_cmd_us", "write_cmd_us", "flush_cmd_us"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key}: must be >= 0, got {getattr(self, key)!r}")
        if self.host_MBps <= 0:
            raise ValueError(f"host_MBps: must be > 0, got {self.host_MBps!r}")


def flush_durable(dev, t: int, now: int) -> int:
    """When a FLUSH that has done its command at ``t`` completes on a flash drive (SATA
    ``SSD`` or ``nvme.NVMe``): with power-loss protection at once; without, once the
    buffer is programmed and, if anything was written since the last flush, the FTL map
    committed (``flush_metadata_pages`` programmed one after another)."""
    if not dev._plp:
        t = max(t, dev._last_durable)
        if dev._meta_dirty and dev.cfg.flush_metadata_pages:
            t = int(K.program_serial(dev._i32, dev._i64, dev._ch_bpns, -1,
                                     dev.cfg.flush_metadata_pages, t, now))
        dev._meta_dirty = False
    dev.flush_ns_total += t - now
    return t


class SSD(Device):
    """Flash SSD (see module docstring). ``SSD(sim, name, cfg)``."""

    kind = "ssd"
    fua = False          # a SATA drive: libata advertises no FUA

    def __init__(self, sim: Simulator, name: str, cfg: SSDConfig = SSDConfig(),
                 rng: np.random.Generator | None = None) -> None:
        # every accepted NCQ command is "in service": the flash calendar decides when
        # it completes, so the base's servers are the command slots
        super().__init__(sim, name, cfg.user_pages * cfg.page_bytes, cfg.queue_depth,
                         n_servers=cfg.queue_depth)
        self.cfg = cfg
        self.ftl = flash_state(cfg, rng)
        self._i32 = self.ftl.i32
        self._i64 = self.ftl.i64
        self._out = self.ftl.out
        self._ch_bpns = cfg.channel_MBps * 1e6 / 1e9      # bytes per ns
        self._host_bpns = cfg.host_MBps * 1e6 / 1e9
        self._read_cmd = _us(cfg.read_cmd_us)
        self._write_cmd = _us(cfg.write_cmd_us)
        self._flush_cmd = _us(cfg.flush_cmd_us)
        self._cache_cap = cfg.write_cache_bytes
        self._plp = cfg.power_loss_protection
        # controller calendar (one firmware CPU)
        self._ctrl_free = 0
        self._last_done = 0          # latest completion of any accepted command
        self._last_durable = 0       # latest program end of any accepted write
        # acknowledged writes not yet programmed: heap of (durable_ns, bytes, ack_ns)
        self._volatile: list[tuple[int, int, int]] = []
        self._meta_dirty = False
        self._flush_pending = False
        self.cache_full_waits = 0
        # time writes waited for buffer space: each waiting command's wait as one
        # interval from when it could have started its transfer; intervals still open
        # (they may end in the future) count only up to now
        self._wait_done = 0
        self._waits: list[tuple[int, int]] = []
        self.flush_ns_total = 0
        self._busy_since = 0
        self._busy_total = 0         # time with a command outstanding (%util)
        self._counters0 = self.ftl.counters.copy()

    # -- interface ----------------------------------------------------------------------
    def can_accept(self) -> bool:
        # FLUSH CACHE is non-queued: nothing else is issued while it is outstanding
        return self.inflight < self.queue_depth and not self._flush_pending

    def submit(self, req: IORequest) -> None:
        if req.op == FLUSH:
            self._flush_pending = True
        elif req.offset_bytes < 0 or req.end_bytes > self.capacity_bytes:
            raise ValueError(f"{self.name}: {req} outside the drive's {self.capacity_bytes} bytes")
        if not self.inflight:
            self._busy_since = self.sim.now_ns
        super().submit(req)

    def _finish(self, req: IORequest) -> None:
        if req.op == FLUSH:
            self._flush_pending = False
        if self.inflight == 1:
            self._busy_total += self.sim.now_ns - self._busy_since
        super()._finish(req)

    @property
    def write_cache_mode(self) -> str:
        return "write back" if self.cfg.write_cache else "write through"

    def volatile_bytes(self) -> int:
        if self._plp:
            return 0
        now = self.sim.now_ns
        return sum(b for durable, b, ack in self._volatile if ack <= now < durable)

    def service_ns(self, req: IORequest) -> int:
        now = self.sim.now_ns
        op = req.op
        if op == READ:
            done = self._read(req, now)
        elif op == FLUSH:
            done = self._flush(now)
        elif op == DISCARD:
            done = self._discard(req, now)
        else:
            done = self._write(req, now)
        if done > self._last_done:
            self._last_done = done
        return int(done - now)

    # -- commands -------------------------------------------------------------------------
    def _read(self, req: IORequest, now: int) -> int:
        t = max(now, self._ctrl_free) + self._read_cmd
        self._ctrl_free = t
        return K.read_cmd(self._i32, self._i64, self._ch_bpns, self._host_bpns,
                          req.offset_bytes, req.size_bytes, t, now)

    def _write(self, req: IORequest, now: int) -> int:
        size = req.size_bytes
        t = max(now, self._ctrl_free) + self._write_cmd
        self._ctrl_free = t
        ack = K.write_cmd(self._i32, self._i64, self._ch_bpns, self._host_bpns,
                          self._cache_cap, req.offset_bytes, size, t, now)
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
        cached = self.cfg.write_cache and (self._plp or not req.fua)
        done = ack if cached else max(ack, durable)
        if cached and not self._plp:
            vol = self._volatile
            while vol and vol[0][0] <= now:
                heapq.heappop(vol)
            heapq.heappush(vol, (durable, size, done))
        if durable > self._last_durable:
            self._last_durable = durable
        self._meta_dirty = True
        return done

    def _flush(self, now: int) -> int:
        t = max(now, self._ctrl_free) + self._flush_cmd
        self._ctrl_free = t
        return flush_durable(self, max(t, self._last_done), now)

    def _discard(self, req: IORequest, now: int) -> int:
        t = max(now, self._ctrl_free) + self._flush_cmd
        self._ctrl_free = t
        page = self.cfg.page_bytes
        first = -(-req.offset_bytes // page)
        last = req.end_bytes // page
        if last > first:
            K.trim(self._i32, self._i64, first, last - first)
            self._meta_dirty = True
        return t

    # -- statistics -----------------------------------------------------------------------
    @property
    def cache_wait_ns(self) -> int:
        """Time write commands have waited for buffer space so far (up to now)."""
        now = self.sim.now_ns
        return self._wait_done + sum(min(e, now) - s for s, e in self._waits if s < now)

    def stats(self) -> dict:
        s = super().stats()
        busy = self._busy_total
        if self.inflight:                     # the busy period in progress, up to now
            busy += self.sim.now_ns - self._busy_since
        c = self.ftl.counters - self._counters0
        host = int(c[K.C_HOST_PAGES])
        gc = int(c[K.C_GC_PAGES])
        s.update({
            "busy_ns": busy,
            "flash_pages_written_host": host,
            "flash_pages_written_gc": gc,
            "flash_pages_read": int(c[K.C_READ_PAGES]),
            "flash_erases": int(c[K.C_ERASES]),
            "write_amplification": (host + gc) / host if host else 0.0,
            "read_modify_writes": int(c[K.C_RMW]),
            "cache_full_waits": self.cache_full_waits,
            "cache_wait_ns": self.cache_wait_ns,
            "flush_ns_total": self.flush_ns_total,
        })
        return s
