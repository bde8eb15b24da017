"""A 4-run multirun on local Ray writes 4 Parquet files that pipeline.query reads; the
same sweep run serially gives identical metrics."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from pipeline import query
from pipeline.run import main

from .helpers import parquet_files

# 2 x 2 points, a short simulated time each (random 4k / 64k reads on one 15k drive)
SWEEP = ["workload.bs=4k,64k", "block=noop,deadline", "workload.runtime_s=0.2",
         "workload.iodepth=4", "results.summary=true"]
NOT_METRICS = {"wall_seconds", "code_version", "run"}


def _rows(root):
    con = query.connect(root)
    res = query.run_sql(con, "SELECT * FROM runs ORDER BY config_hash")
    return [dict(zip(res.columns, r)) for r in res.rows]


@pytest.fixture(scope="module")
def ray_sweep(tmp_path_factory, ray_session):
    root = tmp_path_factory.mktemp("ray") / "outputs"
    code = main(["-m", f"results.dir={root}", *SWEEP])
    assert code == 0
    return root


def test_ray_multirun_writes_one_parquet_file_per_run(ray_sweep):
    files = parquet_files(ray_sweep)
    assert len(files) == 4
    for f in files:
        assert f.name == "summary.parquet"
        assert f.parent.name.startswith("run=") and f.parent.parent.name == "experiment=default"
        assert pq.read_metadata(f).num_rows == 1
    assert not list(ray_sweep.rglob("*.partial"))


def test_query_reads_the_sweep(ray_sweep, capsys):
    rows = _rows(ray_sweep)
    assert len(rows) == 4
    assert {(r["workload.bs"], r["block.scheduler"]) for r in rows} == {
        ("4k", "noop"), ("4k", "deadline"), ("64k", "noop"), ("64k", "deadline")}
    for r in rows:
        assert r["status"] == "ok" and r["error"] is None
        assert r["run"] == r["config_hash"]          # hive partition = config hash
        assert r["iostat.sda.r_s"] > 0 and r["fio.iops"] > 0
        # the 0.2 s runtime, then the I/Os in flight at its end reaped (fio's do_io)
        assert r["sim_seconds"] == pytest.approx(r["fio.runtime_s"]) and r["sim_seconds"] > 0.2
        assert r["events_processed"] > 0 and r["wall_seconds"] > 0
    # the CLI over the same files
    assert query.main(["--dir", str(ray_sweep), "SELECT count(*) AS n FROM runs"]) == 0
    assert "4" in capsys.readouterr().out


def test_serial_sweep_gives_identical_metrics(ray_sweep, tmp_path):
    root = tmp_path / "outputs"
    assert main(["-m", f"results.dir={root}", "hydra/launcher=serial", *SWEEP]) == 0
    ray_rows, serial_rows = _rows(ray_sweep), _rows(root)
    assert [r["config_hash"] for r in ray_rows] == [r["config_hash"] for r in serial_rows]
    for a, b in zip(ray_rows, serial_rows):
        assert {k: v for k, v in a.items() if k not in NOT_METRICS} == \
               {k: v for k, v in b.items() if k not in NOT_METRICS}
