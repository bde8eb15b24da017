"""Speed of the long flushing runs (issue 16's target: one simulated hour of the
``flushing`` case in under 10 minutes of one core at the validation scale).

Runs one case of ``experiment=flushing`` for ``--seconds`` simulated seconds (its
``run.scale`` is set to give them) through ``pipeline.build.simulate``, with the garbage
collector off as ``pipeline.worker`` runs a simulation, and prints one JSON line: the
case, simulated seconds, CPU seconds (``time.process_time``, compose and build
included), the CPU minutes one simulated hour then costs, transactions per second and
per CPU second, events per transaction, the peak RSS. Extra arguments are overrides.

    python -m bench.bench_flushing [--case hdd_mysql55_native] [--seconds 60] [override ...]

CPU time, not wall time: these machines are shared.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import time

EXPERIMENT_SECONDS = 3600       # conf/experiment/flushing.yaml: workload.time at run.scale 1


def _commit() -> str:
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                             text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="hdd_mysql55_native")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args(argv)

    from pipeline.build import simulate
    from pipeline.spec import validate
    from tests.experiments.helpers import compose

    scale = a.seconds / EXPERIMENT_SECONDS
    t0 = time.process_time()
    spec = validate(compose("flushing", f"case/flushing={a.case}", f"run.scale={scale!r}",
                            "results.details=false", *a.overrides), "flushing")
    gc.disable()
    try:
        r = simulate(spec)
    finally:
        gc.enable()
    cpu_s = time.process_time() - t0
    sim_s = r.sim_ns / 1e9
    trx = r.summary.get("innodb.Com_commit", 0)
    out = {"case": a.case, "overrides": a.overrides, "commit": _commit(),
           "sim_s": round(sim_s, 1), "cpu_s": round(cpu_s, 2),
           "cpu_min_per_sim_hour": round(cpu_s / sim_s * 3600 / 60, 1) if sim_s else None,
           "tps": round(r.summary.get("sysbench.tps", 0.0), 1),
           "trx_per_cpu_s": round(trx / cpu_s) if cpu_s else None,
           "events_per_trx": round(r.events / trx, 1) if trx else None,
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
