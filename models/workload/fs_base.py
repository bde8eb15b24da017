"""Base of the workloads that drive one measured thread through the filesystem layer
(``buffered_write``, ``sfr_stall``, ``fsync_bench``): the constructor the builder calls
(``sim, cfg, fs, rng, scale``), the scaled call count, the measured span and the
common part of the results (run time, finished flag, the filesystem's counters).

A subclass spawns its threads in ``start()``, sets ``start_ns`` if its measured span
starts later than time 0 (after a preparation), calls ``finish()`` when its measured
loop ends (which stops the simulation) and adds its own latency summaries in
``results()``.
"""
from __future__ import annotations

import numpy as np

from ..sim import Simulator


class FsWorkload:
    def __init__(self, sim: Simulator, cfg, fs, rng: np.random.Generator | None = None,
                 scale: float = 1.0) -> None:
        self.sim = sim
        self.cfg = cfg
        self.fs = fs
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.count = max(1, int(getattr(cfg, "count", 1) * scale))
        self.done = False
        self.start_ns = 0
        self.end_ns: int | None = None

    def finish(self) -> None:
        """The measured loop is over: background threads see ``done``; the run stops."""
        self.done = True
        self.end_ns = self.sim.now_ns
        self.sim.stop()

    def results(self) -> dict:
        end = self.end_ns if self.end_ns is not None else self.sim.now_ns
        return {"runtime_s": (end - self.start_ns) / 1e9, "finished": self.done}

    def fs_results(self) -> dict:
        return {f"fs_{k}": v for k, v in self.fs.stats().items()}
