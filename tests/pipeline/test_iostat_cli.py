"""python -m pipeline.iostat: a run's statistics in iostat -x's text layout."""
from __future__ import annotations

import pytest

import pipeline.version
from pipeline import iostat, query
from pipeline.run import main


def _sweep(root, *extra):
    mp = pytest.MonkeyPatch()
    mp.setattr(pipeline.version, "code_version", lambda: "test:v1")
    try:
        assert main(["-m", f"results.dir={root}", "hydra/launcher=serial", "results.summary=false",
                     "workload.runtime_s=0.2", "workload.iodepth=4", *extra]) == 0
    finally:
        mp.undo()
    return root


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return _sweep(tmp_path_factory.mktemp("iostat") / "out", "workload.bs=16k",
                  "results.details=true", "results.sample_ms=50")


def _parse(text: str) -> list[dict]:
    """Reports back into {header: value} per device line (what a user's parser does)."""
    out, hdr = [], None
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] in ("Device", "Device:"):
            hdr = f[1:]
        elif hdr and len(f) == len(hdr) + 1 and f[0] == "sda":
            out.append(dict(zip(hdr, map(float, f[1:]))))
    return out


def test_intervals_in_the_sysstat12_layout_match_the_detail_table(results, capsys):
    con = query.connect(results)
    rows = query.run_sql(con, "SELECT run, t_s, r_s, rkB_s, util_pct FROM iostat ORDER BY run, t_s").rows
    run = rows[0][0]
    assert iostat.main(["--dir", str(results), "--run", run]) == 0
    out = capsys.readouterr().out
    assert out.count("Device ") == len([r for r in rows if r[0] == run]) >= 4
    parsed = _parse(out)
    assert list(parsed[0])[:6] == ["r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz"]
    mine = [r for r in rows if r[0] == run]
    for p, (_, _, r_s, rkb, util) in zip(parsed, mine):
        assert p["r/s"] == pytest.approx(r_s, abs=0.006)
        assert p["rkB/s"] == pytest.approx(rkb, abs=0.006)
        assert p["%util"] == pytest.approx(util, abs=0.006)
        assert p["rareq-sz"] == pytest.approx(16.0, abs=0.006)   # 16 KB reads


def test_old_layout_and_megabytes(results, capsys):
    assert iostat.main(["--dir", str(results), "--old", "-m"]) == 0
    out = capsys.readouterr().out
    assert "Device:" in out and "avgrq-sz" in out and "svctm" in out and "rMB/s" in out
    assert "%rrqm" not in out
    p = _parse(out)[0]
    assert p["avgrq-sz"] == pytest.approx(32.0, abs=0.006)       # 16 KB in sectors
    assert p["r/s"] * p["svctm"] == pytest.approx(p["%util"] * 10, rel=0.02)


def test_without_details_one_report_over_the_measured_window(tmp_path, capsys):
    root = _sweep(tmp_path / "out", "workload.bs=64k")
    assert iostat.main(["--dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.count("Device ") == 1 and "over the measured window" in out
    con = query.connect(root)
    (r_s, kb), = query.run_sql(con, 'SELECT "iostat.sda.r_s", "iostat.sda.rkB_s" FROM runs').rows
    p = _parse(out)[0]
    assert p["r/s"] == pytest.approx(r_s, abs=0.006) and p["rkB/s"] == pytest.approx(kb, abs=0.006)
    assert p["rareq-sz"] == pytest.approx(64.0, abs=0.006) and p["d/s"] == 0


def test_bad_selection_is_one_line_exit_2(results, capsys):
    assert iostat.main(["--dir", str(results), "--run", "zzzz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no runs of run 'zzzz'") and err.count("\n") == 1
