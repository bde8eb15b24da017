"""A run's identity covers the content of the files it reads (``pipeline.inputs``).

A trace edited after a sweep (16 KB requests rewritten as 1 MB) must be a new run on
the next sweep, not "done already" with the old row kept.
"""
from __future__ import annotations

import pytest

import pipeline.version
from pipeline import inputs, query
from pipeline.run import main
from pipeline.spec import validate
from tests.experiments.helpers import compose

from .helpers import parquet_files


def _trace(path, size_bytes: int, n: int = 40) -> None:
    rows = [f"{i * 100},R,{(i * 7919 % 1000) * 1048576},{size_bytes}" for i in range(n)]
    path.write_text("time_us,op,offset_bytes,size_bytes\n" + "\n".join(rows) + "\n")


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:v1")


def _sweep(root, trace):
    return main(["-m", f"results.dir={root}", "hydra/launcher=serial", "workload=trace",
                 f"workload.iolog={trace}", "results.summary=false"])


def test_a_trace_edited_between_two_sweeps_is_a_new_run(tmp_path, capfd):
    root, trace = tmp_path / "out", tmp_path / "t.csv"
    _trace(trace, 16384)
    assert _sweep(root, trace) == 0
    assert "1 ok, 0 failed, 0 skipped" in capfd.readouterr().err
    _trace(trace, 1 << 20)                       # same path, 1 MB requests now
    assert _sweep(root, trace) == 0
    err = capfd.readouterr().err
    assert "1 ok, 0 failed, 0 skipped" in err, err   # ran again, nothing reused
    assert len(parquet_files(root)) == 2
    con = query.connect(root)
    res = query.run_sql(con, 'SELECT "workload.iolog_sha256", "trace.mean_response_ns" '
                             'FROM runs ORDER BY "trace.mean_response_ns"')
    (d16, t16), (d1m, t1m) = res.rows
    assert d16 != d1m and t1m > 2 * t16          # 1 MB transfers take longer
    _sweep(root, trace)                          # unchanged file: reused
    assert "0 ok, 0 failed, 1 skipped" in capfd.readouterr().err


def test_the_digest_column_is_the_content_hash_and_ignores_the_path(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _trace(a, 4096)
    b.write_bytes(a.read_bytes())
    sa = validate(compose("disk_validation", f"workload.iolog={a}"))
    sb = validate(compose("disk_validation", f"workload.iolog={b}"))
    assert sa.params["workload.iolog_sha256"] == sb.params["workload.iolog_sha256"]
    assert sa.params["workload.iolog_sha256"] == inputs.digest(a)
    assert sa.config_hash != sb.config_hash          # the path is still a parameter
    _trace(b, 8192)
    sb2 = validate(compose("disk_validation", f"workload.iolog={b}"))
    assert sb2.params["workload.iolog_sha256"] != sa.params["workload.iolog_sha256"]
