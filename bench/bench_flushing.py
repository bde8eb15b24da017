"""Speed of the long flushing runs (issue 16's target: one simulated hour of the
``flushing`` case in under 10 minutes of one core at the validation scale).

Runs one case of ``experiment=flushing`` for ``--seconds`` simulated seconds (its
``run.scale`` is set to give them), composed as ``pipeline.run`` composes it
(``bench.cases.compose_spec``), through ``pipeline.build.simulate`` with the garbage
collector paused as ``pipeline.worker`` runs a simulation, and prints one JSON line: the
case, simulated seconds, CPU seconds (``time.process_time``, build and run), the CPU
minutes one simulated hour then costs, transactions per second and per CPU second,
events per transaction, the peak RSS (VmHWM, reset before the run where Linux allows
it). Extra arguments are overrides.

    python -m bench.bench_flushing [--case hdd_mysql55_native] [--seconds 60] [override ...]

CPU time, not wall time: these machines are shared.
"""
from __future__ import annotations

import argparse
import json

from . import cases

EXPERIMENT_SECONDS = 3600       # conf/experiment/flushing.yaml: workload.time at run.scale 1


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="hdd_mysql55_native")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args(argv)

    scale = a.seconds / EXPERIMENT_SECONDS
    spec = cases.compose_spec("flushing", [f"case/flushing={a.case}", f"run.scale={scale!r}",
                                           *a.overrides])
    cases.reset_peak_rss()
    r, cpu_s = cases.simulate_timed(spec)
    sim_s = r.sim_ns / 1e9
    trx = r.summary.get("innodb.Com_commit", 0)
    out = {"case": a.case, "overrides": a.overrides, "commit": cases.commit(),
           "sim_s": round(sim_s, 1), "cpu_s": round(cpu_s, 2),
           "cpu_min_per_sim_hour": round(cpu_s / sim_s * 3600 / 60, 1) if sim_s else None,
           "tps": round(r.summary.get("sysbench.tps", 0.0), 1),
           "trx_per_cpu_s": round(trx / cpu_s) if cpu_s else None,
           "events_per_trx": round(r.events / trx, 1) if trx else None,
           "peak_rss_mb": round(cases.peak_rss_bytes() / 2**20)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
