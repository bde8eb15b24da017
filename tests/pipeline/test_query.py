"""pipeline.query over hand-made result trees: views, named queries, best, export."""
from __future__ import annotations

import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import query
from pipeline.job import summary_table
from pipeline.sink import write_run


def _run(root, experiment, h, seed, scheduler, nr, mb_s, status="ok", **extra):
    row = {"experiment": experiment, "config_hash": h, "code_version": "test", "seed": seed,
           "status": status, "error": None if status == "ok" else "boom",
           "sim_seconds": 1.0, "wall_seconds": 0.5, "events_processed": 10,
           "run.seed": seed, "block.scheduler": scheduler, "block.nr_requests": nr,
           "workload.bs": "16k", "fio.MB_s": mb_s, "iostat.sda.r_s": mb_s * 64.0}
    row.update(extra)
    write_run(root, experiment, h, {"summary": summary_table(row)})


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "outputs"
    # three configurations of "sched", two seeds of the best one, one failed run
    _run(root, "sched", "a1", 1, "deadline", 128, 100.0)
    _run(root, "sched", "a2", 2, "deadline", 128, 110.0)     # mean 105
    _run(root, "sched", "b1", 1, "noop", 128, 90.0)
    _run(root, "sched", "c1", 1, "cfq", 128, 60.0)
    _run(root, "sched", "d1", 1, "cfq", 4, 0.0, status="failed")
    _run(root, "other", "x1", 1, "noop", 128, 5.0, **{"iostat.sdb.r_s": 1.0})
    return root


def test_runs_view_unions_experiments_and_hive_columns(results):
    con = query.connect(results)
    res = query.run_sql(con, "SELECT experiment, run, config_hash FROM runs ORDER BY run")
    assert [r[1] for r in res.rows] == ["a1", "a2", "b1", "c1", "d1", "x1"]
    assert all(r[1] == r[2] for r in res.rows)
    # a column only one experiment has is NULL elsewhere (union_by_name)
    res = query.run_sql(con, 'SELECT count("iostat.sdb.r_s") FROM runs')
    assert res.rows == [(1,)]


def test_best_ranks_configurations_with_margins(results):
    con = query.connect(results)
    sql, params = query.named(con, "best", experiment="sched", metric="fio.MB_s")
    res = query.run_sql(con, sql, params)
    rows = [dict(zip(res.columns, r)) for r in res.rows]
    assert [r["config"] for r in rows] == ["scheduler=deadline", "scheduler=noop", "scheduler=cfq"]
    assert [r["value"] for r in rows] == [105.0, 90.0, 60.0]
    assert [r["runs"] for r in rows] == [2, 1, 1]             # seeds averaged, failed skipped
    assert rows[0]["margin"] == pytest.approx(15.0)
    assert rows[0]["margin_pct"] == pytest.approx(100 * 15 / 90)
    assert rows[1]["margin"] == pytest.approx(30.0)
    assert rows[2]["margin"] is None


def test_best_ascending_for_lower_is_better(results):
    con = query.connect(results)
    sql, params = query.named(con, "best", experiment="sched", metric="fio.MB_s", ascending=True)
    res = query.run_sql(con, sql, params)
    assert [r[res.columns.index("config")] for r in res.rows][0] == "scheduler=cfq"
    assert res.rows[0][res.columns.index("margin")] == pytest.approx(30.0)


def test_best_needs_a_known_metric(results):
    con = query.connect(results)
    with pytest.raises(query.QueryError, match="no column"):
        query.named(con, "best", experiment="sched", metric="fio.nope")


def test_varying_params_ignore_seed_and_constants(results):
    con = query.connect(results)
    vary = query.varying_params(con, "experiment = $e AND status = 'ok'", {"e": "sched"})
    assert vary == ["block.scheduler"]
    assert query.is_param("block.nr_requests") and not query.is_param("iostat.sda.r_s")
    assert not query.is_param("fio.MB_s") and not query.is_param("status")


def test_cli_sql_csv_and_parquet_export(results, tmp_path, capsys):
    out_csv, out_pq = tmp_path / "r.csv", tmp_path / "r.parquet"
    sql = 'SELECT config_hash, "fio.MB_s" FROM runs WHERE experiment = $experiment ORDER BY 1'
    assert query.main(["--dir", str(results), sql, "--experiment", "sched",
                       "--csv", str(out_csv), "--parquet", str(out_pq)]) == 0
    printed = capsys.readouterr().out
    assert "a1" in printed and "x1" not in printed
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["config_hash"] for r in rows] == ["a1", "a2", "b1", "c1", "d1"]
    assert pq.read_table(out_pq).num_rows == 5


def test_cli_named_query_and_list(results, capsys):
    assert query.main(["--dir", str(results), "best", "--experiment", "sched",
                       "--metric", "fio.MB_s"]) == 0
    out = capsys.readouterr().out
    assert "scheduler=deadline" in out and "margin" in out
    assert query.main(["--list"]) == 0
    listed = capsys.readouterr().out
    for name in ("best", "summary", "failed", "aio_batch"):
        assert name in listed


def test_cli_errors_are_one_line_exit_2(results, tmp_path, capsys):
    assert query.main(["--dir", str(results), "SELECT nope FROM runs"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert query.main(["--dir", str(tmp_path / "empty"), "summary"]) == 2
    assert "no results" in capsys.readouterr().err
    assert query.main(["--dir", str(results), "best", "--metric", "fio.MB_s"]) == 2
    assert "--experiment" in capsys.readouterr().err


@pytest.mark.parametrize("args, expect", [
    ([" "], "error: the query is empty"),
    (["best", "--experiment", "nosuch", "--metric", "fio.MB_s"],
     "error: --experiment: no runs of experiment 'nosuch' under {dir}/ "
     "(experiments with results: other, sched)"),
    (["best", "--experiment", "shed", "--metric", "fio.MB_s"], "(did you mean 'sched'?)"),
    (["summary", "--param", "nosuch=1"], "error: --param nosuch: the query has no $nosuch"),
    (["summary", "--csv", "{tmp}/f/x.csv"], "error: --csv: '{tmp}/f' is not a directory"),
    (["summary", "--csv", "{tmp}"], "error: --csv: '{tmp}' is a directory; give a file name"),
    (["summary", "--parquet", "{tmp}/f/x.parquet"], "error: --parquet: '{tmp}/f' is not a directory"),
], ids=["blank-sql", "unknown-experiment", "experiment-typo", "unknown-param", "csv-under-a-file",
        "csv-a-directory", "parquet-under-a-file"])
def test_bad_input_is_one_line_exit_2_before_any_output(results, tmp_path, capsys, args, expect):
    (tmp_path / "f").write_text("")
    before = sorted(tmp_path.rglob("*"))
    args = [a.format(tmp=tmp_path) for a in args]
    assert query.main(["--dir", str(results), *args]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and expect.format(tmp=tmp_path, dir=results) in err, err
    assert out == "" and sorted(tmp_path.rglob("*")) == before


def test_partial_files_are_invisible(results):
    stray = next(results.glob("experiment=sched/run=a1"))
    (stray / ".tmp-summary-1.parquet.partial").write_bytes(b"half a file")
    con = query.connect(results)
    assert query.run_sql(con, "SELECT count(*) FROM runs").rows == [(6,)]


def test_detail_tables_get_their_own_view(results):
    t = pa.table({"t_s": [0.5, 1.0], "device": ["sda", "sda"], "r_s": [1.0, 2.0]})
    write_run(results, "sched", "a1", {"iostat": t})
    con = query.connect(results)
    assert query.run_sql(con, "SELECT sum(r_s) FROM iostat").rows == [(3.0,)]
    assert query.run_sql(con, "SELECT count(*) FROM runs").rows == [(6,)]
