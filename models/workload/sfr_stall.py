"""sync_file_range stall patterns (E6): one writer appends to a file and starts
asynchronous writeback of what it wrote with ``sync_file_range``.

``pattern``:

- ``unaligned_small``: ``write(write_bytes)`` (1000 bytes) at the end of the file,
  then ``sync_file_range(that range, SYNC_FILE_RANGE_WRITE)``. The next write lands
  in the same 4 KB page, which is then dirty *and* under writeback, so the next
  ``sync_file_range`` (``WB_SYNC_ALL`` before Linux 4.20) waits for that writeback.
  Remedies: ``write_bytes: 4096`` (aligned), or ``FsConfig.sfr_write_waits: false``.
- ``bulk``: ``write(write_bytes)`` (~21 KB, unaligned) appended; after each write,
  every complete ``sfr_bytes`` (16 KB) range not yet synced is passed to
  ``sync_file_range(WRITE)``. On xfs the writeback of one range clusters the
  following dirty pages - including the partly written page the next write will
  touch - so the next call waits. ext4 does not cluster.
- ``aligned_busy``: 4 KB-aligned writes, each followed by ``sync_file_range(WRITE)``,
  one every ``think_us``, while ``busy_writers`` other threads flush in bursts - every
  ``busy_interval_ms``, ``busy_burst`` random ``busy_bytes`` buffered writes into a
  preallocated ``busy_file_size`` file, each followed by ``sync_file_range(WRITE)``
  (a database flushing scattered pages). While the burst fills the request queue
  (``nr_requests``), submitting writeback blocks, so the measured call stalls behind
  the burst. ``nr_requests: 1024`` holds the whole burst and the stall disappears;
  with ``reader: true`` a thread doing random 4 KB O_DIRECT reads of a preallocated
  file shows the price (reads wait behind more queued writes).

``count`` writes by the measured thread (``scale`` multiplies it). Results: latency
summaries (p50/p99/max, calls over 1 ms) of ``write()`` (``write_lat_*``) and
``sync_file_range()`` (``sfr_lat_*``), of the reader (``read_lat_*``), and the
filesystem counters.

Deliberately not modelled: user-space work between calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import at_least
from ..fs import SYNC_FILE_RANGE_WRITE, Filesystem
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size
from .fs_base import FsWorkload

PATTERNS = ("unaligned_small", "bulk", "aligned_busy")


@dataclass(frozen=True)
class SfrStallConfig:
    pattern: str = "unaligned_small"
    write_bytes: int | str = 1000
    sfr_bytes: int | str = "16k"
    count: int = 2000
    think_us: float = 0.0
    busy_writers: int = 1
    busy_bytes: int | str = "16k"
    busy_burst: int = 512
    busy_interval_ms: float = 1000.0
    busy_file_size: int | str = "1g"
    reader: bool = False
    reader_file_size: int | str = "256m"

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern: must be one of {', '.join(PATTERNS)}, got {self.pattern!r}")
        if parse_size(self.write_bytes, "write_bytes") < 1:
            raise ValueError(f"write_bytes: must be >= 1, got {self.write_bytes!r}")
        sfr = parse_size(self.sfr_bytes, "sfr_bytes")
        if sfr < 4096 or sfr % 4096:
            raise ValueError(f"sfr_bytes: must be a positive multiple of 4k, got {self.sfr_bytes!r}")
        at_least(self, 1, "count")
        at_least(self, 0, "busy_writers")
        bb = parse_size(self.busy_bytes, "busy_bytes")
        if bb < 4096 or bb % 4096:
            raise ValueError(f"busy_bytes: must be a positive multiple of 4k, got {self.busy_bytes!r}")
        if parse_size(self.busy_file_size, "busy_file_size") < bb:
            raise ValueError(f"busy_file_size: must be >= busy_bytes, got {self.busy_file_size!r}")
        at_least(self, 1, "busy_burst")
        at_least(self, 0, "think_us", "busy_interval_ms")
        if parse_size(self.reader_file_size, "reader_file_size") < 1 << 20:
            raise ValueError(f"reader_file_size: must be >= 1m, got {self.reader_file_size!r}")


class SfrStall(FsWorkload):
    def __init__(self, sim: Simulator, cfg: SfrStallConfig, fs: Filesystem,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        super().__init__(sim, cfg, fs, rng, scale)
        self.write_lat = LatencyRecorder()
        self.sfr_lat = LatencyRecorder()
        self.read_lat = LatencyRecorder()

    def start(self) -> None:
        sim, cfg = self.sim, self.cfg
        self.start_ns = sim.now_ns
        if cfg.pattern == "aligned_busy":
            for i in range(cfg.busy_writers):
                sim.spawn(self._busy(i), f"busy{i}")
        if cfg.reader:
            sim.spawn(self._reader(), "reader")
        sim.spawn(self._main(), "sfr_writer")

    # -- the measured writer -------------------------------------------------------------
    def _timed_write(self, f, off, n):
        t = self.sim.now_ns
        yield self.fs.pwrite(f, off, n, issuer=1)
        self.write_lat.add(self.sim.now_ns - t)

    def _timed_sfr(self, f, off, n):
        t = self.sim.now_ns
        yield self.fs.sync_file_range(f, off, n, SYNC_FILE_RANGE_WRITE, issuer=1)
        self.sfr_lat.add(self.sim.now_ns - t)

    def _main(self):
        cfg, fs = self.cfg, self.fs
        f = fs.create("sfr_test")
        wb = parse_size(cfg.write_bytes, "write_bytes")
        if cfg.pattern == "aligned_busy":
            wb = -(-wb // 4096) * 4096
        sfr = parse_size(cfg.sfr_bytes, "sfr_bytes")
        off = 0
        synced = 0
        for _ in range(self.count):
            yield from self._timed_write(f, off, wb)
            off += wb
            if cfg.pattern == "bulk":
                while synced + sfr <= off:
                    yield from self._timed_sfr(f, synced, sfr)
                    synced += sfr
            else:
                yield from self._timed_sfr(f, off - wb, wb)
            if cfg.think_us:
                yield int(cfg.think_us * 1000)
        self.finish()

    # -- background load -----------------------------------------------------------------
    def _busy(self, i: int):
        cfg, fs = self.cfg, self.fs
        n = parse_size(cfg.busy_bytes, "busy_bytes")
        size = parse_size(cfg.busy_file_size, "busy_file_size")
        f = fs.create(f"busy{i}", size, "zero_fill")
        slots = size // n
        while not self.done:
            for off in (self.rng.integers(0, slots, cfg.busy_burst) * n).tolist():
                yield fs.pwrite(f, off, n, issuer=10 + i)
                yield fs.sync_file_range(f, off, n, SYNC_FILE_RANGE_WRITE, issuer=10 + i)
            yield int(cfg.busy_interval_ms * 1e6)

    def _reader(self):
        fs = self.fs
        size = parse_size(self.cfg.reader_file_size, "reader_file_size")
        f = fs.create("reader", size, "zero_fill")
        pages = size // 4096
        while not self.done:
            p = int(self.rng.integers(0, pages))
            t = self.sim.now_ns
            yield fs.pread(f, p * 4096, 4096, direct=True, issuer=2)
            self.read_lat.add(self.sim.now_ns - t)

    def results(self) -> dict:
        out = super().results()
        out.update(self.write_lat.summary("write_lat"))
        out.update(self.sfr_lat.summary("sfr_lat"))
        if self.cfg.reader:
            out.update(self.read_lat.summary("read_lat"))
        out.update(self.fs_results())
        return out
