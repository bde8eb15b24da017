"""What every flash drive shares, whatever its host interface: the flash description
(``FlashGeometry``, ``check_flash``), the back end's state (``flash_state``: the FTL of
``ftl.py`` driven by ``kernels.py``) and the command front end around it
(``FlashDrive``), of which the SATA drive (``drive.SSD``) and the NVMe drive
(``nvme.NVMe``) differ only in how commands reach the firmware and the flash's data
reaches the host.

``FlashDrive`` holds, once for both:

- Command dispatch (``service_ns``): READ, WRITE, FLUSH and DISCARD to the subclass's
  ``_read`` / ``_write`` / ``_flush`` and the shared ``_discard``; ``_last_done``, the
  latest completion of any accepted command (what a non-queued FLUSH waits for).
- The firmware's time per command: the subclass's ``_cmd(now, cost)`` books ``cost`` on
  its controller (one CPU on the SATA drive, the core free first on the NVMe drive)
  and returns when the command leaves it.
- The write cache's durability: ``_acknowledged`` books an accepted write - the time its
  pages are programmed, and, if it completed before that (the volatile buffer
  acknowledged it), its bytes in ``volatile_bytes()`` until then. With
  ``power_loss_protection`` the buffer is durable: nothing is volatile, and FLUSH
  (``_flush_done``) costs its command time; without it FLUSH waits for every accepted
  write to be programmed, pads the write stream's open NAND page (``kernels``: a
  write due on flash at completion - FUA, or the cache off - pads it too) and then
  commits the FTL map (``flush_metadata_pages`` NAND
  pages programmed one after another, each holding its die for a whole page's tPROG:
  ``kernels.program_serial``) if anything was written or trimmed since the last.
- DISCARD: its command time, then the whole mapping units it covers unmapped (``trim``).
- The SLC cache, if the drive has one (``slc_cache_bytes``): each command's arrival
  first credits the folding the idle drive did since the last (``kernels.slc_fold``).
- The flash counters of ``stats()`` (pages written by the host and by GC, reads,
  erases, write amplification, read-modify-writes; with an SLC cache the units
  programmed in SLC mode, ``flash_pages_written_slc``; with several units per NAND page
  the units programmed as padding of open pages, ``flash_pages_padded``) and ``busy_ns`` as time with a
  command outstanding (``Device.outstanding_ns``).
"""
from __future__ import annotations

import heapq

import numpy as np

from ...checks import at_least
from ...sim import Simulator
from ..base import Device
from ..request import DISCARD, FLUSH, READ, IORequest
from . import ftl as F
from . import kernels as K
from .packed import G_SLC_UNITS

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
    if not cfg.price_usd >= 0:
        raise ValueError(f"price_usd: must be >= 0, got {cfg.price_usd}")
    for key in ("capacity_bytes", "raw_capacity_bytes", "channels", "dies_per_channel",
                "page_bytes", "pages_per_block", "write_cache_bytes", "gc_min_free_blocks"):
        if int(getattr(cfg, key)) < 1:
            raise ValueError(f"{key}: must be >= 1, got {getattr(cfg, key)!r}")
    for key in ("read_us", "program_us", "erase_us", "slc_program_us"):
        if getattr(cfg, key) < 0:
            raise ValueError(f"{key}: must be >= 0, got {getattr(cfg, key)!r}")
    at_least(cfg, 0, "slc_cache_bytes", "slc_cache_dynamic_bytes")
    if cfg.slc_cache_bytes + cfg.slc_cache_dynamic_bytes > 0:
        for key in ("slc_program_us", "program_us"):
            if not getattr(cfg, key) > 0:
                raise ValueError(f"{key}: must be > 0 with an SLC cache, got {getattr(cfg, key)!r}")
    if cfg.channel_MBps <= 0:
        raise ValueError(f"channel_MBps: must be > 0, got {cfg.channel_MBps!r}")
    at_least(cfg, 0, "flush_metadata_pages", "read_cmd_us", "write_cmd_us", "flush_cmd_us")
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


def slc_cache_bytes(cfg) -> int:
    """The SLC cache's size for the run: the static part plus the dynamic part times the
    share of the LBAs the precondition left unwritten (all of them on a ``fresh`` drive)."""
    written = 0.0 if cfg.precondition == "fresh" else cfg.precondition_span_fraction
    return cfg.slc_cache_bytes + int(cfg.slc_cache_dynamic_bytes * (1.0 - written))


def flash_state(cfg, rng: np.random.Generator | None) -> F.FTLState:
    """The flash back end of ``cfg`` (fields as ``SSDConfig``'s): the FTL state with
    its write-buffer heap sized for ``write_cache_bytes``, preconditioned as
    ``cfg.precondition`` says (seeded by ``rng`` if given, else ``precondition_seed``)."""
    slots = cfg.write_cache_bytes // 512 + cfg.write_cache_bytes // cfg.page_bytes + 64
    slc_units = slc_cache_bytes(cfg) // cfg.page_bytes
    ftl = F.FTLState(cfg.user_pages, cfg.n_dies, cfg.channels, cfg.blocks_per_die,
                     cfg.pages_per_block, cfg.gc_min_free_blocks, cfg.page_bytes,
                     cfg.gc_copyback, cfg.die_allocation == "dynamic",
                     (_us(cfg.read_us), _us(cfg.program_us), _us(cfg.erase_us)), slots,
                     cfg.units_per_nand_page, cfg.read_priority, slc_units,
                     _us(cfg.slc_program_us) if slc_units else None)
    if cfg.precondition != "fresh":
        rng = rng if rng is not None else np.random.default_rng(cfg.precondition_seed)
        F.precondition(ftl, cfg.precondition, rng,
                       int(cfg.user_pages * cfg.precondition_span_fraction))
    return ftl


class FlashDrive(Device):
    """The command front end both flash drives share (see the module docstring).
    ``link_MBps``: the host link's payload rate in one direction (10^6 bytes/s);
    ``slots``: commands accepted at once - every one is "in service", the flash
    calendar deciding when it completes."""

    def __init__(self, sim: Simulator, name: str, cfg, rng: np.random.Generator | None,
                 slots: int, link_MBps: float) -> None:
        super().__init__(sim, name, cfg.user_pages * cfg.page_bytes, slots, n_servers=slots)
        self.cfg = cfg
        self.ftl = flash_state(cfg, rng)
        self._i32, self._i64, self._out = self.ftl.i32, self.ftl.i64, self.ftl.out
        self._ch_bpns = cfg.channel_MBps * 1e6 / 1e9        # bytes per ns
        self._link_bpns = link_MBps * 1e6 / 1e9
        self._read_cmd = _us(cfg.read_cmd_us)
        self._write_cmd = _us(cfg.write_cmd_us)
        self._flush_cmd = _us(cfg.flush_cmd_us)
        self._cache_cap = cfg.write_cache_bytes
        self._plp = cfg.power_loss_protection
        self._slc = bool(self.ftl.g[G_SLC_UNITS])     # the drive has an SLC cache
        self._last_done = 0          # latest completion of any accepted command
        self._last_durable = 0       # latest program end of any accepted write
        # acknowledged writes not yet programmed: heap of (durable_ns, bytes, ack_ns)
        self._volatile: list[tuple[int, int, int]] = []
        self._meta_dirty = False
        self.flush_ns_total = 0
        self._counters0 = self.ftl.counters.copy()

    # -- interface ----------------------------------------------------------------------
    def check_range(self, req: IORequest) -> None:
        if req.offset_bytes < 0 or req.end_bytes > self.capacity_bytes:
            raise ValueError(f"{self.name}: {req} outside the drive's {self.capacity_bytes} bytes")

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
        if self._slc:
            K.slc_fold(self._i32, self._i64, now)
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

    # -- what the front ends define -----------------------------------------------------
    def _cmd(self, now: int, cost: int) -> int:
        """Book ``cost`` ns of firmware time for a command arriving at ``now``; when it
        is done there."""
        raise NotImplementedError

    def _read(self, req: IORequest, now: int) -> int:
        raise NotImplementedError

    def _write(self, req: IORequest, now: int) -> int:
        raise NotImplementedError

    def _flush(self, now: int) -> int:
        raise NotImplementedError

    # -- shared command steps -------------------------------------------------------------
    def _acknowledged(self, req: IORequest, now: int, ack: int, durable: int) -> int:
        """Book a write whose data was in the buffer at ``ack`` and is programmed at
        ``durable``; returns when the command completes (at ``ack`` if the buffer may
        acknowledge it, else once programmed)."""
        if not (self.cfg.write_cache and (self._plp or not req.fua)):
            if not self._plp:           # on flash at completion: its open pages padded
                durable = max(durable, int(K.pad_open_pages(self._i32, self._i64,
                                                            self._ch_bpns, now, now)))
            self._note_durable(durable)
            return max(ack, durable)
        self._note_durable(durable)
        if not self._plp:
            vol = self._volatile
            while vol and vol[0][0] <= now:
                heapq.heappop(vol)
            heapq.heappush(vol, (durable, req.size_bytes, ack))
        return ack

    def _note_durable(self, durable: int) -> None:
        if durable > self._last_durable:
            self._last_durable = durable
        self._meta_dirty = True

    def _flush_done(self, t: int, now: int) -> int:
        """When a FLUSH that has done its command at ``t`` completes: with power-loss
        protection at once; without, once the buffer is programmed and, if anything was
        written since the last flush, the FTL map committed."""
        if not self._plp:
            t = max(t, self._last_durable)
            t = int(K.pad_open_pages(self._i32, self._i64, self._ch_bpns, t, now))
            if self._meta_dirty and self.cfg.flush_metadata_pages:
                t = int(K.program_serial(self._i32, self._i64, self._ch_bpns, -1,
                                         self.cfg.flush_metadata_pages, t, now))
            self._meta_dirty = False
        self.flush_ns_total += t - now
        return t

    def _discard(self, req: IORequest, now: int) -> int:
        t = self._cmd(now, self._flush_cmd)
        page = self.cfg.page_bytes
        first = -(-req.offset_bytes // page)
        last = req.end_bytes // page
        if last > first:
            K.trim(self._i32, self._i64, first, last - first)
            self._meta_dirty = True
        return t

    # -- statistics -----------------------------------------------------------------------
    def stats(self) -> dict:
        s = super().stats()
        c = self.ftl.counters - self._counters0
        host = int(c[K.C_HOST_PAGES])
        gc = int(c[K.C_GC_PAGES])
        s.update({
            "busy_ns": self.outstanding_ns(),
            "flash_pages_written_host": host,
            "flash_pages_written_gc": gc,
            "flash_pages_read": int(c[K.C_READ_PAGES]),
            "flash_erases": int(c[K.C_ERASES]),
            "write_amplification": (host + gc) / host if host else 0.0,
            "read_modify_writes": int(c[K.C_RMW]),
        })
        if self._slc:
            s["flash_pages_written_slc"] = int(self.ftl.slc[K.SLC_PAGES])
        if self.cfg.units_per_nand_page > 1:
            s["flash_pages_padded"] = int(self.ftl.fill[K.FILL_PADDED])
        s.update(self._buffer_stats())
        s["flush_ns_total"] = self.flush_ns_total
        return s

    def _buffer_stats(self) -> dict:
        """The front end's own counters of its write buffer (none by default)."""
        return {}
