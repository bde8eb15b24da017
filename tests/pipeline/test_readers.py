"""The results directory is readable by the tools users have: pandas, polars, DuckDB.

pandas (pyarrow datasets) reads the directory itself and sees one row per run: the
detail tables live in ``_details/`` (skipped), and the in-file ``experiment`` column
has the type of the ``experiment=`` partition. Polars reads the summaries by glob.
"""
from __future__ import annotations

import duckdb
import pandas as pd
import polars as pl
import pytest

import pipeline.version
from pipeline import query
from pipeline.run import main


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("readers") / "outputs"
    mp = pytest.MonkeyPatch()
    mp.setattr(pipeline.version, "code_version", lambda: "test:v1")
    try:
        for bs in ("4k,16k", "64k"):   # two sweeps, one with detail tables
            extra = ["results.details=true", "results.sample_ms=50"] if bs == "64k" else []
            assert main(["-m", f"results.dir={root}", "hydra/launcher=serial",
                         "results.summary=false", "workload.runtime_s=0.1",
                         f"workload.bs={bs}", *extra]) == 0
    finally:
        mp.undo()
    return root


def _duckdb(root):
    con = query.connect(root)
    return dict(query.run_sql(con, 'SELECT config_hash, "workload.bs" FROM runs').rows)


def test_pandas_reads_the_directory_as_the_runs_table(results):
    df = pd.read_parquet(results)
    assert len(df) == 3 and "t_s" not in df.columns          # no detail rows mixed in
    assert set(df["experiment"].astype(str)) == {"default"}
    assert dict(zip(df["config_hash"], df["workload.bs"])) == _duckdb(results)
    assert sorted(df["run"].astype(str)) == sorted(df["config_hash"])


def test_polars_scans_the_summaries_with_hive_partitioning(results):
    lf = pl.scan_parquet(str(results / "**" / "summary.parquet"), hive_partitioning=True,
                         missing_columns="insert", extra_columns="ignore")
    df = lf.collect()
    assert df.height == 3 and {"experiment", "run", "fio.MB_s"} <= set(df.columns)
    assert dict(zip(df["config_hash"], df["workload.bs"])) == _duckdb(results)


def test_duckdb_reads_summaries_and_details(results):
    con = duckdb.connect()
    glob = (results / "**" / "summary.parquet").as_posix()
    n, = con.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning=true, "
                     "union_by_name=true)").fetchone()
    assert n == 3
    con = query.connect(results)
    rows = query.run_sql(con, "SELECT DISTINCT run FROM iostat").rows
    assert len(rows) == 1 and (results / "experiment=default" / f"run={rows[0][0]}" /
                               "_details" / "iostat.parquet").is_file()
