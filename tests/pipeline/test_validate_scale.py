"""pipeline.validate compares a row with its published figure only at a scale declared
valid for its experiment (meta.min_scale): below it the row is shown with its value,
marked "not compared", and counted neither within nor outside tolerance."""
from __future__ import annotations

from pipeline import validate

from .test_validate import write

# fsync_barrier (xfs on the X25-E, nobarrier) with a declared min_scale of 0.5; a run of
# 0.1 is below it. 2,000 x scale fsyncs: well under a second of CPU.
ROWS = ("nb,fsync_barrier,nobarrier,fs.nobarrier=true meta.min_scale=0.5,"
        "fsync_bench.syncs_per_s,5300,writes/s,25%,src\n"
        "far,fsync_barrier,nobarrier (far off),fs.nobarrier=true meta.min_scale=0.5,"
        "fsync_bench.syncs_per_s,1,writes/s,25%,src\n"
        "r,fsync_barrier,ratio,,\"ratio(nb, far)\",5300,x,25%,src\n")


def _run(tmp_path, capsys, scale: str):
    p = write(tmp_path, ROWS)
    code = validate.main(["--no-published", "--serial", "--results", str(tmp_path / "out"),
                          "--out", str(tmp_path / f"report{scale}"), "--reference", str(p),
                          "--scale", scale])
    return code, capsys.readouterr().out


def test_rows_below_the_valid_scale_are_shown_but_not_compared(tmp_path, capsys):
    code, out = _run(tmp_path, capsys, "0.1")
    text = " ".join(out.split())
    assert "not compared: run.scale 0.1 below the valid scale 0.5" in text
    assert "0 within tolerance, 0 outside" in text and "3 skipped" in text
    assert code == 0      # the far-off row (published 1 writes/s) is not a failure here
    md = (tmp_path / "report0.1" / "report.md").read_text()
    assert "not compared: run.scale 0.1 below the valid scale 0.5" in md


def test_rows_at_the_valid_scale_are_compared(tmp_path, capsys):
    code, out = _run(tmp_path, capsys, "0.5")
    assert "not compared" not in out
    assert "1 within tolerance, 2 outside" in " ".join(out.split())
    assert code == 1
