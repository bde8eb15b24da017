"""E1 through the pipeline at small scale: experiment=lra runs every read-ahead strategy
on both tables and the lra query reads them back; experiment=lra_tuning's best point
is what the DuckDB 'best' query ranks first."""
from __future__ import annotations

import pytest

from pipeline import best, query
from pipeline.run import main

SMALL = ["run.scale=0.005", "hydra/launcher=serial", "results.summary=false"]


def _rows(root, sql="SELECT * FROM runs"):
    res = query.run_sql(query.connect(root), sql)
    return [dict(zip(res.columns, r)) for r in res.rows]


@pytest.fixture(scope="module")
def lra(tmp_path_factory):
    root = tmp_path_factory.mktemp("lra") / "outputs"
    assert main(["-m", "experiment=lra", f"results.dir={root}", *SMALL]) == 0
    return root


def test_lra_runs_every_strategy_on_both_tables(lra):
    rows = _rows(lra)
    assert len(rows) == 10 and all(r["status"] == "ok" for r in rows)
    case = {(r["workload.insert_pattern"], r["workload.read_ahead"],
             r["workload.aio_pages_per_submit"]): r for r in rows}
    frag_linear = case[("user_object", "linear", 1)]
    # (the published scan times and speedup, at full size: tests/experiments/test_published.py)
    for aio in (1, 64):
        lra_run = case[("user_object", "logical", aio)]
        assert lra_run["full_scan.pages_read_secondary_leaf"] == 0
        assert lra_run["full_scan.pages_read_free"] == 0
    assert case[("user_object", "physical", 64)]["full_scan.pages_read_secondary_leaf"] > 0
    seq_none, seq_linear = case[("sequential", "none", 1)], case[("sequential", "linear", 1)]
    assert seq_linear["full_scan.scan_s"] < 0.7 * seq_none["full_scan.scan_s"]
    assert frag_linear["full_scan.table_leaf_adjacent_share"] < 0.2
    assert seq_linear["full_scan.table_leaf_adjacent_share"] > 0.9
    assert frag_linear["iostat.sda.r_s"] > 0


def test_lra_named_query(lra, capsys):
    assert query.main(["--dir", str(lra), "lra"]) == 0
    out = capsys.readouterr().out
    assert "user_object" in out and "sequential" in out and "logical" in out


def test_lra_tuning_best_point_is_ranked_first(tmp_path):
    root = tmp_path / "outputs"
    assert main(["-m", "experiment=lra_tuning", f"results.dir={root}", *SMALL,
                 "workload.innodb_lra_size=1,64", "workload.innodb_lra_sleep=0,50"]) == 0
    rows = _rows(root)
    assert len(rows) == 4
    fastest = min(rows, key=lambda r: r["full_scan.scan_s"])
    con = query.connect(root)
    ranked = best.rank(con, "lra_tuning", "full_scan.scan_s")    # a time: lower is better
    top = dict(zip(ranked.columns, ranked.rows[0]))
    assert top["rank"] == 1 and top["example_run"] == fastest["config_hash"]
    assert fastest["workload.innodb_lra_sleep"] == 0


@pytest.mark.parametrize("override,new", [
    ("workload.innodb_buffer_pool_size=8g", "engine.innodb_buffer_pool_size"),
    ("workload.file_offset=0", "placement.tablespace")])
def test_a_key_of_the_scans_former_pool_is_one_line_naming_the_new_key(
        tmp_path, capfd, monkeypatch, override, new):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    code = main(["experiment=lra", override, f"results.dir={tmp_path / 'out'}",
                 "hydra/launcher=serial"])
    out, err = capfd.readouterr()
    key = override.split("=")[0]
    assert code == 2 and "Traceback" not in out + err
    assert err.strip().splitlines() == [
        f"error: {key}: no longer a key of the scan: set {new}"
        + (" (the .ibd is a file on the filesystem)" if key.endswith("file_offset") else "")]
    assert list(tmp_path.iterdir()) == []
