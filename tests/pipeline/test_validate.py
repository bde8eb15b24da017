"""python -m pipeline.validate: reference table format, errors naming the row, skipped
rows, tolerances, ratios, deduplicated runs, the report; end to end on Ray as CI runs it."""
from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

from pipeline import reference, validate
from pipeline.reference import ReferenceError, Tolerance

from .helpers import ROOT

HEADER = "id,experiment,case,overrides,metric,published,unit,tolerance,source\n"
# a short aio_batch case (20 ms of reads): a run takes well under a second
FAST = "workload.runtime_s=0.02 workload.ramp_time_s=0"


def write(tmp_path, body: str, name: str = "ref.csv", header: str = HEADER):
    p = tmp_path / name
    p.write_text(header + body)
    return p


def run_main(tmp_path, capsys, *args):
    code = validate.main(["--no-published", "--serial", "--results", str(tmp_path / "out"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- the format --------------------------------------------------------------------------------
def test_project_table_loads_and_every_runnable_row_composes(tmp_path):
    rows = reference.load(reference.default_files())
    ids = {r.id for r in rows}
    assert {"E1.aio.16k_x1.MB_s", "E1.scan.speedup"} <= ids
    cases, where = validate.plan(rows, None, str(tmp_path))
    for r in rows:
        if r.derived:
            continue
        if validate.experiment_exists(r.experiment):
            assert not isinstance(where[r.id], str), r.id
        else:
            assert "no model yet" in where[r.id]
    # rows reading two metrics of one case share its run
    aio = [c for c in cases if c.experiment == "aio_batch"]
    assert len(aio) == 4 and all(len(c.refs) == 2 for c in aio)


@pytest.mark.parametrize("text, ok", [("25%", True), ("2.5 %", True), ("<=2x", True),
                                      (">=0.5x", True), ("info", True), ("25", False),
                                      ("<2x", False), ("<=0x", False), ("", False)])
def test_tolerance_syntax(text, ok):
    if ok:
        Tolerance.parse(text)
    else:
        with pytest.raises(ValueError):
            Tolerance.parse(text)


def test_tolerance_semantics():
    rel = Tolerance.parse("25%")
    assert rel.within(125.0, 100.0) and rel.within(75.0, 100.0)
    assert not rel.within(125.1, 100.0) and not rel.within(74.9, 100.0)
    assert rel.within(float("nan"), 100.0) is False
    at_most = Tolerance.parse("<=2x")
    assert at_most.within(0.2, 0.378) and at_most.within(0.756, 0.378)
    assert not at_most.within(0.757, 0.378)
    at_least = Tolerance.parse(">=0.5x")
    assert at_least.within(50, 100) and not at_least.within(49, 100)
    assert Tolerance.parse("info").within(1, 1000) is None
    assert str(rel) == "25%" and str(at_most) == "<=2x"


@pytest.mark.parametrize("header, body, expect", [
    (HEADER.replace("source", "sauce"), "", "ref.csv:1: unknown column 'sauce'"),
    (HEADER.replace(",source", ""), "", "missing column(s) source"),
    (HEADER, "a,aio_batch,,workload.bs=16k,iostat.sda.r_s,1,,25,src\n",
     "ref.csv:2 (a): tolerance: expected N%"),
    (HEADER, "a,aio_batch,,workload.bs,iostat.sda.r_s,1,,25%,src\n", "ref.csv:2 (a): overrides:"),
    (HEADER, "a,aio_batch,,\"workload.bs=16k,1m\",iostat.sda.r_s,1,,25%,src\n", "is a sweep"),
    (HEADER, "a,aio_batch,,experiment=lra,iostat.sda.r_s,1,,25%,src\n", "the experiment goes in"),
    (HEADER, "a,aio_batch,,,workload.bs,1,,25%,src\n", "is a parameter column, not a metric"),
    (HEADER, "a,aio_batch,,,MB/s,1,,25%,src\n", "metric: expected a column"),
    (HEADER, "a,aio_batch,,,iostat.sda.r_s,,,25%,src\n", "published: empty"),
    (HEADER, "a,aio_batch,,,iostat.sda.r_s,fast,,25%,src\n", "published: not a number"),
    (HEADER, "a,aio_batch,,,iostat.sda.r_s,1,,25%,\n", "source: empty"),
    (HEADER, "a,aio_batch,,,\"ratio(a, b)\",1,,25%,src\n", "cannot use its own row"),
    (HEADER, "a,aio_batch,,,\"ratio(b, c)\",1,,25%,src\n", "ratio operand 'b' is no row id"),
    (HEADER, "a,aio_batch,,,iostat.sda.r_s,1,,25%,src,extra\n", "ref.csv:2 (a): 10 cells, the header has 9"),
])
def test_malformed_rows_give_one_line_naming_the_row(tmp_path, capsys, header, body, expect):
    p = write(tmp_path, body, header=header)
    code, out, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and expect in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, expect", [
    (b"\xff\xfe\x00\x01binary", "ref.csv: not a CSV text file (byte 0 is not UTF-8)"),
    (b"id,experiment\x00\n", "ref.csv: not a CSV text file (it contains NUL bytes)"),
    (HEADER.encode(), "ref.csv: no rows (only the header)"),
    (HEADER.encode() + b"# only a comment\n", "ref.csv: no rows (only the header)"),
], ids=["not-utf8", "nul-bytes", "header-only", "header-and-comments"])
def test_a_reference_file_without_rows_is_one_line(tmp_path, capsys, content, expect):
    p = tmp_path / "ref.csv"
    p.write_bytes(content)
    code, out, err = run_main(tmp_path, capsys, "--reference", str(p), "--out", str(tmp_path / "r"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and expect in err, err
    assert out == "" and not (tmp_path / "out").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize("option, target", [("--out", "f"), ("--out", "f/sub"),
                                            ("--results", "f"), ("--results", "f/sub")])
def test_an_output_directory_that_cannot_be_made_is_one_line_before_running(
        tmp_path, capsys, option, target):
    p = write(tmp_path, f"a,aio_batch,,{FAST},iostat.sda.r_s,1,,info,src\n")
    (tmp_path / "f").write_text("")
    args = ["--no-published", "--serial", "--reference", str(p), "--results", str(tmp_path / "out"),
            option, str(tmp_path / target)]
    code = validate.main(args)
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"error: {option}: ") and err.count("\n") == 1, err
    assert f"'{tmp_path / 'f'}' is not a directory" in err
    assert out == "" and sorted(x.name for x in tmp_path.iterdir()) == ["f", "ref.csv"]


def test_ids_unique_across_files_and_comments_skipped(tmp_path):
    a = write(tmp_path, "# a comment\nx,aio_batch,,,iostat.sda.r_s,1,,25%,src\n", "a.csv")
    b = write(tmp_path, "\nx,aio_batch,,,iostat.sda.r_s,2,,25%,src\n", "b.csv")
    assert [r.line for r in reference.load([a])] == [3]
    with pytest.raises(ReferenceError, match=r"b.csv:3 \(x\): id: duplicate of a.csv:3 \(x\)"):
        reference.load([a, b])


def test_only_selects_patterns_and_pulls_in_ratio_operands(tmp_path):
    rows = reference.load(reference.default_files())
    picked = [r.id for r in reference.select(rows, ["E1.scan.speedup"])]
    assert picked == ["E1.scan.linear", "E1.scan.lra", "E1.scan.speedup"]
    assert all(r.startswith("E1.aio.") for r in
               (x.id for x in reference.select(rows, ["E1.aio.*"])))
    with pytest.raises(ReferenceError, match="matches no row id"):
        reference.select(rows, ["E9.*"])


# -- checks against the configs and the runs ----------------------------------------------------
def test_override_that_does_not_compose_names_the_row_and_key(tmp_path, capsys):
    p = write(tmp_path, f"bad,aio_batch,,workload.no_such_knob=1 {FAST},iostat.sda.r_s,1,,25%,src\n")
    code, _, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 2 and "ref.csv:2 (bad): overrides: workload.no_such_knob" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("metric, expect", [
    ("iostat.sdb.r_s", "devices of this case: sda"),
    ("iostat.sda.reads", "no iostat column 'reads'"),
    ("full_scan.scan_s", "this case's workload is 'fio', not 'full_scan'"),
])
def test_metric_the_case_cannot_report_is_rejected_before_running(tmp_path, capsys, metric, expect):
    p = write(tmp_path, f"m,aio_batch,,{FAST},{metric},1,,25%,src\n")
    code, _, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 2 and "ref.csv:2 (m): metric:" in err and expect in err, err
    assert not (tmp_path / "out").exists()


def test_metric_missing_from_the_run_is_bad_input(tmp_path, capsys):
    p = write(tmp_path, f"m,aio_batch,,{FAST},fio.MB_sec,1,,25%,src\n")
    code, _, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 2 and "(m): metric: the run reports no column 'fio.MB_sec'" in err
    assert "did you mean 'fio.MB_s'" in err


def test_missing_experiment_is_skipped_but_a_near_miss_is_a_typo(tmp_path, capsys):
    p = write(tmp_path, "n,tpce_future,,placement=all_hdd,tpce.tpse,3447.25,,25%,src\n"
                        "r,tpce_future,,,\"ratio(n, n2)\",4.3,x,20%,src\n"
                        "n2,tpce_future,,placement=all_ssd,tpce.tpse,14842.44,,25%,src\n")
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 0
    assert out.count("skipped: ") == 3 and "3 skipped" in out and "0 distinct runs" in out
    typo = write(tmp_path, "t,aio_bach,,,iostat.sda.r_s,1,,25%,src\n", "typo.csv")
    code, _, err = run_main(tmp_path, capsys, "--reference", str(typo))
    assert code == 2 and "(t): experiment: unknown experiment 'aio_bach' (did you mean 'aio_batch'?)" in err


def test_rows_ratios_info_and_exit_status(tmp_path, capsys):
    """Two rows on one case share a run; a ratio of two cases; an info row never fails;
    a row outside its tolerance makes the exit status 1; the report has it all."""
    body = (f"big,aio_batch,64 x 16k,workload.iodepth_batch_submit=64 {FAST},iostat.sda.rMB_s,1100,MB/s,50%,src\n"
            f"big_rs,aio_batch,64 x 16k,workload.iodepth_batch_submit=64 {FAST},iostat.sda.r_s,,r/s,info,src\n"
            f"one,aio_batch,1 x 16k,workload.iodepth_batch_submit=1 {FAST},iostat.sda.rMB_s,160,MB/s,<=100x,src\n"
            "gain,aio_batch,batching gain,,\"ratio(big, one)\",6.8,x,>=2x,src\n"
            f"wrong,aio_batch,1 x 16k,workload.iodepth_batch_submit=1 {FAST},iostat.sda.rMB_s,1e6,MB/s,1%,src\n")
    p = write(tmp_path, body)
    out_dir = tmp_path / "report"
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p), "--out", str(out_dir))
    assert code == 1
    assert "2 distinct runs" in out and "3 within tolerance, 1 outside" in out
    with open(out_dir / "report.csv") as fh:
        got = {r["id"]: r for r in csv.DictReader(fh)}
    assert [got[i]["state"] for i in ("big", "big_rs", "one", "gain", "wrong")] == \
        ["pass", "info", "pass", "pass", "fail"]
    assert got["big"]["config_hash"] == got["big_rs"]["config_hash"] != got["one"]["config_hash"]
    gain = float(got["big"]["simulated"]) / float(got["one"]["simulated"])
    assert float(got["gain"]["simulated"]) == pytest.approx(gain)
    md = (out_dir / "report.md").read_text()
    assert "| wrong |" in md and "![aio_batch](aio_batch.png)" in md
    png = out_dir / "aio_batch.png"
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 20_000
    # the runs are ordinary results: Parquet under --results
    assert len(list((tmp_path / "out").glob("experiment=aio_batch/run=*/summary.parquet"))) == 2


# -- kinds: predictions, calibrations and development rows counted apart -----------------------
KIND_HEADER = HEADER.rstrip("\n") + ",kind,calibrated\n"


def test_each_kind_is_counted_apart_in_summary_report_and_plot(tmp_path, capsys):
    body = (f"p1,aio_batch,,workload.iodepth_batch_submit=64 {FAST},iostat.sda.rMB_s,1100,MB/s,50%,src,prediction,\n"
            f"p2,aio_batch,,workload.iodepth_batch_submit=64 {FAST},iostat.sda.r_s,1,r/s,1%,src,prediction,\n"
            f"c1,aio_batch,,workload.iodepth_batch_submit=1 {FAST},iostat.sda.rMB_s,160,MB/s,<=100x,src,calibration,device.sda.members\n"
            f"c2,aio_batch,,workload.iodepth_batch_submit=1 {FAST},iostat.sda.r_s,,r/s,info,src,calibration,device.sda.members\n"
            "d1,tpce_future,,placement=all_hdd,tpce.tpse,3447.25,,25%,src,development,\n")
    p = write(tmp_path, body, header=KIND_HEADER)
    out_dir = tmp_path / "report"
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p), "--out", str(out_dir))
    assert code == 1                                           # p2 is outside
    assert "prediction: 1 within tolerance, 1 outside, 0 informational, 0 skipped" in out
    assert "calibration: 1 within tolerance, 0 outside, 1 informational, 0 skipped" in out
    assert "development: 0 within tolerance, 0 outside, 0 informational, 1 skipped" in out
    md = (out_dir / "report.md").read_text()
    assert "| prediction | 2 | 1 | 1 | 0 | 0 | 0 |" in md
    assert "| calibration | 2 | 1 | 0 | 1 | 0 | 0 |" in md
    assert "| development | 1 | 0 | 0 | 0 | 1 | 0 |" in md
    assert "| c1 | c1 | calibration |" in md
    assert "Calibrated: `device.sda.members`" in md and "![kinds](kinds.png)" in md
    assert (out_dir / "kinds.png").read_bytes()[:4] == b"\x89PNG"
    with open(out_dir / "report.csv") as fh:
        got = {r["id"]: r for r in csv.DictReader(fh)}
    assert [got[i]["kind"] for i in ("p1", "c1", "d1")] == ["prediction", "calibration", "development"]
    assert got["c1"]["calibrated"] == "device.sda.members" and got["p1"]["calibrated"] == ""


@pytest.mark.parametrize("cells, expect", [
    ("model,", "ref.csv:2 (k): kind: expected one of prediction, calibration, development, got 'model'"),
    ("calibration,", "ref.csv:2 (k): calibrated: empty"),
])
def test_unknown_kind_or_calibration_without_parameter_is_one_line(tmp_path, capsys, cells, expect):
    p = write(tmp_path, f"k,aio_batch,,{FAST},iostat.sda.r_s,1,,25%,src,{cells}\n", header=KIND_HEADER)
    code, out, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {expect}"), err
    assert not (tmp_path / "out").exists()


def test_a_failed_run_is_reported_not_raised(tmp_path, capsys, monkeypatch):
    import pipeline.build as build

    def boom(spec):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(build, "simulate", boom)
    p = write(tmp_path, f"a,aio_batch,,{FAST},iostat.sda.r_s,1,,25%,src\n"
                        "b,aio_batch,,,\"ratio(a, a2)\",1,,25%,src\n"
                        f"a2,aio_batch,,workload.bs=1m {FAST},iostat.sda.r_s,1,,25%,src\n")
    code, out, err = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 1
    assert "run failed: RuntimeError: simulated crash" in out.replace("\n", " ") or \
        "simulated crash" in err
    assert "3 failed runs" in out


# -- end to end, as CI runs it ------------------------------------------------------------------
def test_command_end_to_end_on_ray_at_small_scale(tmp_path):
    """The project's own table (a subset, at a small scale) plus an extra file whose
    ratio row reads two published rows, on a local Ray with 2 CPUs: exit 0 or 1 (small
    scale need not match), the table, report.md and the plot. (aio_batch cases: their
    kernels are compiled - and cached - by the in-process tests above.)"""
    extra = write(tmp_path, "gain,aio_batch,64 vs 1 per io_submit,,"
                            "\"ratio(E1.aio.16k_x64.MB_s, E1.aio.16k_x1.MB_s)\",6.84,x,>=0.5x,test\n"
                            "future,tpce_future,,,tpce.tpse,1,,25%,test\n")
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [x for x in [env.get("PYTHONPATH")] if x])
    out_dir = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.validate", "--reference", str(extra),
         "--only", "E1.aio.16k_*,gain,future", "--scale", "0.02", "--jobs", "2",
         "--results", str(tmp_path / "out"), "--out", str(out_dir)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    for rid in ("E1.aio.16k_x1.MB_s", "E1.aio.16k_x64.r_s", "future", "gain"):
        assert rid in proc.stdout
    assert "6 rows:" in proc.stdout and "1 skipped" in proc.stdout
    assert "2 distinct runs" in proc.stdout
    md = (out_dir / "report.md").read_text()
    assert "| gain |" in md and "--scale 0.02" in md and "skipped: no model yet" in md
    assert (out_dir / "aio_batch.png").read_bytes()[:4] == b"\x89PNG"
    assert len(list((tmp_path / "out").glob("experiment=aio_batch/run=*/summary.parquet"))) == 2


def test_results_of_the_same_code_version_are_reused_unless_rerun(tmp_path, capsys, monkeypatch):
    import pipeline.version as version

    p = write(tmp_path, f"a,aio_batch,,{FAST},iostat.sda.r_s,1,,info,src\n")
    monkeypatch.setattr(version, "code_version", lambda: "git:abc1234")
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 0 and "reused" not in out
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 0 and "(1 reused from earlier runs of this code version)" in out
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p), "--rerun")
    assert code == 0 and "reused" not in out
    monkeypatch.setattr(version, "code_version", lambda: "git:abc1234-dirty.0123456789ab")
    code, out, _ = run_main(tmp_path, capsys, "--reference", str(p))
    assert code == 0 and "reused" not in out                  # other code: runs again


