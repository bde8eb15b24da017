"""pipeline.reference: the kind of a row (prediction / calibration / development) and
the parameters a calibration names; the project's table sets both on every row."""
from __future__ import annotations

import pytest

from pipeline import reference
from pipeline.reference import KINDS, ReferenceError

HEADER = "id,experiment,case,overrides,metric,published,unit,tolerance,source,kind,calibrated\n"
ROW = "a,aio_batch,,,iostat.sda.r_s,1,,25%,src"


def read(tmp_path, body: str, header: str = HEADER):
    p = tmp_path / "ref.csv"
    p.write_text(header + body)
    return reference.read(p)


def test_kind_and_calibrated_keys_are_read(tmp_path):
    rows = read(tmp_path, f"{ROW},calibration,fs.wakeup_ns  device.sda.controller_latency_us\n"
                          "b,aio_batch,,,iostat.sda.r_s,1,,25%,src,prediction,\n"
                          "c,aio_batch,,,iostat.sda.r_s,1,,25%,src,development,\n"
                          "d,aio_batch,,,iostat.sda.r_s,1,,25%,src,development,device.sda.members\n")
    assert [(r.kind, r.calibrated) for r in rows] == [
        ("calibration", ("fs.wakeup_ns", "device.sda.controller_latency_us")),
        ("prediction", ()), ("development", ()), ("development", ("device.sda.members",))]


def test_a_file_without_the_kind_column_is_all_predictions(tmp_path):
    rows = read(tmp_path, f"{ROW}\n", header=HEADER.replace(",kind,calibrated", ""))
    assert rows[0].kind == "prediction" and rows[0].calibrated == ()


@pytest.mark.parametrize("cells, expect", [
    ("guess,", "ref.csv:2 (a): kind: expected one of prediction, calibration, development, got 'guess'"),
    (",", "ref.csv:2 (a): kind: empty: one of prediction, calibration, development"),
    ("calibration,", "ref.csv:2 (a): calibrated: empty: a calibration row names the parameter(s)"),
    ("calibration,  ", "ref.csv:2 (a): calibrated: empty"),
    ("prediction,cpu.wakeup_us", "ref.csv:2 (a): calibrated: a prediction has no calibrated parameter"),
    ("calibration,wakeup_us", "ref.csv:2 (a): calibrated: expected config keys"),
    ("calibration,hydra.run.dir", "ref.csv:2 (a): calibrated: expected config keys"),
    ("calibration,cpu.wakeup_us=20", "ref.csv:2 (a): calibrated: expected config keys"),
])
def test_bad_kind_or_calibrated_names_the_row(tmp_path, cells, expect):
    with pytest.raises(ReferenceError) as ex:
        read(tmp_path, f"{ROW},{cells}\n")
    assert str(ex.value).startswith(expect) and "\n" not in str(ex.value), str(ex.value)


def test_calibrated_without_kind_column_is_a_prediction_with_a_parameter(tmp_path):
    with pytest.raises(ReferenceError, match=r"\(a\): calibrated: a prediction has no"):
        read(tmp_path, f"{ROW},cpu.wakeup_us\n", header=HEADER.replace(",kind", ""))


def test_project_table_sets_a_kind_on_every_row():
    files = reference.default_files()
    for f in files:
        header = next(ln for ln in f.read_text().splitlines() if ln.startswith("id,"))
        assert "kind" in header.split(",") and "calibrated" in header.split(","), f
    rows = {r.id: r for r in reference.load(files)}
    assert {r.kind for r in rows.values()} == set(KINDS)
    # what the project knows was fitted (the README's Calibrations table)
    assert rows["E4.x25e.barrier"].kind == "calibration"
    assert "device.sda.flush_metadata_pages" in rows["E4.x25e.barrier"].calibrated
    assert "device.sda.precondition" in rows["E4.x25e.nobarrier"].calibrated
    assert "cpu.wakeup_us" in rows["E2.plugin_vs_builtin.c30"].calibrated
    assert "device.sda.controller_latency_us" in rows["E4.overwrite"].calibrated
    assert "device.sda.members" in rows["E1.aio.1m_x1.MB_s"].calibrated
    assert "workload.insert_pattern" in rows["E1.scan.linear"].calibrated
    assert "device.sda.cache_line_bytes" in rows["E5.hdd.nr128.avgrq_sz"].calibrated
    assert all(r.kind == "development" for i, r in rows.items() if i.startswith("D."))
