"""Sweep throughput: runs per wall-clock second through the whole driver path
(``pipeline.fanout.sweep``: Ray tasks, results back to the driver, atomic Parquet
writes) with 1 and with 2 Ray workers.

The sweep: 32 small runs - fio 4 KiB random reads for 8 ms of simulated time from a
RAM disk, 32 seeds; about 10,000 simulated I/Os each on the event path, a fraction
of a second of CPU per run. Each measurement is a local Ray with ``num_cpus`` =
workers, warmed up first (every worker has imported the models and run one
simulation), then the 32 runs timed from submission to the last file written.
Repeated ``--repeat`` times; the best and the median are reported, with the load
average before and after and each run's mean wall and CPU seconds - the machine may
be shared, and a 2-worker figure means little unless two cores were free (a run's
wall time well above its CPU time says it waited for a core). Prints one JSON line:

    python -m bench.bench_sweep [--runs 32] [--repeat 3] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pipeline.numba_cache import configure as _configure_numba_cache

_configure_numba_cache()  # before the models import numba

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ["device@device.sda=tmpfs", "workload.size=1g", "workload.bs=4k",
             "workload.iodepth=2", "workload.runtime_s=0.008", "results.summary=false"]


def make_specs(n: int, results_dir: str) -> list:
    """``n`` validated RunSpecs differing in ``run.seed`` (composed once with Hydra)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf, open_dict

    from pipeline.schema import register
    from pipeline.spec import prepare
    from pipeline.version import code_version

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        base = compose("config", overrides=[*OVERRIDES, f"results.dir={results_dir}"])
    GlobalHydra.instance().clear()
    specs = []
    for seed in range(1, n + 1):
        cfg = OmegaConf.create(OmegaConf.to_container(base))
        with open_dict(cfg):
            cfg.run.seed = seed
        specs.append(prepare(cfg, "bench_sweep", code_version()))
    return specs


def measure(specs: list, workers: int, repeat: int) -> dict:
    import ray

    from pipeline.fanout import simulate_run, sweep
    from pipeline.schema import RayConfig

    ray.init(address="local", num_cpus=workers, include_dashboard=False,
             object_store_memory=100 * 2**20, log_to_driver=False, logging_level=logging.ERROR)
    try:
        # warm-up: every worker process imports the models and runs one simulation
        warm = ray.remote(num_cpus=1)(simulate_run)
        ray.get([warm.remote(s) for s in specs[: 2 * workers]])
        cfg = RayConfig(num_cpus=workers, max_retries=3)
        times, run_walls, run_cpus = [], [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            outs = sweep(specs, cfg, rerun=True, label=f"bench {workers} worker(s)",
                         out=open(os.devnull, "w"))
            times.append(time.perf_counter() - t0)
            run_walls.append(statistics.mean(o.wall_seconds for o in outs))
            run_cpus.append(statistics.mean(o.resources["cpu_seconds"] for o in outs))
    finally:
        ray.shutdown()
    n = len(specs)
    return {"best_runs_per_s": round(n / min(times), 3),
            "median_runs_per_s": round(n / statistics.median(times), 3),
            "seconds": [round(t, 3) for t in times],
            "mean_run_wall_s": [round(w, 3) for w in run_walls],
            "mean_run_cpu_s": [round(c, 3) for c in run_cpus]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]

    with tempfile.TemporaryDirectory(prefix="bench_sweep") as tmp:
        specs = make_specs(args.runs, str(Path(tmp) / "outputs"))
        result: dict = {"runs": args.runs, "cpus": os.cpu_count(),
                        "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
        stderr, sys.stderr = sys.stderr, open(os.devnull, "w")   # per-run progress lines
        try:
            for w in counts:
                result[f"workers_{w}"] = measure(specs, w, args.repeat)
        finally:
            sys.stderr.close()
            sys.stderr = stderr
        result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
        if 1 in counts and 2 in counts:
            one, two = result["workers_1"], result["workers_2"]
            result["speedup_2_vs_1_best"] = round(two["best_runs_per_s"] / one["best_runs_per_s"], 3)
            result["speedup_2_vs_1_median"] = round(
                two["median_runs_per_s"] / one["median_runs_per_s"], 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
