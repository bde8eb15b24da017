"""How many turnovers the warm replay needs (``InnoDBServer.warm_replay``, E3): the
``dbt2_placement`` server built with ``warm_pool_turnovers=0`` (the table-order preload),
then the workload's transactions replayed in steps of ``--step`` turnovers; per step the
pool's misses and the dirty LRU-tail pages evicted (written) per New-Order, the dirty
pages left, and the CPU seconds of the step. Flat rows: the pool is in the state a
long run leaves. No simulated time passes (the devices do not matter).

    python -m bench.warm_replay [--steps 10] [--step 0.5] [override ...]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--step", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args(argv)

    from models.workload.tpcc import nurand
    from pipeline.build import build
    from pipeline.spec import validate
    from tests.experiments.helpers import compose

    spec = validate(compose("dbt2_placement", "case/dbt2_placement=all_hdd", *a.overrides,
                            "workload.warm_pool_turnovers=0"), "dbt2_placement")
    wl = build(spec).workload
    wl.warm_up()                    # the table-order preload (no replay: turnovers 0)
    srv, b = wl.server, wl.builder
    rnd = nurand.TpccRand(np.random.default_rng(a.seed),
                          nurand.run_constants(np.random.default_rng(a.seed + 1)))
    stream = (b.build(rnd)[1] for _ in iter(int, 1))
    print("turnovers  transactions  misses/NO  written/NO  dirty_pages  cpu_s")
    for i in range(1, a.steps + 1):
        t0, no0 = time.process_time(), b.counts["new_order"]
        out = srv.warm_replay(stream, a.step)
        no = b.counts["new_order"] - no0
        print(f"{i * a.step:9.1f}  {out['transactions']:12d}  {out['misses'] / no:9.2f}  "
              f"{out['written'] / no:10.2f}  {out['dirty_pages']:11d}  "
              f"{time.process_time() - t0:5.1f}", flush=True)


if __name__ == "__main__":
    main()
