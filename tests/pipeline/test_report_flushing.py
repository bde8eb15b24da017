"""experiment=flushing's plot: throughput and checkpoint age vs time, one line per
algorithm, one column per device, from each run's `engine` detail table."""
from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline import report
from pipeline.job import summary_table
from pipeline.sink import write_run

from .test_report import is_png


def _write(root, case, tps, ages):
    row = {"experiment": "flushing", "config_hash": case.replace("/", "-"), "status": "ok",
           "run.scale": 1.0, "run.case": case, "sysbench.tps": sum(tps) / len(tps)}
    engine = pa.table({"t_s": [float(i + 1) for i in range(len(tps))], "trx": tps,
                       "flushed_list": [t // 2 for t in tps], "flushed_lru": [0] * len(tps),
                       "flushed_single": [0] * len(tps), "checkpoint_age": ages,
                       "max_checkpoint_age": [1000] * len(tps)})
    write_run(root, "flushing", row["config_hash"],
              {"engine": engine, "summary": summary_table(row)})


def test_one_column_per_device_one_line_per_algorithm(tmp_path):
    _write(tmp_path, "hdd/mysql55_native", [500, 0, 500, 0], [800, 940, 600, 940])
    _write(tmp_path, "hdd/percona_estimate", [400] * 4, [500] * 4)
    _write(tmp_path, "ssd/percona_estimate", [900] * 4, [300] * 4)
    out = tmp_path / "flushing.png"
    assert report.main(["--experiment", "flushing", "--results", str(tmp_path),
                        "--out", str(out)]) == 0
    assert is_png(out)
    style = report.style_for("flushing")
    assert style.kind == "series" and style.details
    r = {"run.case": "ssd/percona_keep_average"}
    assert style.label(r) == "percona_keep_average"
    assert style.extra["group"](r) == "SATA SSD"


def test_runs_without_an_engine_table_are_an_error(tmp_path):
    row = {"experiment": "flushing", "config_hash": "x", "status": "ok", "run.scale": 1.0,
           "run.case": "hdd/percona_none"}
    write_run(tmp_path, "flushing", "x", {"summary": summary_table(row)})
    with pytest.raises(ValueError, match="engine table"):
        report.draw("flushing", report.load_rows(tmp_path, "flushing"),
                    path=tmp_path / "f.png", results_dir=tmp_path)
