"""experiment=flushing's plot: throughput and checkpoint age vs time, one line per
algorithm, one column per device, from each run's `engine` detail table."""
from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline import report
from pipeline.job import summary_table
from pipeline.sink import write_run

from .test_report import is_png


def _write(root, case, tps, ages, preflush=None, **params):
    row = {"experiment": "flushing", "config_hash": "-".join([case.replace("/", "-"),
                                                              *map(str, params.values())]),
           "status": "ok", "run.scale": 1.0, "run.case": case,
           "sysbench.tps": sum(tps) / len(tps), **params}
    cols = {"t_s": [float(i + 1) for i in range(len(tps))], "trx": tps,
            "flushed_list": [t // 2 for t in tps], "flushed_lru": [0] * len(tps),
            "flushed_single": [0] * len(tps), "checkpoint_age": ages,
            "max_checkpoint_age": [1000] * len(tps)}
    if preflush is not None:        # the columns of runs since 0602bc2
        cols.update(flushed_preflush=preflush, flushed_sync=[0] * len(tps))
    engine = pa.table(cols)
    write_run(root, "flushing", row["config_hash"],
              {"engine": engine, "summary": summary_table(row)})


def _saved(monkeypatch, of) -> list:
    """Each series plot saved from now on appends ``of(figure)`` here."""
    from pipeline.plots import series

    drawn = []
    real = series.save

    def keep(fig, path):
        drawn.append(of(fig))
        return real(fig, path)
    monkeypatch.setattr(series, "save", keep)
    return drawn


def _linestyles_drawn(monkeypatch) -> list:
    """Each series plot saved from now on appends the line styles of its lines here."""
    return _saved(monkeypatch, lambda fig: [ln.get_linestyle() for ax in fig.axes
                                            for ln in ax.get_lines()])


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


def test_bp_ratio_draws_the_lru_share_beside_each_pool(tmp_path, monkeypatch):
    """experiment=bp_ratio: one line per pool size, the pages written from the LRU list
    dashed beside the pages flushed; flushing's plot has no dashed lines."""
    drawn = _linestyles_drawn(monkeypatch)
    for pool, lru in (("130M", 300), ("520M", 0)):
        row = {"experiment": "bp_ratio", "config_hash": pool, "status": "ok",
               "run.scale": 1.0, "engine.innodb_buffer_pool_size": pool}
        engine = pa.table({"t_s": [1.0, 2.0], "trx": [400, 400], "flushed_list": [50, 50],
                           "flushed_lru": [lru, lru], "flushed_single": [0, 0],
                           "checkpoint_age": [10, 20], "max_checkpoint_age": [1000, 1000]})
        write_run(tmp_path, "bp_ratio", pool, {"engine": engine, "summary": summary_table(row)})
    out = tmp_path / "bp_ratio.png"
    assert report.main(["--experiment", "bp_ratio", "--results", str(tmp_path),
                        "--out", str(out)]) == 0
    assert is_png(out)
    assert report.style_for("bp_ratio").label({"engine.innodb_buffer_pool_size": "130M"}) \
        == "pool 130M"
    assert drawn[-1].count("--") == 2                   # one LRU line per pool
    _write(tmp_path, "hdd/percona_estimate", [400] * 4, [500] * 4)
    assert report.main(["--experiment", "flushing", "--results", str(tmp_path),
                        "--out", str(tmp_path / "f.png")]) == 0
    assert drawn[-1].count("--") == 0


def test_series_are_named_in_order_of_the_sizes_in_their_labels():
    from pipeline.plots.series import _natural

    names = ["pool 2G", "pool 1440M", "pool 130M", "pool 520M", "mysql56_page_cleaner",
             "mysql55_native"]
    assert sorted(names, key=_natural) == ["mysql55_native", "mysql56_page_cleaner",
                                           "pool 130M", "pool 520M", "pool 1440M", "pool 2G"]


def test_what_user_threads_flushed_is_dotted_where_they_flushed(tmp_path, monkeypatch):
    """The middle panel dots, per run, the flush-list pages user threads wrote (preflush,
    sync point) - only for runs where they wrote any, and runs from before those
    columns existed still draw."""
    drawn = _linestyles_drawn(monkeypatch)
    _write(tmp_path, "hdd/mysql55_native", [500, 0, 500, 0], [800, 940, 600, 940],
           preflush=[0, 250, 0, 250])
    _write(tmp_path, "hdd/percona_estimate", [400] * 4, [500] * 4, preflush=[0] * 4)
    _write(tmp_path, "ssd/percona_none", [900] * 4, [300] * 4)        # an older run
    assert report.main(["--experiment", "flushing", "--results", str(tmp_path),
                        "--out", str(tmp_path / "f.png")]) == 0
    assert drawn[-1].count(":") == 1 + 2 * 2    # the native run, the two points per column


def test_a_what_if_beside_the_same_case_is_a_line_of_its_own(tmp_path, monkeypatch):
    """Runs of one case that differ by an override (here the HDD controller's write-back
    cache off, next to the case as shipped) are told apart in the legend and by colour,
    not drawn as two lines of one name; a run alone keeps its plain name."""
    drawn = _saved(monkeypatch, lambda fig: {ln.get_label(): ln.get_color()
                                             for ln in fig.axes[0].get_lines()})
    for write_back, tps in ((True, 800), (False, 400)):
        _write(tmp_path, "hdd/percona_keep_average", [tps] * 4, [500] * 4,
               **{"device.sda.write_back": write_back})
    _write(tmp_path, "hdd/percona_estimate", [700] * 4, [500] * 4,
           **{"device.sda.write_back": False})
    assert report.main(["--experiment", "flushing", "--results", str(tmp_path),
                        "--out", str(tmp_path / "f.png")]) == 0
    lines = drawn[-1]
    assert set(lines) == {"percona_keep_average, write_back=True",
                          "percona_keep_average, write_back=False", "percona_estimate"}
    assert len(set(lines.values())) == 3


def test_series_draws_the_engine_tables_of_any_experiment_on_the_server(tmp_path, capsys,
                                                                        monkeypatch):
    """--series: E3's runs (a bars experiment) drawn per second from their `engine`
    tables, one line per placement named as the bars name it, the x axis in seconds for
    a run under two minutes; a run without the table, --metric or --usl beside it, are
    one-line errors with exit 2."""
    labels = _saved(monkeypatch, lambda fig: ([ln.get_label() for ln in fig.axes[0].get_lines()],
                                              fig.axes[2].get_xlabel()))
    for case, tps in (("all_hdd", [480, 100, 140]), ("all_ssd", [1300, 1100, 1150])):
        row = {"experiment": "dbt2_placement", "config_hash": case, "status": "ok",
               "run.scale": 0.02, "run.case": case, "dbt2.notpm": 1.0}
        engine = pa.table({"t_s": [1.0, 2.0, 3.0], "trx": tps, "flushed_list": [50] * 3,
                           "flushed_lru": [10] * 3, "flushed_single": [5] * 3,
                           "checkpoint_age": [700, 710, 720],
                           "max_checkpoint_age": [1000] * 3})
        write_run(tmp_path, "dbt2_placement", case,
                  {"engine": engine, "summary": summary_table(row)})
    assert report.main(["--experiment", "dbt2_placement", "--results", str(tmp_path),
                        "--series"]) == 0
    out = tmp_path / "report" / "dbt2_placement_series.png"
    assert is_png(out)
    assert capsys.readouterr().out.startswith(f"{out} (2 runs, 0 published values)")
    names, xlabel = labels[-1]
    assert [n for n in names if not n.startswith("_")] == ["all_hdd", "all_ssd"]
    assert xlabel == "simulated time (s)"
    # the experiment's own plot is still the bars
    assert report.main(["--experiment", "dbt2_placement", "--results", str(tmp_path)]) == 0
    assert (tmp_path / "report" / "dbt2_placement.png").exists()
    capsys.readouterr()
    for extra, key in ((["--metric", "dbt2.notpm"], "--series"), (["--usl"], "--series")):
        assert report.main(["--experiment", "dbt2_placement", "--results", str(tmp_path),
                            "--series", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and key in err, err
    row = {"experiment": "dbt2_placement", "config_hash": "bare", "status": "ok",
           "run.scale": 0.02, "run.case": "all_ssd", "dbt2.notpm": 1.0}
    bare = tmp_path / "bare"
    write_run(bare, "dbt2_placement", "bare", {"summary": summary_table(row)})
    assert report.main(["--experiment", "dbt2_placement", "--results", str(bare),
                        "--series"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.details=true" in err, err
