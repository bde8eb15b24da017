"""Figures of scaled runs print the scale: report PNG titles, the E2 report, and say so
when the runs are below their experiment's valid scale."""
from __future__ import annotations

from pipeline import report
from pipeline.plots import common
from pipeline.report_group_commit import plot


def _rows(scale, below):
    return [{"config_hash": f"h{c}", "run.scale": scale, "run.below_valid_scale": below,
             "workload.concurrency": c, "engine.commit_protocol": "mysql51_builtin",
             "mysqlslap.tps": 100.0 * c, "mysqlslap.fsyncs_per_trx": 2.0} for c in (1, 5)]


def test_scale_note():
    assert common.scale_note(_rows(0.1, False)) == "run.scale 0.1"
    assert common.scale_note(_rows(1.0, False)) == "run.scale 1 (full size)"
    low = common.scale_note(_rows(0.05, True))
    assert low.startswith("run.scale 0.05 - below the experiment's valid scale")
    assert common.scale_note(_rows(0.1, False) + _rows(0.5, False)) == "run.scale 0.1, 0.5"
    assert common.scale_note([{"x": 1}]) == ""


def _capture_titles(monkeypatch):
    seen = []
    real = common.finish

    def finish(fig, title, notes=()):
        seen.append(title)
        return real(fig, title, notes)

    for mod in ("bars", "lines"):
        monkeypatch.setattr(f"pipeline.plots.{mod}.finish", finish)
    return seen


def test_report_titles_print_the_scale(tmp_path, monkeypatch):
    seen = _capture_titles(monkeypatch)
    report.draw("group_commit", _rows(0.02, True), path=tmp_path / "gc.png")
    rows = [dict(r, **{"fsync_bench.syncs_per_s": 5.0, "fs.nobarrier": n}) for r, n in
            zip(_rows(0.01, False), (False, True))]
    report.draw("fsync_barrier", rows, path=tmp_path / "fb.png")
    assert "run.scale 0.02 - below the experiment's valid scale" in seen[0]
    assert seen[1].endswith("\nrun.scale 0.01")
    # the derived flag is no label of its own
    assert "run.below_valid_scale" not in common.varying(_rows(0.1, False) + _rows(0.5, True))


def test_group_commit_report_prints_the_scale(tmp_path, monkeypatch):
    titles = []
    monkeypatch.setattr("pipeline.report_group_commit.save",
                        lambda fig, path: titles.append(fig._suptitle.get_text()) or path)
    rows = [{"case": "5.1 built-in", "split": "", "concurrency": c, "tps": 1.0 * c,
             "run.scale": 0.02, "run.below_valid_scale": False} for c in (1, 5)]
    plot(rows, tmp_path / "e2.png")
    assert titles == ["run.scale 0.02"]
