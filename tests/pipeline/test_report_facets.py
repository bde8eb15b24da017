"""Plots for every experiment: one without a style of its own (an ad-hoc sweep, a
user's experiment, ``myisam_nr_requests``) gets panels of its headline metrics faceted
by the parameters that vary, short labels, within 2000 px; every figure has a name of
its own; runs below the valid scale get no published overlay."""
from __future__ import annotations

import struct

import pytest

from pipeline import report
from pipeline.plots import facets


def _rows(**fixed):
    out = []
    for sched in ("noop", "deadline", "cfq"):
        for bs in ("4k", "16k", "64k"):
            kb = int(bs[:-1])
            out.append({"experiment": "my_disk", "config_hash": f"{sched}{bs}", "status": "ok",
                        "run.seed": 0, "run.scale": 1.0, "block.scheduler": sched,
                        "block.read_expire_ms": 500 if sched == "deadline" else None,
                        "workload.bs": bs, "fio.MB_s": 0.23 * kb, "fio.iops": 230.0 - kb,
                        "iostat.sda.await_ms": 4.2 + kb / 100, **fixed})
    return out


def _png_size(path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        return struct.unpack(">II", fh.read(24)[16:24])


@pytest.fixture
def drawn(monkeypatch):
    """The figure facets.draw makes, kept open for inspection (and still saved)."""
    figs = []
    real = facets.save

    def keep(fig, path):
        figs.append((fig.get_size_inches() * facets.DPI, [
            (ax.get_title(), [t.get_text() for t in ax.get_xticklabels()]) for ax in fig.axes]))
        return real(fig, path)

    monkeypatch.setattr(facets, "save", keep)
    return figs


def test_an_experiment_without_a_style_is_faceted_with_short_labels(tmp_path, drawn):
    path = report.draw("my_disk", _rows(), path=tmp_path / "my_disk.png")
    (w, h), axes = drawn[0]
    assert len(axes) == 3 * 3                              # 3 metrics x 3 schedulers
    titles = [t for t, _ in axes]
    assert [t.split("\n")[0] for t in titles[:3]] == ["scheduler=cfq", "scheduler=deadline",
                                                      "scheduler=noop"]
    assert axes[-1][1] == ["bs=4k", "bs=16k", "bs=64k"]     # short names, sizes in order
    assert not any("workload." in t or "block." in t for _, labels in axes for t in labels)
    assert w <= 2000 and h <= 2000
    assert all(v <= 2000 for v in _png_size(path))


def test_a_large_sweep_stays_within_2000_px(tmp_path, drawn):
    rows = [{**r, "config_hash": f"{r['config_hash']}{q}", "device.sda.queue_depth": q,
             "run.seed": 0} for r in _rows() for q in (1, 2, 4, 8, 16, 32, 64, 128)]
    path = report.draw("my_disk", rows, path=tmp_path / "big.png",
                       metrics=["fio.MB_s", "fio.iops", "iostat.sda.await_ms"])
    assert all(v <= 2000 for v in _png_size(path))


def test_myisam_nr_requests_is_drawn_by_its_headline(tmp_path, drawn):
    rows = [{"experiment": "myisam_nr_requests", "config_hash": f"{c}{n}", "status": "ok",
             "run.scale": 1.0, "run.case": c, "block.nr_requests": n,
             "myisam_insert.rows_per_s": 800.0 * (n > 128) + 300, "iostat.sda.w_s": 900.0,
             "iostat.sda.avgrq_sz": 8.0, "iostat.sda.avgqu_sz": 120.0,
             "myisam_insert.stmt_lat_max_ms": 590.0, "fio.MB_s": 1.0}
            for c in ("hdd", "ssd") for n in (128, 100000)]
    report.draw("myisam_nr_requests", rows, path=tmp_path / "e5.png")
    _, axes = drawn[0]
    # meta.headline's first four metrics (rows), one column per case; fio.MB_s is no headline
    assert len(axes) == 4 * 2
    assert axes[0][0].startswith("case=hdd\nrows") and axes[1][0].startswith("case=ssd")
    assert axes[-1][1] == ["nr_requests=128", "nr_requests=100000"]


def test_each_figure_has_a_name_of_its_own(tmp_path, monkeypatch):
    import pipeline.report_group_commit as rgc

    seen = {}
    monkeypatch.setattr(rgc, "load_rows", lambda *a: [{"x": 1}])
    monkeypatch.setattr(rgc, "plot", lambda rows, out: seen.setdefault("out", out))
    assert rgc.main(["--results", str(tmp_path)]) == 0
    assert seen["out"] == str(tmp_path / "report" / "group_commit_tps_by_concurrency.png")
    assert rgc.main(["--results", str(tmp_path), "--metric", "mysqlslap.fsyncs_per_trx"]) == 0
    # pipeline.report's figure of the same sweep: <results>/report/group_commit.png
    assert (tmp_path / "report" / "group_commit.png").name != "group_commit_tps_by_concurrency.png"


def test_no_published_overlay_beside_a_run_below_its_valid_scale(monkeypatch):
    from pipeline import validate

    class Case:
        class spec:
            config_hash = "h1"

    class Ref:
        experiment, derived, published, id, metric, label, unit = (
            "e", False, 10.0, "r1", "m", "l", "u")

    monkeypatch.setattr(report.reference, "load", lambda files: [Ref()])
    monkeypatch.setattr(validate, "plan", lambda refs, scale, d, build: (None, {"r1": Case()}))
    valid = [{"config_hash": "h1", "run.scale": 1.0, "run.below_valid_scale": False}]
    low = [{"config_hash": "h1", "run.scale": 0.1, "run.below_valid_scale": True}]
    assert len(report.reference_overlays("e", valid, [])) == 1
    assert report.reference_overlays("e", low, []) == []


def test_an_ad_hoc_run_name_is_drawn_by_the_headline_its_runs_recorded(tmp_path, monkeypatch):
    # run.name=my_disk_what_if has no YAML: the panels are the meta.headline the runs
    # were made with (their summary's footer), globs expanded
    from pipeline import sink
    from pipeline.job import summary_table

    for r in _rows(experiment="my_disk_what_if"):
        sink.write_run(tmp_path, "my_disk_what_if", r["config_hash"],
                       {"summary": summary_table(r)},
                       {"status": "ok", "headline": "fio.iops,iostat.*.await_ms"})
    seen = []
    monkeypatch.setattr(report, "draw", lambda *a, **k: seen.append(k["metrics"]) or
                        tmp_path / "x.png")
    assert report.main(["--experiment", "my_disk_what_if", "--dir", str(tmp_path),
                        "--no-reference"]) == 0
    assert seen == [["fio.iops", "iostat.sda.await_ms"]]
    seen.clear()       # what the user asks for wins
    assert report.main(["--experiment", "my_disk_what_if", "--dir", str(tmp_path),
                        "--no-reference", "--metric", "fio.MB_s"]) == 0
    assert seen == [["fio.MB_s"]]
