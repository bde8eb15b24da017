"""Workers run the driver's code: each run records the hash of the code it ran
(``dbio.code_hash``), and a worker whose imported ``models``/``pipeline`` differ from the
driver's refuses to run (a failed row ``CodeVersionMismatch`` naming where it imported
from) instead of writing rows stamped with the driver's ``code_version``.

In-process (~2 s), and one sweep on the test session's local Ray (~5 s once Ray is up).
"""
from __future__ import annotations

import pytest

import pipeline.version
from pipeline import sink
from pipeline.fanout import prepare_run
from pipeline.run import main
from pipeline.worker import loaded_code_hash, simulate_run


@pytest.fixture
def spec(compose, tmp_path):
    return prepare_run(compose(f"results.dir={tmp_path}", "workload.runtime_s=0.01"), "w", "v1")


def test_the_loaded_code_hash_is_the_checkouts_source_hash():
    assert loaded_code_hash() == pipeline.version.source_hash()


def test_a_worker_with_other_code_runs_nothing_and_says_where_its_code_came_from(spec):
    out = simulate_run(spec, "0123456789ab")
    row = out.tables["summary"].to_pylist()[0]
    assert out.status == "failed" and row["error_type"] == "CodeVersionMismatch"
    assert "imported pipeline from " in row["error"] and "(0123456789ab)" in row["error"]
    assert out.resources["code_hash"] == loaded_code_hash()


def test_a_worker_with_the_drivers_code_runs_and_records_it(spec):
    out = simulate_run(spec, loaded_code_hash())
    assert out.status == "ok" and out.resources["code_hash"] == loaded_code_hash()


def test_ray_runs_record_the_code_they_ran(tmp_path, ray_session, monkeypatch, capfd):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:worker")
    root = tmp_path / "out"
    assert main(["-m", f"results.dir={root}", "results.summary=false",
                 "workload.runtime_s=0.01", "run.seed=1,2"]) == 0, capfd.readouterr().err
    metas = [sink.read_meta(root, "default", p.parent.name.partition("=")[2])
             for p in root.glob("**/summary.parquet")]
    assert len(metas) == 2 and {m["code_hash"] for m in metas} == {loaded_code_hash()}
