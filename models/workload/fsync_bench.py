"""fsync microbenchmark (E4): one thread writes ``bs`` bytes ``count`` times, calling
``sync`` after each write; the file is prepared beforehand.

Options:

- ``bs``, ``count``: write size and number of writes (E4: 8k x 131072 = 1 GB);
- ``sync``: fdatasync | fsync | sync_file_range (WAIT_BEFORE|WRITE|WAIT_AFTER of the
  written range) | none;
- ``prepare``: how the file looks before the loop -
  ``empty`` (every write appends),
  ``preallocated`` (written long ago: allocated, on disk, not cached),
  ``zero_fill`` (zeros written with ``zero_fill_bs`` buffered writes *in the run*, so
  their writeback competes with the loop unless ``sleep_s`` lets it finish),
  ``fallocate`` / ``posix_fallocate`` (the call, in the run; ``posix_fallocate``
  zero-fills where ``fallocate`` is not supported);
- ``file_size``: size of the prepared file (default ``count`` x ``bs``);
- ``sleep_s``: pause between preparation and the loop (E4 case 4: 20 s);
- ``drop_caches``: drop clean cached pages before the loop (the file was written
  "beforehand", e.g. before a reboot).

``scale`` (pipeline) multiplies ``count`` and ``file_size`` (the rate is a
steady-state figure; the zero-fill writeback volume scales with them, so case 3's
penalty shrinks with scale - compare it at scale 1).

Results: ``syncs_per_s`` (= writes per second of the loop), ``loop_s``, latency
summaries of ``write()`` (``write_lat_*``) and of the sync call (``sync_lat_*``), the
preparation time and the filesystem's counters (commits, flushes, RMW reads, ...).

Deliberately not modelled: the benchmark's own user-space CPU between calls.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import at_least
from ..fs import (SYNC_FILE_RANGE_WAIT_AFTER, SYNC_FILE_RANGE_WAIT_BEFORE,
                  SYNC_FILE_RANGE_WRITE, Filesystem)
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size
from .fs_base import FsWorkload

SYNC_CALLS = ("fdatasync", "fsync", "sync_file_range", "none")
PREPARE = ("empty", "preallocated", "zero_fill", "fallocate", "posix_fallocate")
SFR_ALL = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER


@dataclass(frozen=True)
class FsyncBenchConfig:
    bs: int | str = "8k"
    count: int = 131072
    sync: str = "fdatasync"
    prepare: str = "empty"
    file_size: int | str = 0
    zero_fill_bs: int | str = "1m"
    sleep_s: float = 0.0
    drop_caches: bool = False
    filename: str = "fsync_test"

    def __post_init__(self) -> None:
        if parse_size(self.bs, "bs") < 1:
            raise ValueError(f"bs: must be >= 1 byte, got {self.bs!r}")
        at_least(self, 1, "count")
        if self.sync not in SYNC_CALLS:
            raise ValueError(f"sync: must be one of {', '.join(SYNC_CALLS)}, got {self.sync!r}")
        if self.prepare not in PREPARE:
            raise ValueError(f"prepare: must be one of {', '.join(PREPARE)}, got {self.prepare!r}")
        parse_size(self.file_size, "file_size")
        if parse_size(self.zero_fill_bs, "zero_fill_bs") < 4096:
            raise ValueError(f"zero_fill_bs: must be >= 4k, got {self.zero_fill_bs!r}")
        at_least(self, 0, "sleep_s")


class FsyncBench(FsWorkload):
    """``start_ns`` / ``end_ns`` span the measured loop, not the file's preparation
    (``rng`` is unused: the benchmark is deterministic)."""

    def __init__(self, sim: Simulator, cfg: FsyncBenchConfig, fs: Filesystem,
                 rng=None, scale: float = 1.0) -> None:
        super().__init__(sim, cfg, fs, rng, scale)
        self.bs = parse_size(cfg.bs, "bs")
        size = parse_size(cfg.file_size, "file_size") or self.bs * cfg.count
        self.file_size = max(self.bs, int(size * scale)) // 4096 * 4096 or 4096
        self.write_lat = LatencyRecorder()
        self.sync_lat = LatencyRecorder()
        self.prepare_ns = 0
        self.process = None

    def start(self) -> None:
        self.process = self.sim.spawn(self._run(), "fsync_bench")

    def _run(self):
        cfg, fs, sim = self.cfg, self.fs, self.sim
        t0 = sim.now_ns
        if cfg.prepare == "preallocated":
            f = fs.create(cfg.filename, self.file_size, "zero_fill")
        else:
            f = fs.create(cfg.filename)
            if cfg.prepare == "zero_fill":
                step = parse_size(cfg.zero_fill_bs, "zero_fill_bs")
                for off in range(0, self.file_size, step):
                    yield fs.pwrite(f, off, min(step, self.file_size - off))
            elif cfg.prepare == "fallocate":
                yield fs.fallocate(f, 0, self.file_size)
            elif cfg.prepare == "posix_fallocate":
                yield fs.posix_fallocate(f, 0, self.file_size)
        self.prepare_ns = sim.now_ns - t0
        if cfg.sleep_s:
            yield int(cfg.sleep_s * 1e9)
        if cfg.drop_caches:
            fs.drop_caches()
        sync = {"fdatasync": fs.fdatasync, "fsync": fs.fsync, "none": None,
                "sync_file_range": lambda f, off=0: fs.sync_file_range(f, off, self.bs, SFR_ALL)
                }[cfg.sync]
        self.start_ns = sim.now_ns
        bs = self.bs
        for i in range(self.count):
            off = i * bs
            t = sim.now_ns
            yield fs.pwrite(f, off, bs)
            t2 = sim.now_ns
            self.write_lat.add(t2 - t)
            if sync is not None:
                yield sync(f, off) if cfg.sync == "sync_file_range" else sync(f)
                self.sync_lat.add(sim.now_ns - t2)
        self.finish()

    def results(self) -> dict:
        base = super().results()
        secs = base["runtime_s"]
        n = len(self.write_lat)
        out = {"syncs_per_s": n / secs if secs > 0 else 0.0, "loop_s": secs, "writes": n,
               "prepare_s": self.prepare_ns / 1e9, "finished": base["finished"]}
        out.update(self.write_lat.summary("write_lat"))
        out.update(self.sync_lat.summary("sync_lat"))
        out.update(self.fs_results())
        return out
