"""experiment=sysbench_threads's plot: tps (and p95 latency) vs threads, one line per
test, from summary rows as a sweep writes them (the runs here: the sysbench workload
against the fake server of tests/models/workload/sysbench, 16 simulated cores)."""
from __future__ import annotations

import numpy as np

from models.sim import Simulator
from models.workload.sysbench import Sysbench, SysbenchConfig
from pipeline import report
from pipeline.job import summary_table
from pipeline.sink import write_run
from tests.models.workload.sysbench.fake_server import FakeServer

from .test_report import is_png

THREADS = (1, 4, 16, 64)


def _row(test: str, threads: int) -> dict:
    sim = Simulator()
    srv = FakeServer(sim, op_ns=200_000, row_ns=0, commit_ns=100_000, cores=16)
    sb = Sysbench(sim, SysbenchConfig(test=test, threads=threads, time=0.5), srv,
                  np.random.default_rng(0))
    sb.start()
    sim.run()
    r = sb.results()
    return {"experiment": "sysbench_threads", "config_hash": f"{test}-{threads}",
            "status": "ok", "run.scale": 1.0, "workload.type": "sysbench",
            "workload.test": test, "workload.threads": threads,
            **{f"sysbench.{k}": v for k, v in r.items()}}


def test_tps_vs_threads_one_line_per_test(tmp_path, capsys):
    rows = [_row(t, n) for t in ("oltp_read_only", "oltp_read_write") for n in THREADS]
    for row in rows:
        write_run(tmp_path, "sysbench_threads", row["config_hash"],
                  {"summary": summary_table(row)})
    out = tmp_path / "sysbench.png"
    assert report.main(["--experiment", "sysbench_threads", "--results", str(tmp_path),
                        "--out", str(out)]) == 0
    assert is_png(out)
    style = report.style_for("sysbench_threads")
    assert style.kind == "lines" and style.x == "workload.threads"
    assert style.metrics[0] == "sysbench.tps"
    tps = {(r["workload.test"], r["workload.threads"]): r["sysbench.tps"] for r in rows}
    # the fake's 16 cores: tps grows to 16 threads, then flattens
    for t in ("oltp_read_only", "oltp_read_write"):
        assert tps[(t, 4)] > 3.5 * tps[(t, 1)] and tps[(t, 64)] < 1.1 * tps[(t, 16)]
