"""Buffered write() stalls (E6): one writer walks a file with small writes; optional
background load. What ``write()`` waits for is the measurement.

``pattern``:

- ``overwrite``: writes go sequentially through an existing (``preallocated``) file,
  ``write_bytes`` each (a redo log with 512-byte log blocks: ``write_bytes: 512``);
- ``append``: writes extend a new file.

``align`` (how each logical write of ``write_bytes`` at the running log position
``pos`` is issued):

- ``none``: ``write(pos, write_bytes)`` - a write that starts or ends inside a page
  that is not cached makes the kernel read the page first (read-modify-write);
- ``pad``: whole pages, zero-padded at the tail, and the next write starts at the
  next page boundary (``innodb_log_write_ahead_size``-style padding, wasting the
  tail of each page);
- ``remember``: whole pages: the write starts at the beginning of the page holding
  ``pos`` (the application remembers that page's earlier bytes and rewrites them) and
  is zero-padded to the page end.

``cached``: read the whole file into the page cache before the loop.
``sync``: after each write, none | fdatasync | sync_file_range (``WRITE``, async).
``background``: ``none`` | ``metadata`` - a thread doing random 4 KB writes +
``fsync`` into a large sparse file (``background_file_size``), which allocates
blocks all over it: every commit logs new bitmap / extent blocks, the journal fills,
and on ext4 (jbd2) the writer's ``write()`` - which updates the inode's mtime under
a journal handle - waits for the checkpoint; xfs pushes its log tail in the
background and never makes ``write()`` wait. ``think_us``: pause between writes.

Results: latency summaries of ``write()`` (``write_lat_*``) and of the sync call
(``sync_lat_*``), the number of device reads caused by read-modify-write
(``fs_rmw_reads``) and the filesystem counters.
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

PATTERNS = ("overwrite", "append")
ALIGNS = ("none", "pad", "remember")
SYNCS = ("none", "fdatasync", "sync_file_range")
BACKGROUNDS = ("none", "metadata")


@dataclass(frozen=True)
class BufferedWriteConfig:
    pattern: str = "overwrite"
    write_bytes: int | str = 512
    align: str = "none"
    count: int = 2000
    file_size: int | str = "64m"
    cached: bool = False
    sync: str = "none"
    think_us: float = 0.0
    background: str = "none"
    background_file_size: int | str = "4g"

    def __post_init__(self) -> None:
        for key, allowed in (("pattern", PATTERNS), ("align", ALIGNS), ("sync", SYNCS),
                             ("background", BACKGROUNDS)):
            if getattr(self, key) not in allowed:
                raise ValueError(f"{key}: must be one of {', '.join(allowed)}, got {getattr(self, key)!r}")
        if parse_size(self.write_bytes, "write_bytes") < 1:
            raise ValueError(f"write_bytes: must be >= 1, got {self.write_bytes!r}")
        at_least(self, 1, "count")
        if parse_size(self.file_size, "file_size") < 4096:
            raise ValueError(f"file_size: must be >= 4k, got {self.file_size!r}")
        if parse_size(self.background_file_size, "background_file_size") < 1 << 20:
            raise ValueError(f"background_file_size: must be >= 1m, got {self.background_file_size!r}")
        at_least(self, 0, "think_us")


class BufferedWrite(FsWorkload):
    def __init__(self, sim: Simulator, cfg: BufferedWriteConfig, fs: Filesystem,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        super().__init__(sim, cfg, fs, rng, scale)
        self.write_lat = LatencyRecorder()
        self.sync_lat = LatencyRecorder()
        self.device_bytes_written = 0

    def start(self) -> None:
        self.start_ns = self.sim.now_ns
        if self.cfg.background == "metadata":
            self.sim.spawn(self._metadata_churn(), "metadata_churn")
        self.sim.spawn(self._main(), "writer")

    def _extent(self, pos: int, n: int) -> tuple[int, int, int]:
        """(offset, length, next pos) of the write issued for ``n`` bytes at ``pos``."""
        align = self.cfg.align
        if align == "none":
            return pos, n, pos + n
        if align == "pad":
            length = -(-n // 4096) * 4096
            return pos, length, pos + length
        start = pos // 4096 * 4096
        end = -(-(pos + n) // 4096) * 4096
        return start, end - start, pos + n

    def _main(self):
        cfg, fs, sim = self.cfg, self.fs, self.sim
        size = parse_size(cfg.file_size, "file_size")
        n = parse_size(cfg.write_bytes, "write_bytes")
        if cfg.pattern == "overwrite":
            f = fs.create("bw_test", size, "zero_fill")
            if cfg.cached:
                for off in range(0, size, 1 << 20):
                    yield fs.pread(f, off, min(1 << 20, size - off))
        else:
            f = fs.create("bw_test")
        self.start_ns = sim.now_ns
        pos = 0
        for _ in range(self.count):
            off, length, pos = self._extent(pos, n)
            if cfg.pattern == "overwrite" and off + length > size:
                pos = 0
                off, length, pos = self._extent(0, n)
            t = sim.now_ns
            yield fs.pwrite(f, off, length, issuer=1)
            t2 = sim.now_ns
            self.write_lat.add(t2 - t)
            if cfg.sync == "fdatasync":
                yield fs.fdatasync(f, issuer=1)
                self.sync_lat.add(sim.now_ns - t2)
            elif cfg.sync == "sync_file_range":
                yield fs.sync_file_range(f, off, length, SYNC_FILE_RANGE_WRITE, issuer=1)
                self.sync_lat.add(sim.now_ns - t2)
            if cfg.think_us:
                yield int(cfg.think_us * 1000)
        self.finish()

    def _metadata_churn(self):
        fs = self.fs
        size = parse_size(self.cfg.background_file_size, "background_file_size")
        f = fs.create("churn", size, "none")
        pages = size // 4096
        while not self.done:
            p = int(self.rng.integers(0, pages))
            yield fs.pwrite(f, p * 4096, 4096, issuer=2)
            yield fs.fsync(f, issuer=2)

    def results(self) -> dict:
        out = super().results()
        out.update(self.write_lat.summary("write_lat"))
        out.update(self.sync_lat.summary("sync_lat"))
        out.update(self.fs_results())
        return out
