"""Resume, failures as data, atomic results, summary line - in this process, serially.

A sweep skips runs whose valid results exist (same config hash and code version,
status ok, readable files), runs missing / failed / broken / stale ones again, and
runs everything with ``--rerun``. A run that raises is a row (status, error_type,
error, its parameters) and the sweep goes on; the last line counts ok / failed /
skipped and the exit status is 1 if any failed. SIGTERM stops a sweep between results.
"""
from __future__ import annotations

import os
import signal

import duckdb
import pyarrow.parquet as pq
import pytest

import pipeline.build
import pipeline.version
from pipeline import query, sink
from pipeline.run import main

from .helpers import parquet_files

SWEEP = ["hydra/launcher=serial", "workload.bs=4k,8k,16k", "workload.runtime_s=0.05",
         "workload.iodepth=2", "results.summary=false"]


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    """Other engineers commit to this working tree while tests run: pin the version."""
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:v1")


def _sweep(root, *extra, capfd=None):
    code = main(["-m", f"results.dir={root}", *SWEEP, *extra])
    err = capfd.readouterr().err if capfd is not None else ""
    return code, err


def _last_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[")]
    return lines[-1]


def _snapshot(root):
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in parquet_files(root)}


def _rows(root):
    con = query.connect(root)
    res = query.run_sql(con, 'SELECT * FROM runs ORDER BY "workload.bs"')
    return [dict(zip(res.columns, r)) for r in res.rows]


def test_resume_skips_valid_runs_rerun_forces_all_new_code_runs_again(tmp_path, capfd, monkeypatch):
    root = tmp_path / "out"
    code, err = _sweep(root, capfd=capfd)
    assert code == 0 and "3 ok, 0 failed, 0 skipped in" in _last_line(err)
    before = _snapshot(root)
    assert len(before) == 3

    code, err = _sweep(root, capfd=capfd)               # the same command again
    assert code == 0
    assert "0 run(s) to run, 3 done already (skipped)" in err
    assert "0 ok, 0 failed, 3 skipped in" in _last_line(err)
    assert _snapshot(root) == before                    # not one file touched

    code, err = _sweep(root, "--rerun", capfd=capfd)    # = hydra.launcher.rerun=true
    assert code == 0 and "3 ok, 0 failed, 0 skipped in" in _last_line(err)
    after = _snapshot(root)
    assert set(after) == set(before) and all(after[p] != before[p] for p in after)

    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:v2")
    code, err = _sweep(root, "workload.bs=4k,8k", capfd=capfd)
    assert code == 0 and "2 ok, 0 failed, 0 skipped in" in _last_line(err)
    rows = _rows(root)
    assert len(rows) == 3                                # replaced, not duplicated
    assert sorted(r["code_version"] for r in rows) == ["test:v1"] + ["test:v2"] * 2


def test_missing_broken_and_half_written_runs_run_again(tmp_path, capfd):
    root = tmp_path / "out"
    assert _sweep(root, capfd=capfd)[0] == 0
    files = sorted(parquet_files(root))
    files[0].write_bytes(b"PAR1 not really")             # corrupt
    pq.write_table(pq.read_table(files[1]).slice(0, 0), files[1])   # valid file, no row, no receipt
    # what a writer killed mid-write leaves: a staging entry and a stray temp file
    stage = sink.staging_dir(root) / f"new~{sink.partition_value(os.uname().nodename)}~999999~ab"
    stage.mkdir(parents=True)
    (stage / "summary.parquet").write_bytes(b"half")
    stray = root / ".tmp-summary-999999.parquet.partial"
    stray.write_bytes(b"half")
    code, err = _sweep(root, "workload.bs=4k,8k,16k,64k", capfd=capfd)   # 64k: never ran
    assert code == 0 and "3 ok, 0 failed, 1 skipped in" in _last_line(err)
    assert not stage.exists() and not stray.exists()     # dead writers' leftovers removed
    rows = _rows(root)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}


def test_a_failing_run_is_a_row_the_others_go_on_and_resume_retries_it(tmp_path, capfd, monkeypatch):
    real = pipeline.build.simulate

    def flaky(spec):
        if spec.params["workload.bs"] == "8k":
            raise ZeroDivisionError("simulated fault\nsecond line")
        return real(spec)

    monkeypatch.setattr(pipeline.build, "simulate", flaky)
    root = tmp_path / "out"
    code, err = _sweep(root, capfd=capfd)
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "2 ok, 1 failed, 0 skipped in" in lines[-2]
    assert lines[-1].startswith("error: 1 of 3 run(s) failed") and "ZeroDivisionError" in lines[-1]
    assert "Traceback" not in err
    rows = {r["workload.bs"]: r for r in _rows(root)}
    assert len(rows) == 3
    bad = rows.pop("8k")
    assert (bad["status"], bad["error_type"]) == ("failed", "ZeroDivisionError")
    assert bad["error"].startswith("ZeroDivisionError: simulated fault at test_reliability_resume.py:")
    assert bad["workload.iodepth"] == 2 and bad["run.seed"] == 0    # the config is in the row
    assert all(r["status"] == "ok" and r["error"] is None for r in rows.values())

    monkeypatch.setattr(pipeline.build, "simulate", real)   # the fault is fixed: resume
    code, err = _sweep(root, capfd=capfd)
    assert code == 0 and "1 ok, 0 failed, 2 skipped in" in _last_line(err)
    rows = _rows(root)
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}
    assert len({r["config_hash"] for r in rows}) == 3


def test_duplicate_jobs_run_once(tmp_path, capfd):
    root = tmp_path / "out"
    code, err = _sweep(root, "workload.bs=4k,4k,8k", capfd=capfd)
    assert code == 0 and "2 ok, 0 failed, 0 skipped in" in _last_line(err)
    assert len(parquet_files(root)) == 2


def test_dry_run_validates_every_job_and_runs_none(tmp_path, capfd):
    root = tmp_path / "out"
    assert _sweep(root, "workload.bs=4k", capfd=capfd)[0] == 0
    code = main(["-m", f"results.dir={root}", *SWEEP, "--dry-run"])
    out = capfd.readouterr().out
    assert code == 0
    assert "dry run: 3 job(s) valid, 3 distinct run(s): 1 done already, 2 would run" in out
    assert len(parquet_files(root)) == 1
    code = main(["-m", f"results.dir={root}", *SWEEP, "--dry-run", "workload.iodepth=0"])
    assert code == 2 and capfd.readouterr().err.startswith("error: workload.iodepth: ")


def test_sigterm_stops_between_results_and_the_same_command_resumes(tmp_path, capfd, monkeypatch):
    real = pipeline.build.simulate
    calls = []

    def terminated_during_second_run(spec):
        calls.append(spec.config_hash)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)    # the batch system ends the job
        return real(spec)

    monkeypatch.setattr(pipeline.build, "simulate", terminated_during_second_run)
    root = tmp_path / "out"
    before = signal.getsignal(signal.SIGTERM)   # SIG_DFL, or ray.init's if Ray runs here
    code, err = _sweep(root, capfd=capfd)
    assert code == 128 + signal.SIGTERM
    assert _last_line(err) == ("error: interrupted by SIGTERM: 1 ok, 0 failed, 2 not run; "
                               "run the same command again to resume")
    assert len(parquet_files(root)) == 1 and not sink.staging_dir(root).exists()
    assert signal.getsignal(signal.SIGTERM) == before            # handler restored
    monkeypatch.setattr(pipeline.build, "simulate", real)
    code, err = _sweep(root, capfd=capfd)
    assert code == 0 and "2 ok, 0 failed, 1 skipped in" in _last_line(err)


def test_stray_files_are_invisible_and_each_run_records_its_peak_memory(tmp_path, capfd):
    root = tmp_path / "out"
    assert _sweep(root, "workload.bs=4k,8k", capfd=capfd)[0] == 0
    run = next(root.glob("experiment=*/run=*"))
    good = pq.read_table(run / "summary.parquet")
    # a complete Parquet file under a temporary name, and a full staging entry
    pq.write_table(good, run / ".tmp-summary-4242.parquet.partial")
    stage = sink.staging_dir(root) / "new~otherhost~1~x"
    stage.mkdir(parents=True)
    pq.write_table(good, stage / "summary.parquet")
    assert query.run_sql(query.connect(root), "SELECT count(*) FROM runs").rows == [(2,)]
    glob = (root / "**" / "*.parquet").as_posix()
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning=true, "
                   "union_by_name=true)").fetchall()[0][0]
    assert n == 2

    h = run.name.removeprefix("run=")
    meta = sink.read_meta(root, "default", h)
    assert int(meta["peak_rss_bytes"]) >= int(meta["rss_start_bytes"]) > 10 * 2**20
    assert meta["host"] == os.uname().nodename and int(meta["pid"]) == os.getpid()
    # the README's query for it
    glob = (root / "**" / "summary.parquet").as_posix()
    rows = duckdb.sql(
        "SELECT regexp_extract(file_name, 'run=([^/]+)', 1) AS config_hash, "
        "decode(value)::BIGINT AS peak_rss_bytes "
        f"FROM parquet_kv_metadata('{glob}') WHERE decode(key) = 'dbio.peak_rss_bytes'").fetchall()
    assert len(rows) == 2 and (h, int(meta["peak_rss_bytes"])) in rows
