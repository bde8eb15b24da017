"""Speed of E3's DBT-2 runs (issue 15's targets: a placement at the validation scale in
under 60 s of one core, the published 600 s in under 5 minutes).

Runs one case of ``experiment=dbt2_placement`` twice in this process, composed as
``pipeline.run`` composes it (``bench.cases.compose_spec``), through
``pipeline.build.simulate`` with the garbage collector paused as ``pipeline.worker``
runs a simulation: first as a fresh worker runs it (the warm replay of the pool's
past included), then as a worker that has run another placement of the sweep runs it
(the replay restored, ``Tpcc.warm_up``). The two runs must give the same summary
(checked). Prints one JSON line: the case, simulated seconds, CPU seconds of each run
(``time.process_time``, build included), the replay's share (their difference), CPU
seconds per simulated second of the restored run, the CPU minutes a full-length
(600 s) placement then costs, NOTPM and the peak RSS. Extra arguments are overrides.

    python -m bench.bench_dbt2 [--case all_ssd] [override ...]

CPU time, not wall time: these machines are shared.
"""
from __future__ import annotations

import argparse
import json

from . import cases

FULL_S = 600            # conf/experiment/dbt2_placement.yaml: workload.duration at run.scale 1


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="all_ssd")
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args(argv)

    import models.workload.tpcc.workload as tpcc_workload

    spec = cases.compose_spec("dbt2_placement", [f"case/dbt2_placement={a.case}",
                                                 *a.overrides])
    tpcc_workload._REPLAYED.clear()
    cases.reset_peak_rss()
    fresh, fresh_s = cases.simulate_timed(spec)
    restored, restored_s = cases.simulate_timed(spec)
    if restored.summary != fresh.summary:
        raise SystemExit("bench_dbt2: the restored replay changed the run's summary")
    sim_s = fresh.sim_ns / 1e9
    replay_s = fresh_s - restored_s
    per_sim_s = restored_s / sim_s if sim_s else None
    out = {"case": a.case, "overrides": a.overrides, "commit": cases.commit(),
           "sim_s": round(sim_s, 1), "cpu_s_fresh": round(fresh_s, 2),
           "cpu_s_restored": round(restored_s, 2), "cpu_s_replay": round(replay_s, 2),
           "cpu_s_per_sim_s": round(per_sim_s, 2) if per_sim_s else None,
           "cpu_min_600s_fresh": round((replay_s + per_sim_s * FULL_S) / 60, 1)
           if per_sim_s else None,
           "notpm": fresh.summary.get("dbt2.notpm"),
           "peak_rss_mb": round(cases.peak_rss_bytes() / 2**20)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
