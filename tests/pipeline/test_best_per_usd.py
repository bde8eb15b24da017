"""``best`` per dollar: the ranking of a throughput per USD of the run's storage differs
from the raw one where the prices say it should (two made-up prices), and the CLI
prints both tables."""
from __future__ import annotations

import pytest

from pipeline import best, query
from pipeline.job import summary_table
from pipeline.sink import write_run


def _run(root, h, case, redo_dev, notpm, cost):
    row = {"experiment": "place", "config_hash": h, "code_version": "test", "seed": 0,
           "status": "ok", "error": None, "sim_seconds": 1.0, "wall_seconds": 0.5,
           "events_processed": 10, "run.seed": 0, "run.case": case,
           "placement.redo_log": redo_dev, "dbt2.notpm": notpm, "storage.cost_usd": cost}
    write_run(root, "place", h, {"summary": summary_table(row)})


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "outputs"
    # the fast placement costs four times as much for 1.5x the NOTPM
    _run(root, "f1", "two_ssd", "sdc", 15000.0, 1600.0)
    _run(root, "s1", "one_ssd", "sdb", 10000.0, 400.0)
    _run(root, "h1", "hdd", "sda", 4000.0, 1000.0)
    return root


def _rows(res):
    return [dict(zip(res.columns, r)) for r in res.rows]


def test_the_per_dollar_ranking_follows_the_prices(results):
    con = query.connect(results)
    raw = _rows(best.rank(con, "place", "dbt2.notpm"))
    per = _rows(best.rank(con, "place", "dbt2.notpm", per_usd=True))
    assert [r["config"] for r in raw] == ["case=two_ssd redo_log=sdc", "case=one_ssd redo_log=sdb",
                                          "case=hdd redo_log=sda"]
    assert raw[0]["margin_pct"] == pytest.approx(50.0)
    assert [r["config"] for r in per] == ["case=one_ssd redo_log=sdb", "case=two_ssd redo_log=sdc",
                                          "case=hdd redo_log=sda"]
    assert [r["mean"] for r in per] == pytest.approx([25.0, 9.375, 4.0])
    assert per[0]["margin_pct"] == pytest.approx(100 * (25 / 9.375 - 1))
    # --where on a parameter column: only the placements with the redo log off sda
    per = _rows(best.rank(con, "place", "dbt2.notpm", where="\"placement.redo_log\" <> 'sda'",
                          per_usd=True))
    assert [r["config"] for r in per] == ["case=one_ssd redo_log=sdb", "case=two_ssd redo_log=sdc"]
    assert best.per_usd_applies(con, "place", "dbt2.notpm")
    assert not best.per_usd_applies(con, "place", "dbt2.notpm", order="asc")


def test_the_cli_prints_the_raw_and_the_per_dollar_table(results, capsys):
    assert query.main(["best", "--experiment", "place", "--metric", "dbt2.notpm",
                       "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "place: dbt2.notpm" in out and "per USD (storage.cost_usd)" in out
    assert out.index("per USD") > out.index("case=two_ssd")
