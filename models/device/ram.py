"""RAM as a storage device: what a file on tmpfs costs (the MySQL "redo log on tmpfs"
placement).

Modelled: every command costs ``op_latency_us`` (the system call, page-cache lookup and
page allocation of a tmpfs read or write: ~1-2 us on a 2009 Xeon) plus the copy of
its bytes at ``bandwidth_MBps``; copies share the memory bandwidth, one after another
in arrival order, while the per-command latencies overlap (many threads copy at once,
the memory bus is the shared part). FLUSH (fsync on tmpfs) is free: there is nothing
to write back. DISCARD (hole punching) frees pages.

Durability (decided here, stated once): tmpfs contents are lost on power failure
entirely, and fsync does not change that. ``volatile_bytes()`` therefore reports
every byte the device holds - pages written and not discarded, counted in whole 4 KiB
pages as tmpfs allocates them - not only "acknowledged but unflushed" data as a
disk's write cache would. A simulated power loss on a run that put the redo log on
tmpfs thus reports the whole log as lost, which is the answer the placement question
needs.

Deliberately not modelled: swapping tmpfs pages out under memory pressure, NUMA,
CPU cache effects, the page cache of the filesystem above (a tmpfs file has none
besides itself).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import above, at_least
from ..sim import Simulator
from .base import Device
from .request import DISCARD, FLUSH, WRITE, IORequest

PAGE_BYTES = 4096


@dataclass(frozen=True)
class RAMConfig:
    """tmpfs-like RAM device. Assumed figures for a 2009 dual-socket Xeon server:
    ``op_latency_us`` 1.5 (a small read()/write() on tmpfs), ``bandwidth_MBps`` 5,000
    (single-stream memcpy of the period; DDR3-1066 triple channel peaks near 25 GB/s,
    copies reach a fraction of it)."""

    capacity_bytes: int = 4 * 2**30          # tmpfs size= (mount option)
    op_latency_us: float = 1.5
    bandwidth_MBps: float = 5000.0
    queue_depth: int = 1024
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        if not self.price_usd >= 0:
            raise ValueError(f"price_usd: must be >= 0, got {self.price_usd}")
        at_least(self, PAGE_BYTES, "capacity_bytes")
        at_least(self, 0, "op_latency_us")
        above(self, 0, "bandwidth_MBps")
        at_least(self, 1, "queue_depth")


class RAM(Device):
    """``RAM(sim, name, cfg)``: tmpfs-like storage (see module docstring)."""

    kind = "ram"

    def __init__(self, sim: Simulator, name: str, cfg: RAMConfig = RAMConfig()) -> None:
        super().__init__(sim, name, cfg.capacity_bytes, cfg.queue_depth,
                         n_servers=cfg.queue_depth)
        self.cfg = cfg
        self._op_ns = int(round(cfg.op_latency_us * 1000))
        self._bpns = cfg.bandwidth_MBps * 1e6 / 1e9
        self._mem_free = 0
        # tmpfs pages in use (allocated lazily by the OS: zero pages are not resident)
        self._pages = np.zeros(-(-cfg.capacity_bytes // PAGE_BYTES), dtype=np.bool_)
        self._stored = 0

    def stats(self) -> dict:
        s = super().stats()
        s["busy_ns"] = self.outstanding_ns()    # time with a command outstanding (%util)
        return s

    def service_ns(self, req: IORequest) -> int:
        now = self.sim.now_ns
        op = req.op
        if op == FLUSH:
            return 0
        if req.offset_bytes < 0 or req.end_bytes > self.capacity_bytes:
            raise ValueError(f"{self.name}: {req} outside the device's {self.capacity_bytes} bytes")
        if op == DISCARD:
            first = -(-req.offset_bytes // PAGE_BYTES)
            last = req.end_bytes // PAGE_BYTES
            if last > first:
                span = self._pages[first:last]
                self._stored -= int(span.sum())
                span[:] = False
            return self._op_ns
        if op == WRITE and req.size_bytes:
            span = self._pages[req.offset_bytes // PAGE_BYTES:-(-req.end_bytes // PAGE_BYTES)]
            self._stored += span.size - int(span.sum())
            span[:] = True
        start = max(now + self._op_ns, self._mem_free)
        end = start + int(req.size_bytes / self._bpns)
        self._mem_free = end
        return end - now

    def volatile_bytes(self) -> int:
        """Everything stored: tmpfs loses it all on power failure (see module docstring)."""
        return self._stored * PAGE_BYTES
