"""python -m pipeline.report: publication-style plots of any sweep, published values
beside the runs that are reference cases (matched by config hash)."""
from __future__ import annotations

import pytest

from pipeline import reference, report, report_styles, validate
from pipeline.job import summary_table
from pipeline.plots import bars, lines
from pipeline.plots.common import Overlay, sort_key, unit_of, varying
from pipeline.sink import write_run


def is_png(path, min_bytes=15_000) -> bool:
    data = path.read_bytes()
    return data[:4] == b"\x89PNG" and len(data) > min_bytes


def aio_results(root, scale=None):
    """Summary rows of the four reference aio_batch cases (real parameters and config
    hashes, made-up metrics), written as a sweep would write them; plus one run that is
    no reference case."""
    refs = [r for r in reference.load(reference.default_files()) if r.experiment == "aio_batch"]
    other = reference.Reference("x", "aio_batch", refs[0].overrides + ("block=noop",),
                                refs[0].metric, None, reference.Tolerance("info"), "test")
    cases, _ = validate.plan(refs + [other], scale, str(root))
    for i, c in enumerate(cases):
        row = {"experiment": "aio_batch", "config_hash": c.spec.config_hash, "status": "ok",
               **c.spec.params, "iostat.sda.rMB_s": 100.0 * (i + 1), "iostat.sda.r_s": 1000.0 * (i + 1)}
        write_run(root, "aio_batch", c.spec.config_hash, {"summary": summary_table(row)})
    return cases


def test_command_line_overlays_published_values_on_reference_cases(tmp_path, capsys):
    """A sweep at scale 0.5 (reference rows are composed at the sweep's own scale)."""
    assert len(aio_results(tmp_path, scale=0.5)) == 5
    out = tmp_path / "aio.png"
    assert report.main(["--experiment", "aio_batch", "--results", str(tmp_path), "--out", str(out)]) == 0
    # 5 runs, 4 of them reference cases with 2 published values each (MB/s, r/s)
    assert "(5 runs, 8 published values)" in capsys.readouterr().out
    assert is_png(out)
    rows = report.load_rows(tmp_path, "aio_batch")
    assert len(rows) == 5 and {r["run.scale"] for r in rows} == {0.5}
    assert {"block.scheduler", "workload.bs", "workload.iodepth_batch_submit"} <= set(varying(rows))


def test_an_out_name_without_a_suffix_gets_png(tmp_path, capsys):
    aio_results(tmp_path, scale=0.5)
    assert report.main(["--experiment", "aio_batch", "--results", str(tmp_path),
                        "--out", str(tmp_path / "aio")]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'aio.png'} (")
    assert is_png(tmp_path / "aio.png") and not (tmp_path / "aio").exists()


def test_no_runs_is_an_error(tmp_path, capsys):
    assert report.main(["--experiment", "aio_batch", "--results", str(tmp_path)]) == 2
    assert "no ok runs of experiment 'aio_batch'" in capsys.readouterr().err


@pytest.mark.parametrize("args, expect", [
    (["--experiment", "aio_bach"], "--experiment: no ok runs of experiment 'aio_bach' under "
                                   "{res}/ (did you mean 'aio_batch'?)"),
    (["--experiment", "nosuch"], "(experiments with results: aio_batch)"),
    (["--results", "{tmp}/nosuch"], "--results: no such directory '{tmp}/nosuch'"),
    (["--results", "{tmp}/f"], "--results: '{tmp}/f' is not a directory"),
    (["--metric", "iostat.sda.rMBs"], "--metric: the runs have no column 'iostat.sda.rMBs' "
                                      "(did you mean 'iostat.sda.rMB_s'?)"),
    (["--metric", "workload.bs"], "--metric: 'workload.bs' is not a number (got '"),   # a row's bs
    (["--reference", "{tmp}/nosuch.csv"], "{tmp}/nosuch.csv: cannot read: No such file"),
    (["--reference", "{tmp}/f"], "error: f: no header row"),
    (["--out", "{tmp}/d"], "--out: '{tmp}/d' is a directory; give a file name"),
    (["--out", "{tmp}/f/a.png"], "--out: '{tmp}/f' is not a directory"),
    (["--where", "nosuch = 1"], "--where: Binder Error"),
    (["--where", "\"block.scheduler\" = 'cfq'"],
     "--where: no ok run of experiment 'aio_batch' where \"block.scheduler\" = 'cfq'"),
], ids=["experiment-typo", "unknown-experiment", "results-missing", "results-a-file",
        "unknown-metric", "parameter-as-metric", "reference-missing", "reference-empty",
        "out-a-directory", "out-under-a-file", "where-unknown-column", "where-no-run"])
def test_bad_command_line_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args,
                                                                      expect):
    res = tmp_path / "res"
    aio_results(res)
    (tmp_path / "f").write_text("")
    (tmp_path / "d").mkdir()
    before = sorted(tmp_path.rglob("*"))
    args = [a.format(tmp=tmp_path) for a in args]
    code = report.main(["--experiment", "aio_batch", "--results", str(res), *args])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert expect.format(tmp=tmp_path, res=res) in err, err
    assert out == "" and sorted(tmp_path.rglob("*")) == before


def _rows(n_conc=(1, 5, 10, 30)):
    rows = []
    for proto, base in (("mysql51_builtin", 5000.0), ("innodb_plugin_104", 4000.0)):
        for c in n_conc:
            tps = base if proto == "mysql51_builtin" else base * min(c, 8)
            rows.append({"config_hash": f"{proto}-{c}", "engine.commit_protocol": proto,
                         "workload.concurrency": c, "run.seed": 0, "mysqlslap.tps": tps,
                         "mysqlslap.fsyncs_per_trx": 2.0 if proto == "mysql51_builtin" else 2.0 / c})
    return rows


def test_lines_style_draws_series_and_published_points(tmp_path):
    rows = _rows()
    ov = [Overlay("mysql51_builtin-30", "mysqlslap.fsyncs_per_trx", 2.0, "xa=1", "")]
    path = report.draw("group_commit", rows, overlays=ov, path=tmp_path / "gc.png")
    assert is_png(path)


def test_unknown_experiment_gets_bars_of_its_headline_metrics(tmp_path):
    rows = [{"config_hash": f"h{i}", "block.scheduler": s, "fio.MB_s": 10.0 * i, "fio.iops": 0.0,
             "iostat.sda.await_ms": 1.0 + i} for i, s in enumerate(("noop", "deadline", "cfq"))]
    path = report.draw("some_sweep", rows, path=tmp_path / "s.png")
    assert is_png(path)
    assert report._panels(report.style_for("some_sweep"), rows, [], None) == \
        ["fio.MB_s", "iostat.sda.await_ms"]   # fio.iops is 0 everywhere: left out
    with pytest.raises(ValueError, match="no metric to plot"):
        report.draw("some_sweep", [{"config_hash": "h", "x.y": "text"}], path=tmp_path / "n.png")


def test_bars_with_hue_and_published_marks(tmp_path):
    rows = [{"config_hash": f"{ra}-{p}", "workload.read_ahead": ra, "workload.insert_pattern": p,
             "workload.aio_pages_per_submit": 64 if ra == "logical" else 1,
             "full_scan.scan_s": t * (1 if p == "user_object" else 0.2)}
            for ra, t in (("linear", 650.0), ("logical", 80.0)) for p in ("user_object", "sequential")]
    ov = [Overlay("linear-user_object", "full_scan.scan_s", 655.0, "", "s")]
    path = report.draw("lra", rows, overlays=ov, path=tmp_path / "lra.png")
    assert is_png(path)


def test_bar_groups_average_seeds_and_sort_sizes():
    rows = [{"config_hash": f"{bs}{s}", "workload.bs": bs, "run.seed": s, "m.x": v}
            for bs, s, v in (("1m", 0, 4.0), ("16k", 0, 1.0), ("1m", 1, 6.0), ("16k", 1, 3.0))]
    g = bars._groups(rows, "m.x", lambda r: r["workload.bs"], None)
    assert list(g) == ["16k", "1m"]
    assert g["1m"][None][0] == 5.0 and g["16k"][None][1] == {"16k0", "16k1"}
    assert sort_key("16k") < sort_key("1m") < sort_key("2g") < sort_key("linear")


@pytest.mark.parametrize("metric, unit", [("iostat.sda.rMB_s", "MB/s"), ("iostat.sda.r_s", "r/s"),
                                          ("full_scan.scan_s", "s"), ("mysqlslap.tps", "trx/s"),
                                          ("iostat.sda.await_ms", "ms"),
                                          ("fsync_bench.syncs_per_s", "per s"),
                                          ("iostat.sdb.f_s", "f/s"), ("iostat.sdb.d_s", "d/s")])
def test_units_from_metric_names(metric, unit):
    assert unit_of(metric)[1] == unit


def test_panel_titles_of_iostat_columns_name_the_device():
    from pipeline.plots.common import panel_title

    assert panel_title("iostat.sdb.f_await_ms") == "sdb f_await_ms (ms)"
    assert panel_title("iostat.sda.r_s") == "sda reads completed (r/s)"
    assert panel_title("mysqlslap.tps") == "transactions (trx/s)"


def test_lines_module_directly(tmp_path):
    path = lines.draw(_rows(), "workload.concurrency", ["mysqlslap.tps"], tmp_path / "l.png", "t")
    assert is_png(path, 10_000)


def test_cdf_style_reads_the_requests_detail_tables(tmp_path):
    """disk_validation: one panel per drive from each run's `requests` table."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(1)
    rows = []
    for drive in ("atlas10k", "cheetah9LP"):
        measured = rng.gamma(2.0, 2e6, 2000).astype(np.int64)
        simulated = (measured * rng.normal(1.0, 0.05, 2000)).astype(np.int64)
        row = {"experiment": "disk_validation", "config_hash": f"h_{drive}", "status": "ok",
               "run.case": drive, "trace.demerit_ms": 0.1, "trace.disksim_demerit_ms": 0.2}
        write_run(tmp_path, "disk_validation", row["config_hash"],
                  {"summary": summary_table(row),
                   "requests": pa.table({"measured_ns": measured, "response_ns": simulated})})
        rows.append(row)
    assert report_styles.needs_details("disk_validation")
    path = report.draw("disk_validation", report.load_rows(tmp_path, "disk_validation"),
                       path=tmp_path / "cdf.png", results_dir=tmp_path)
    assert is_png(path)
    with pytest.raises(ValueError, match="requests table"):
        report.draw("disk_validation", [dict(rows[0], config_hash="missing")],
                    path=tmp_path / "x.png", results_dir=tmp_path)


def test_a_published_figure_of_no_single_run_is_a_level_across_its_panel(tmp_path, monkeypatch):
    # dbt2_ssd_history varies what E3's publication did not give (the X25-E's history):
    # the published all-SSD NOTPM is a dashed line, from the reference table
    published = {r.id: r.published for r in reference.load(reference.default_files())}
    rows = [{"config_hash": f"{p}{f}", "device.sdb.precondition": p,
             "device.sdb.precondition_span_fraction": f, "dbt2.notpm": n,
             "devstat.sdb.write_amplification": wa}
            for p, f, n, wa in (("sequential", 0.15, 45_000.0, 1.0), ("random", 0.15, 43_000.0, 1.0),
                                ("random", 1.0, 5_000.0, 5.1))]
    drawn = {}
    real_save = lines.save

    def keep(fig, path):
        drawn["fig"] = fig
        return real_save(fig, path)

    monkeypatch.setattr(lines, "save", keep)
    path = report.draw("dbt2_ssd_history", rows, path=tmp_path / "h.png")
    assert is_png(path)
    notpm, wa = drawn["fig"].axes[:2]
    levels = [ln for ln in notpm.get_lines() if ln.get_linestyle() == "--"]
    assert len(levels) == 1 and set(levels[0].get_ydata()) == {published["E3.notpm.all_ssd"]}
    assert "published" in levels[0].get_label()
    assert not [ln for ln in wa.get_lines() if ln.get_linestyle() == "--"]
    report.draw("dbt2_ssd_history", rows, path=tmp_path / "n.png", levels={})
    notpm = drawn["fig"].axes[0]                        # --no-reference: no level
    assert not [ln for ln in notpm.get_lines() if ln.get_linestyle() == "--"]


def test_runs_sharing_a_label_are_named_by_what_differs_on_every_run_of_it():
    """Two runs with one label at one x (a what-if override beside the case as shipped)
    get the differing parameter in their names - and so does the label's run at another
    x, so its line keeps one name; a label no run shares stays as it was."""
    from pipeline.plots.common import distinguish

    rows = [{"run.case": "a", "workload.threads": 1, "device.sda.write_back": True},
            {"run.case": "a", "workload.threads": 1, "device.sda.write_back": False},
            {"run.case": "a", "workload.threads": 2, "device.sda.write_back": True},
            {"run.case": "b", "workload.threads": 1, "device.sda.write_back": True}]
    named = distinguish(lambda r: r["run.case"], rows, key=lambda r: r["workload.threads"])
    assert [named(r) for r in rows] == ["a, write_back=True", "a, write_back=False",
                                        "a, write_back=True", "b"]


def test_where_selects_the_runs_drawn_and_mixed_code_versions_are_said(tmp_path, capsys):
    """``--where`` (SQL over any column) selects the runs of any plot; runs of more than
    one code version drawn together are named on stderr and in the figure's title."""
    cases = aio_results(tmp_path, scale=0.5)
    out = tmp_path / "aio.png"
    assert report.main(["--experiment", "aio_batch", "--results", str(tmp_path), "--out",
                        str(out), "--where", "\"block.scheduler\" = 'noop'"]) == 0
    o, err = capsys.readouterr()
    assert "(1 runs," in o and err == ""
    for version in ("git:0000000", "git:1111111"):      # the same case, two code versions
        row = {"experiment": "aio_batch", "config_hash": version[4:], "status": "ok",
               **cases[0].spec.params, "code_version": version,
               "iostat.sda.rMB_s": 1.0, "iostat.sda.r_s": 1.0}
        write_run(tmp_path, "aio_batch", version[4:], {"summary": summary_table(row)})
    rows = report.load_rows(tmp_path, "aio_batch")
    assert report.main(["--experiment", "aio_batch", "--results", str(tmp_path),
                        "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: runs of 2 code versions: git:0000000, git:1111111")
    assert report.version_note(rows).startswith("runs of 2 code versions")
