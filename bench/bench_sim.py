"""Speed of the simulator itself: simulated device I/Os per wall-clock second.

fio randread, 4 KB, iodepth=32, one job, through the block layer (noop) into the
device: the hdd model with NCQ (SPTF) reordering, and the ssd model. A short warm-up
run first pays numba's compile/load cost, then the timed run. Prints one JSON line:

    python -m bench.bench_sim [--ios N] [--profile [--event-path]]

``<dev>_randread_qd32_ios_per_s`` is what users get by default (the fused compiled
loop of ``models.workload.fio_fast`` where the job qualifies);
``<dev>_randread_qd32_event_path_ios_per_s`` is the same run with ``fused=False``
(every I/O through the Python event path). ``--profile`` prints the top of a
cProfile of the hdd run instead (where time goes).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import numpy as np

from pipeline.numba_cache import configure as _configure_numba_cache

_configure_numba_cache()  # before the models import numba

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob


def _hdd(sim):
    return HDD(sim, "sda", default_15k_sas())


def _ssd(sim):
    from models.device.ssd import SSD, SSDConfig
    return SSD(sim, "sdb", SSDConfig())


def run_once(make_device, n_ios: int, seed: int = 1, fused: bool = True) -> tuple[int, float]:
    """(device I/Os completed, wall seconds) for one fio randread QD32 run."""
    sim = Simulator()
    dev = make_device(sim)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="noop", nr_requests=128))
    cfg = FioConfig(rw="randread", bs="4k", iodepth=32, size="8g", runtime_s=1e6,
                    number_ios=n_ios)
    job = FioJob(sim, cfg, blk, np.random.default_rng(seed), fused=fused)
    t0 = time.perf_counter()
    job.start()
    sim.run()
    wall = time.perf_counter() - t0
    return sum(dev.completed), wall


def ios_per_s(make_device, n_ios: int, fused: bool = True) -> float:
    run_once(make_device, 2_000, fused=fused)  # warm-up: numba compile / cache load
    best = 0.0
    for _ in range(3):
        ios, wall = run_once(make_device, n_ios, fused=fused)
        best = max(best, ios / wall)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ios", type=int, default=100_000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--event-path", action="store_true",
                    help="with --profile: profile the Python event path (fused=False)")
    args = ap.parse_args()
    if args.profile:
        fused = not args.event_path
        run_once(_hdd, 2_000, fused=fused)
        prof = cProfile.Profile()
        prof.enable()
        run_once(_hdd, args.ios, fused=fused)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    out = {}
    for name, make in (("hdd", _hdd), ("ssd", _ssd)):
        try:
            out[f"{name}_randread_qd32_ios_per_s"] = round(ios_per_s(make, args.ios))
            out[f"{name}_randread_qd32_event_path_ios_per_s"] = round(
                ios_per_s(make, args.ios, fused=False))
        except ImportError:
            out[f"{name}_randread_qd32_ios_per_s"] = None
            out[f"{name}_randread_qd32_event_path_ios_per_s"] = None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
