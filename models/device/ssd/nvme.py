"""An NVMe SSD: submission/completion queue pairs, a multi-core controller, a PCIe
link with one lane set per direction, a write cache with or without power-loss
protection, and the flash back end of the SATA SSD (``flash.flash_state``,
``kernels``: one flash model, two front ends).

Modelled, per command (reservations in command arrival order, integer ns):

- Queues: ``nr_queues`` I/O queue pairs of ``queue_depth`` entries; the drive accepts
  ``nr_queues * queue_depth`` commands at once. A command goes to the queue of its
  submitting thread (``issuer % nr_queues``, as the driver maps a CPU's queue).
  The legacy block queue in front of the drive sees one pool of
  ``nr_queues * queue_depth`` tags (per-queue tag limits are blk-mq's, not this
  model's). ``per_queue`` counts commands per queue; ``stats()`` reports how many
  queues were used and the busiest one's count.
- Controller: ``controller_cores`` firmware cores, each processing one command at a
  time for ``read_cmd_us`` / ``write_cmd_us`` / ``flush_cmd_us``; a command takes the
  core free first (arrival order).
- PCIe link: ``pcie_lanes`` lanes of generation ``pcie_gen`` (per lane 2.5 / 5 / 8 / 16
  / 32 GT/s, 8b/10b for 1-2, 128b/130b from 3), full duplex: read data flows
  device -> host, write data host -> device, each direction a calendar of its own
  (busy intervals with back-filling, as the flash channels). Payload bandwidth is
  the line rate times ``pcie_max_payload_bytes / (pcie_max_payload_bytes +
  pcie_tlp_overhead_bytes)`` (TLP header, framing, LCRC, sequence number).
- Flash (``kernels``): channels x dies, tR / tPROG / tBERS, the channel rate,
  the page-mapped FTL with greedy GC and over-provisioning, preconditioning - the
  same code and the same field names as ``SSDConfig``.
- Write cache (``write_cache``, the NVMe Volatile Write Cache feature): a write
  completes when its data is in the buffer (``write_cache_bytes``; full: the transfer
  waits for programs to free room); the pages are programmed right away.
  ``power_loss_protection``: capacitors hold up the drive long enough to program the
  buffer and the FTL map after power loss, so the buffer is durable: FLUSH completes
  after its command processing, FUA writes complete when their data is in the
  buffer, ``volatile_bytes()`` is 0. Without it, FLUSH waits for every accepted write
  to be programmed, pads the write stream's partly filled NAND page (its missing
  units programmed: ``kernels.pad_open_pages``) and then, if anything was written or
  trimmed since the last flush, programs ``flush_metadata_pages`` NAND pages of FTL
  map one after another on the die free first, each a program of its own that holds
  the die for the whole NAND page's tPROG (``nand_page_bytes`` / ``page_bytes`` x
  the per-unit program time); FUA writes complete when programmed, their open page
  padded. ``write_cache: false`` (no VWC): every write completes when programmed
  (padded likewise without power-loss protection).
- FLUSH is a queued command (NVMe): commands submitted after it are not held back.

Deliberately not modelled: the doorbell / interrupt cost on the host (the CPU model's
business), PCIe flow-control credits, queue arbitration (round robin among the
queues is equivalent to arrival order at one controller pool), the host memory
buffer, read hits on buffered writes, thermal throttling, namespaces. (The SLC
cache of TLC drives is the flash back end's: ``kernels``.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...checks import at_least
from ...sim import Simulator
from ..request import FLUSH, IORequest
from . import kernels as K
from .flash import FlashDrive, FlashGeometry, check_flash

# GT/s per lane and encoding efficiency, by PCIe generation
PCIE_GT_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0}
PCIE_ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130}


@dataclass(frozen=True)
class NVMeConfig(FlashGeometry):
    """An NVMe SSD. The flash fields (``capacity_bytes`` .. ``slc_program_us``) mean
    what they mean in ``SSDConfig``; the defaults are a mid-range datacenter TLC drive
    only so that a bare ``type: nvme`` runs - the presets (``presets``) are the
    drives with data sheets.

    Front end: ``nr_queues``, ``queue_depth`` (entries per I/O queue),
    ``controller_cores``, ``read_cmd_us`` / ``write_cmd_us`` / ``flush_cmd_us`` (firmware
    time per command on one core), ``pcie_gen`` (1-5), ``pcie_lanes`` (1, 2, 4, 8, 16),
    ``pcie_max_payload_bytes`` (Max_Payload_Size), ``pcie_tlp_overhead_bytes``,
    ``write_cache`` (VWC), ``power_loss_protection``.
    """

    capacity_bytes: int = 16 * 2**30
    raw_capacity_bytes: int = 18 * 2**30
    channels: int = 8
    dies_per_channel: int = 8
    page_bytes: int = 4096
    pages_per_block: int = 256
    nand_page_bytes: int = 0
    read_us: float = 60.0
    program_us: float = 60.0
    erase_us: float = 3000.0
    channel_MBps: float = 400.0
    write_cache_bytes: int = 4 * 2**20
    flush_metadata_pages: int = 2
    gc_min_free_blocks: int = 2
    gc_copyback: bool = False
    die_allocation: str = "dynamic"
    read_priority: bool = True
    precondition: str = "random"
    precondition_span_fraction: float = 1.0
    precondition_seed: int = 0
    slc_cache_bytes: int = 0
    slc_cache_dynamic_bytes: int = 0
    slc_program_us: float = 0.0
    nr_queues: int = 8
    queue_depth: int = 1024
    controller_cores: int = 4
    read_cmd_us: float = 5.0
    write_cmd_us: float = 5.0
    flush_cmd_us: float = 2.0
    pcie_gen: int = 3
    pcie_lanes: int = 4
    pcie_max_payload_bytes: int = 256
    pcie_tlp_overhead_bytes: int = 24
    write_cache: bool = True
    power_loss_protection: bool = True
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        check_flash(self)
        at_least(self, 1, "nr_queues", "queue_depth", "controller_cores",
                 "pcie_max_payload_bytes")
        at_least(self, 0, "pcie_tlp_overhead_bytes")
        if self.pcie_gen not in PCIE_GT_S:
            raise ValueError(f"pcie_gen: must be one of {sorted(PCIE_GT_S)}, got {self.pcie_gen}")
        if self.pcie_lanes not in (1, 2, 4, 8, 16):
            raise ValueError(f"pcie_lanes: must be 1, 2, 4, 8 or 16, got {self.pcie_lanes}")

    @property
    def link_MBps(self) -> float:
        """Payload bandwidth of one direction of the link, 10^6 bytes/s."""
        g = self.pcie_gen
        line = PCIE_GT_S[g] * 1e3 / 8 * PCIE_ENCODING[g] * self.pcie_lanes
        mps = self.pcie_max_payload_bytes
        return line * mps / (mps + self.pcie_tlp_overhead_bytes)


class NVMe(FlashDrive):
    """NVMe SSD (see module docstring). ``NVMe(sim, name, cfg, rng=None)``."""

    kind = "nvme"

    def __init__(self, sim: Simulator, name: str, cfg: NVMeConfig = NVMeConfig(),
                 rng: np.random.Generator | None = None) -> None:
        # every queue entry; the link's device -> host direction is the kernels' link row
        super().__init__(sim, name, cfg, rng, cfg.nr_queues * cfg.queue_depth, cfg.link_MBps)
        self._cores = [0] * cfg.controller_cores       # busy-until per firmware core
        # host -> device direction of the link
        self._w_s = np.zeros((1, K.IV_SLOTS), np.int64)
        self._w_e = np.zeros((1, K.IV_SLOTS), np.int64)
        self._w_n = np.zeros(1, np.int64)
        self.per_queue = [0] * cfg.nr_queues

    # -- interface ----------------------------------------------------------------------
    def submit(self, req: IORequest) -> None:
        if req.op != FLUSH:
            self.check_range(req)
        self.per_queue[req.issuer % self.cfg.nr_queues] += 1
        super().submit(req)

    # -- commands -------------------------------------------------------------------------
    def _cmd(self, now: int, cost: int) -> int:
        """Process a command on the core free first; returns when it is done there."""
        cores = self._cores
        i = min(range(len(cores)), key=cores.__getitem__)
        t = max(now, cores[i]) + cost
        cores[i] = t
        return t

    def _read(self, req: IORequest, now: int) -> int:
        t = self._cmd(now, self._read_cmd)
        # flash reads, then the device -> host transfer on the kernels' link row
        return K.read_cmd(self._i32, self._i64, self._ch_bpns, self._link_bpns,
                          req.offset_bytes, req.size_bytes, t, now)

    def _write(self, req: IORequest, now: int) -> int:
        t = self._cmd(now, self._write_cmd)
        i32, i64, cap, bpns = self._i32, self._i64, self._cache_cap, self._link_bpns
        off, size = req.offset_bytes, req.size_bytes
        if size <= cap:
            room = K.buffer_reserve(i32, i64, cap, size, t)
            x = int(size / bpns)
            start = K._reserve(self._w_s, self._w_e, self._w_n, 0, room, x, now)
            durable = K.write(i32, i64, self._ch_bpns, bpns, off, size, start, now)
            ack = start + x
        else:
            # larger than the buffer: page by page, each waiting for room of its own
            page = self.cfg.page_bytes
            ack = durable = t
            pos, end = off, off + size
            while pos < end:
                piece = min((pos // page + 1) * page, end) - pos
                room = K.buffer_reserve(i32, i64, cap, piece, ack)
                x = int(piece / bpns + 0.5)
                start = K._reserve(self._w_s, self._w_e, self._w_n, 0, room, x, now)
                durable = max(durable, K.write(i32, i64, self._ch_bpns, bpns, pos, piece,
                                               start, now))
                ack = start + x
                pos += piece
        return self._acknowledged(req, now, ack, durable)

    def _flush(self, now: int) -> int:
        # a queued command: what was accepted before it need not be done
        return self._flush_done(self._cmd(now, self._flush_cmd), now)

    # -- statistics -----------------------------------------------------------------------
    def stats(self) -> dict:
        s = super().stats()
        # two columns whatever nr_queues is (the per-queue counts: ``per_queue``)
        s.update({"queues_used": sum(1 for n in self.per_queue if n),
                  "busiest_queue_commands": max(self.per_queue)})
        return s
