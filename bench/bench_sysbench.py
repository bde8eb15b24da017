"""Speed of the sysbench workload: what the client side costs per event, and (once the
InnoDB server is registered) the issue's speed case.

1. Client side, against a null server (every transaction takes a fixed simulated
   time, one kernel wake-up, no work): events per CPU second of building and
   running them (transaction building, ids, latency and interval accounting) -
   ``<test>_client_events_per_cpu_s`` and ``..._us_per_event`` for each test.
2. With ``--server``: ``oltp_read_write``, 16 threads, 8 tables x 1 M rows, 60
   simulated seconds (``--time``), buffer pool a quarter of the data (448m), through
   ``pipeline.build`` (``workload=sysbench engine=innodb_server_56``) on the default
   stack (``device.sda`` of ``conf/config.yaml``, or ``--device PRESET``): tps, page
   accesses (``Innodb_buffer_pool_read_requests``) and reads, wall and CPU seconds of
   the run, page accesses per CPU and per wall second. ``--profile`` prints the top of
   a cProfile of the run (where time goes).

    python -m bench.bench_sysbench [--events N]
    python -m bench.bench_sysbench --server [--time 60] [--device tmpfs] [--pool 448m] [--profile]

CPU time: the client case the process's (user + sys), the server case
``time.process_time``; wall time ``perf_counter``.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import time
from pathlib import Path

import numpy as np

from models.sim import Simulator
from models.workload.sysbench import TESTS, Sysbench, SysbenchConfig


class NullServer:
    """``run`` takes ``trx_ns`` of simulated time per transaction and does nothing."""

    def __init__(self, sim, trx_ns: int = 1_000_000) -> None:
        self.sim, self.trx_ns, self.commits = sim, trx_ns, 0

    def create_tables(self, tables) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def run(self, thd, trx):
        yield self.trx_ns
        self.commits += 1

    def status(self) -> dict:
        return {"Com_commit": self.commits}


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def client_cost(test: str, events: int) -> float:
    """CPU seconds per event of the sysbench side (16 threads, 8 tables x 1 M rows)."""
    sim = Simulator()
    cfg = SysbenchConfig(test=test, threads=16, tables=8, table_size=1_000_000, time=0,
                         events=events, report_interval=1)
    sb = Sysbench(sim, cfg, NullServer(sim), np.random.default_rng(1))
    c0 = _cpu_s()
    sb.start()
    sim.run()
    return (_cpu_s() - c0) / sb.results()["transactions"]


def server_case(pool: str, time_s: float, device: str | None, profile: bool) -> dict:
    """The issue's speed case through ``pipeline.build``, on the default stack (its
    ``device.sda``) or on the ``conf/device`` preset ``device``; the pool starts empty
    (as after a restart without a buffer pool dump) and warms up inside the run."""
    from hydra import compose, initialize_config_dir

    from pipeline import registry
    from pipeline.build import build
    from pipeline.schema import register
    from pipeline.spec import validate
    CONF = Path(__file__).resolve().parents[1] / "conf"

    if "sysbench" not in registry.WORKLOADS:
        return {"server": "not registered (no models.engine.innodb.server)"}
    register()
    overrides = ["workload=sysbench", "engine=innodb_server_56", "workload.test=oltp_read_write",
                 "workload.threads=16", "workload.tables=8", "workload.table_size=1000000",
                 f"workload.time={time_s:g}", f"engine.innodb_buffer_pool_size={pool}"]
    if device:
        overrides.append(f"device@device.sda={device}")
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    spec = validate(cfg, "bench")
    preset = cfg.hydra.runtime.choices.get("device@device.sda")
    w0, c0 = time.perf_counter(), time.process_time()
    stack = build(spec)
    w1, c1 = time.perf_counter(), time.process_time()
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    stack.workload.start()
    stack.sim.run()
    if prof:
        prof.disable()
    w2, c2 = time.perf_counter(), time.process_time()
    r = stack.workload.results()
    pages = r.get("Innodb_buffer_pool_read_requests", 0)
    out = {"device": preset if device else f"{preset} (the default stack)",
           "simulated_s": time_s, "pool": pool,
           "build_wall_s": round(w1 - w0, 2), "build_cpu_s": round(c1 - c0, 2),
           "run_wall_s": round(w2 - w1, 2), "run_cpu_s": round(c2 - c1, 2),
           "tps": round(r["tps"], 1), "transactions": r["transactions"],
           "page_accesses": pages, "page_reads": r.get("Innodb_buffer_pool_reads", 0),
           "pages_flushed": r.get("Innodb_buffer_pool_pages_flushed", 0),
           "sim_events": stack.sim.events_processed,
           "page_accesses_per_cpu_s": round(pages / (c2 - c1)) if c2 > c1 else None,
           "page_accesses_per_wall_s": round(pages / (w2 - w1)) if w2 > w1 else None}
    if prof:
        stats = pstats.Stats(prof)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumtime").print_stats(40)
        out["profile_share_pct"] = layer_shares(stats)
    return out


LAYERS = (("models/sim/", "event kernel"), ("models/block/", "block layer"),
          ("models/metrics/", "block layer"), ("models/device/", "device"),
          ("models/fs/", "filesystem"), ("models/engine/innodb/buffer/", "buffer pool"),
          ("models/engine/innodb/server/", "statement path"),
          ("models/engine/cpu.py", "CPU model"), ("models/engine/innodb/", "redo, latches, commit"),
          ("models/workload/sysbench/", "sysbench client"))


def layer_shares(stats: pstats.Stats) -> dict:
    """Per cent of the profiled time spent in each layer's own code (cProfile tottime by
    source file; generator resumption counts where the generator is, the C heap and
    builtins as "other")."""
    share: dict[str, float] = {}
    for (path, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        where = next((name for prefix, name in LAYERS if prefix in path), "other")
        share[where] = share.get(where, 0.0) + tottime
    total = sum(share.values()) or 1.0
    return {k: round(100 * v / total, 1) for k, v in sorted(share.items(), key=lambda kv: -kv[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--server", action="store_true")
    ap.add_argument("--pool", default="448m",
                    help="innodb_buffer_pool_size (8 x 1 M sbtest rows: ~1.8 GB of pages)")
    ap.add_argument("--time", type=float, default=60.0, help="--server: simulated seconds")
    ap.add_argument("--device", default=None,
                    help="--server: a conf/device preset for sda (default: the default stack's)")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    out: dict = {}
    if args.server:
        out.update(server_case(args.pool, args.time, args.device, args.profile))
    else:
        for test in TESTS:
            per = client_cost(test, args.events)
            out[f"{test}_client_us_per_event"] = round(per * 1e6, 1)
            out[f"{test}_client_events_per_cpu_s"] = round(1 / per)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
