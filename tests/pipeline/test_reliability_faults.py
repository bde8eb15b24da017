"""Faults on Ray: a worker killed with SIGKILL mid-run, a driver killed with SIGKILL
mid-sweep. Neither loses a finished result or leaves a file DuckDB reads as one; the
same command then completes the set with no duplicates.

The worker tests run in this process on the test session's local Ray (its workers are
this process's descendants, so the test kills only its own); the driver test runs the
CLI in a session of its own and kills that whole session, as a batch system ends a job.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
import pytest

import pipeline.version
from pipeline import query, sink
from pipeline.run import main

from . import procs
from .helpers import ROOT, parquet_files

ray = pytest.importorskip("ray")

# 4 (or 8) runs of a second or two each, long enough to be caught mid-run: 20 ms of
# 4 KiB reads from a RAM disk (~25,000 I/Os on the event path)
SWEEP = ["device@device.sda=tmpfs", "workload.size=1g", "workload.bs=4k",
         "workload.iodepth=1,2", "run.seed=1,2", "workload.runtime_s=0.02",
         "results.summary=false"]


@pytest.fixture
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:faults")


class WorkerKiller(threading.Thread):
    """Kills (SIGKILL) the first Ray worker of this process that is running a task."""

    def __init__(self, root_pid: int, timeout_s: float = 120) -> None:
        super().__init__(daemon=True)
        self.root_pid, self.timeout_s = root_pid, timeout_s
        self.killed: int | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while not self.stop.is_set() and time.monotonic() < deadline:
            busy = procs.ray_task_workers(self.root_pid)
            if busy:
                time.sleep(0.2)                      # well inside the run
                if procs.cmdline(busy[0]).startswith("ray::simulate_run"):   # still in a task
                    os.kill(busy[0], signal.SIGKILL)
                    self.killed = busy[0]
                    return
            time.sleep(0.05)


def _rows(root):
    res = query.run_sql(query.connect(root), "SELECT * FROM runs")
    return [dict(zip(res.columns, r)) for r in res.rows]


def _assert_complete(root, n: int) -> list[dict]:
    rows = _rows(root)
    assert len(rows) == n and len({r["config_hash"] for r in rows}) == n   # no duplicates
    assert {r["status"] for r in rows} == {"ok"}
    assert len(parquet_files(root)) == n and not list(root.rglob("*.partial"))
    return rows


def _sweep_with_a_worker_killed(root, *extra):
    killer = WorkerKiller(os.getpid())
    killer.start()
    try:
        code = main(["-m", f"results.dir={root}", *SWEEP, *extra])
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed is not None, "no busy worker was found to kill"
    return code, killer.killed


def test_a_killed_worker_is_retried_by_ray(tmp_path, ray_session, fixed_code_version, capfd):
    root = tmp_path / "out"
    code, killed = _sweep_with_a_worker_killed(root)
    err = capfd.readouterr().err
    assert code == 0, err
    assert "4 ok, 0 failed, 0 skipped" in err
    _assert_complete(root, 4)
    # The worker died in a task, so that task's result can only have come from a retry
    # on another worker: without retries the same sweep ends "3 ok, 1 failed" (next
    # test). (The killed worker may have finished an earlier run, so its pid can still
    # be on a row.)
    assert not procs.alive(killed)
    pids = {int(sink.read_meta(root, "default", h.name.removeprefix("run="))["pid"])
            for h in root.glob("experiment=*/run=*")}
    assert pids - {killed}                           # others ran the rest, the retry included


def test_a_killed_worker_without_retries_is_a_failed_row_then_resume_completes(
        tmp_path, ray_session, fixed_code_version, capfd):
    root = tmp_path / "out"
    code, _ = _sweep_with_a_worker_killed(root, "hydra.launcher.ray.max_retries=0")
    err = capfd.readouterr().err
    assert code == 1, err
    assert "3 ok, 1 failed, 0 skipped" in err and "Traceback" not in err
    rows = _rows(root)
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(rows) == 4 and len(failed) == 1
    assert failed[0]["error_type"] in ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError")
    assert failed[0]["workload.iodepth"] in (1, 2)     # the failed row carries its config

    code = main(["-m", f"results.dir={root}", *SWEEP])   # the same command again
    err = capfd.readouterr().err
    assert code == 0, err
    assert "1 ok, 0 failed, 3 skipped" in err
    _assert_complete(root, 4)


def test_a_killed_driver_loses_no_result_and_the_same_command_resumes(
        tmp_path, ray_session, monkeypatch, capfd):
    root = tmp_path / "out"
    sweep = [*SWEEP, "run.seed=1,2,3,4"]               # 8 runs
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    driver = subprocess.Popen(
        [sys.executable, "-m", "pipeline.run", "-m", f"results.dir={root}",
         "hydra.launcher.ray.num_cpus=2", *sweep],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True)
    try:
        procs.wait_for(lambda: len(parquet_files(root)) >= 2 or driver.poll() is not None,
                       timeout_s=240, what="two results")
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
        os.killpg(driver.pid, signal.SIGKILL)      # the driver and its local Ray, at once
        driver.wait(timeout=30)
        procs.wait_for(lambda: not procs.in_session(driver.pid), timeout_s=30,
                       what="the killed job's processes to go")
    finally:
        procs.kill_all(procs.in_session(driver.pid))
        driver.stderr.close()

    # what is on disk is whole: every Parquet file reads, one row per summary
    files = parquet_files(root)
    done = len(files)
    assert 2 <= done < 8
    for f in files:
        assert pq.read_table(f).num_rows == 1
    assert not list(root.rglob("*.partial"))
    rows = _rows(root)
    assert len(rows) == done and {r["status"] for r in rows} == {"ok"}

    # the same command resumes (here in this process, on the test session's Ray)
    version = rows[0]["code_version"]
    monkeypatch.setattr(pipeline.version, "code_version", lambda: version)
    code = main(["-m", f"results.dir={root}", *sweep])
    err = capfd.readouterr().err
    assert code == 0, err
    assert f"{8 - done} ok, 0 failed, {done} skipped" in err
    _assert_complete(root, 8)
    assert not sink.staging_dir(root).exists()
