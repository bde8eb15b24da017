"""pipeline.query over hand-made result trees: views, named queries, best, export."""
from __future__ import annotations

import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import best, query
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


def _best(con, **kw):
    res = best.rank(con, "sched", kw.pop("metric", "fio.MB_s"), **kw)
    return [dict(zip(res.columns, r)) for r in res.rows]


def test_best_ranks_configurations_with_ratios_and_seed_statistics(results):
    rows = _best(query.connect(results))
    assert [r["config"] for r in rows] == ["scheduler=deadline", "scheduler=noop", "scheduler=cfq"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["mean"] for r in rows] == [105.0, 90.0, 60.0]
    assert [r["n"] for r in rows] == [2, 1, 1]             # seeds averaged, failed skipped
    assert rows[0]["std"] == pytest.approx(7.0710678)       # 100 and 110
    assert rows[1]["std"] is None
    # baseline: no sweep YAML for "sched", so the first configuration by value (cfq)
    assert [r["x_baseline"] for r in rows] == pytest.approx([105 / 60, 90 / 60, 1.0])
    assert [r["x_worst"] for r in rows] == pytest.approx([105 / 60, 90 / 60, 1.0])
    assert rows[0]["margin_pct"] == pytest.approx(100 * (105 / 90 - 1))
    assert rows[2]["margin_pct"] is None
    assert rows[0]["example_run"] == "a1"


def test_best_baseline_where_and_direction(results):
    con = query.connect(results)
    rows = _best(con, baseline="scheduler=noop")
    assert [r["x_baseline"] for r in rows] == pytest.approx([105 / 90, 1.0, 60 / 90])
    rows = _best(con, baseline="block.scheduler=noop", order="asc")   # lower is better
    assert [r["config"] for r in rows][0] == "scheduler=cfq"
    assert [r["x_baseline"] for r in rows] == pytest.approx([90 / 60, 1.0, 90 / 105])
    assert rows[0]["x_worst"] == pytest.approx(105 / 60)
    rows = _best(con, where="\"block.scheduler\" <> 'deadline'")
    assert [r["config"] for r in rows] == ["scheduler=noop", "scheduler=cfq"]


@pytest.mark.parametrize("metric, better", [
    ("fio.MB_s", "higher"), ("iostat.sda.r_s", "higher"), ("mysqlslap.tps", "higher"),
    ("myisam_insert.rows_per_s", "higher"), ("fsync_bench.syncs_per_s", "higher"),
    ("dbt2.notpm", "higher"), ("iostat.sda.wrqm_s", "higher"),
    ("full_scan.scan_s", "lower"), ("iostat.sda.await_ms", "lower"),
    ("buffered_write.write_lat_p99_ms", "lower"), ("trace.demerit_ms", "lower"),
    ("trace.mean_response_ns", "lower"), ("mysqlslap.fsyncs_per_trx", None)])
def test_direction_comes_from_the_metric_name(metric, better):
    assert best.direction(metric) == better


def test_best_refuses_to_mix_scales_unless_grouped(results):
    _run(results, "sched", "s1", 1, "noop", 128, 50.0, **{"run.scale": 0.1})
    _run(results, "sched", "s2", 1, "cfq", 128, 40.0, **{"run.scale": 0.1})
    con = query.connect(results)
    with pytest.raises(best.BestError, match=r"2 values of run.scale .* --by run.scale"):
        _best(con)
    rows = _best(con, by="run.scale")
    by_scale = {}
    for r in rows:
        by_scale.setdefault(r["run.scale"], []).append((r["rank"], r["config"]))
    assert by_scale[0.1] == [(1, "scheduler=noop"), (2, "scheduler=cfq")]
    assert [c for _, c in by_scale[None]][0] == "scheduler=deadline"


def test_best_errors_are_one_line(results, capsys):
    d = str(results)
    for args, expect in [
        (["--metric", "fio.MB_sx"], "no column 'fio.MB_sx' in the results (did you mean 'fio.MB_s'?)"),
        (["--metric", "seed"], "cannot tell from its name"),
        (["--metric", "fio.MB_s", "--baseline", "scheduler=bfq"], "no configuration matches"),
        (["--metric", "fio.MB_s", "--baseline", "schedular=noop"], "did you mean"),
        (["--metric", "fio.MB_s", "--asc", "--desc"], "give one"),
    ]:
        assert query.main(["--dir", d, "best", "--experiment", "sched", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and expect in err and err.count("\n") == 1, err
    assert query.main(["--dir", d, "summary", "--by", "run.seed"]) == 2
    assert "only for the best query" in capsys.readouterr().err


def test_best_default_baseline_is_the_sweeps_first_values():
    assert best.sweep_firsts("myisam_nr_requests") == {"run.case": "hdd", "block.nr_requests": "128"}
    assert best.sweep_firsts("group_commit") == {"engine.innodb_support_xa": "true",
                                                 "device.sda.battery_backed": "true",
                                                 "workload.concurrency": "1"}
    assert best.sweep_firsts("nosuch") == {}


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
    assert "scheduler=deadline" in out and "x_baseline" in out
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



@pytest.mark.parametrize("where, expect", [
    ("concurrency = 10", 'error: --where: Binder Error: Referenced column "concurrency" not found'),
    ("foo=1", 'error: --where: Binder Error: Referenced column "foo" not found'),
    ('"workload.bs" = 16', "error: --where: Conversion Error"),
    ("scheduler ==", "error: --where: Parser Error"),
], ids=["unknown-column", "unknown-column-no-spaces", "wrong-type", "syntax"])
@pytest.mark.parametrize("sub", [["best", "--metric", "fio.MB_s"],
                                 ["usl", "--metric", "fio.MB_s", "--x", "block.nr_requests"]],
                         ids=["best", "usl"])
def test_bad_where_is_one_line_naming_the_option(results, tmp_path, capsys, sub, where, expect):
    out_csv = tmp_path / "r.csv"
    assert query.main(["--dir", str(results), sub[0], "--experiment", "sched", *sub[1:],
                       "--where", where, "--csv", str(out_csv)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(expect) and err.count("\n") == 1, err
    assert out == "" and not out_csv.exists()


@pytest.mark.parametrize("args, expect", [
    (["best", "--metric", "fio.MB_s", "--where", "concurrency = 10"],
     'error: --where: Binder Error: Referenced column "concurrency" not found'),
    (["usl", "--metric", "fio.MB_s", "--x", "block.nr_requests", "--where", "foo=1"],
     'error: --where: Binder Error: Referenced column "foo" not found'),
    # a QueryError raised inside pipeline.best (avg of a text column): under ``-m`` the
    # module runs as __main__, and main() must still catch pipeline.query.QueryError
    (["best", "--metric", "workload.bs", "--desc"], "error: Binder Error: No function matches"),
], ids=["best-where", "usl-where", "error-inside-best"])
def test_python_m_pipeline_query_errors_are_one_line(results, args, expect):
    import os
    import subprocess
    import sys

    from .helpers import ROOT

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, "-m", "pipeline.query", "--dir", str(results),
                           "--experiment", "sched", *args], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(expect) and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""

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
