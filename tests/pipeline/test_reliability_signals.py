"""Stop signals: SIGTERM during a Ray sweep is a clean stop (exit 143, the resume line,
every finished result kept), and a signal that arrives while a result is being written
waits until the write and its rename are done (staging is empty afterwards).

Costs on the 2-core CI machine: the ``timeout -s TERM`` test starts the CLI with a
local Ray in a subprocess (~10-15 s wall, ~6 s CPU); the write test is in-process,
20 signals at random times (~2 s).
"""
from __future__ import annotations

import dataclasses
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

import pipeline.fanout as fanout
from pipeline import sink
from pipeline.errors import Interrupted
from pipeline.job import RunOutput, detail_table, summary_table

from . import procs
from .helpers import ROOT, parquet_files

# 8 runs of ~2 s each (50 ms of 4 KiB reads from a RAM disk), 2 at a time
SWEEP = ["device@device.sda=tmpfs", "workload.size=1g", "workload.bs=4k",
         "workload.iodepth=1,2", "run.seed=1,2,3,4", "workload.runtime_s=0.05",
         "results.summary=false", "hydra.launcher.ray.num_cpus=2"]


@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils timeout")
def test_sigterm_from_timeout_during_a_ray_sweep_is_a_clean_stop_with_exit_143(tmp_path):
    pytest.importorskip("ray")
    root = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    # `timeout` forwards a TERM it receives to the command and its process group (Ray's
    # own processes too), as when its time runs out; receiving it from here lets the
    # test send it once the first results are written, however slow the machine is.
    job = subprocess.Popen(
        ["timeout", "-s", "TERM", "600", sys.executable, "-m", "pipeline.run", "-m",
         f"results.dir={root}", *SWEEP],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        procs.wait_for(lambda: len(parquet_files(root)) >= 1 or job.poll() is not None,
                       timeout_s=240, what="a first result")
        assert job.poll() is None, job.stderr.read()[-2000:]
        time.sleep(0.4)                  # the driver is back waiting for results (ray.wait)
        os.kill(job.pid, signal.SIGTERM)
        err = job.communicate(timeout=60)[1]
        procs.wait_for(lambda: not procs.in_session(job.pid), timeout_s=30,
                       what="the job's processes to go")
    finally:
        procs.kill_all(procs.in_session(job.pid))
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert job.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "Traceback" not in err and "SystemError" not in err
    assert lines[-1].startswith("error: interrupted by SIGTERM: ")
    assert lines[-1].endswith("not run; run the same command again to resume")
    files = parquet_files(root)
    assert 1 <= len(files) < 8
    for f in files:                      # every result written is whole, and a finished run
        assert pq.read_table(f).column("status")[0].as_py() == "ok"
    assert not list(root.rglob("*.partial")) and not sink.staging_dir(root).exists()


def test_a_signal_during_a_write_waits_for_the_rename_staging_stays_empty(
        tmp_path, compose, monkeypatch):
    from pipeline.fanout import prepare_run

    base = prepare_run(compose("hydra/launcher=serial", "workload.runtime_s=0.01"), "sig", "test:sig")
    n = 20_000                           # a detail table: each write takes ~50 ms
    iostat = {"t_s": np.arange(n, dtype=np.float64), "r_s": np.random.default_rng(1).random(n)}

    def instant_run(spec):               # no simulation: the time goes into writing
        row = {"experiment": spec.experiment, "config_hash": spec.config_hash,
               "code_version": spec.code_version, "seed": 0, "status": "ok", "error": None,
               "error_type": None, "sim_seconds": 0.0, "wall_seconds": 0.0,
               "events_processed": 0}
        return RunOutput(spec.experiment, spec.config_hash, "ok",
                         {"summary": summary_table(row), "iostat": detail_table(iostat, spec)}, 0.0)

    monkeypatch.setattr(fanout, "simulate_run", instant_run)
    # a signal that comes after a sweep has ended must not end the tests
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        interrupted = _signal_sweeps(tmp_path, base, instant_run)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert interrupted >= 15             # the signals did land mid-sweep


def _signal_sweeps(tmp_path, base, instant_run) -> int:
    rng = random.Random(7)

    def specs_in(root):
        return [dataclasses.replace(base, config_hash=f"{base.config_hash}{k}",
                                    results=dataclasses.replace(base.results, dir=str(root),
                                                                summary=False))
                for k in range(4)]

    # how long an uninterrupted sweep takes on this machine now (loaded or not): the
    # signals are sent at random times inside that window
    took = []
    for k in range(3):
        t0 = time.perf_counter()
        fanout.sweep(specs_in(tmp_path / f"timing{k}"), None, rerun=True)
        took.append(time.perf_counter() - t0)
    window_s = 0.9 * min(took)
    interrupted = 0
    for attempt in range(20):
        root = tmp_path / f"out{attempt}"
        specs = specs_in(root)
        timer = threading.Timer(rng.uniform(0.0, window_s), os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        try:
            fanout.sweep(specs, None, rerun=True)
        except Interrupted:
            interrupted += 1
        finally:
            timer.cancel()
            timer.join()
        assert not sink.staging_dir(root).exists(), f"attempt {attempt}: staging left"
        assert not list(root.rglob("*.partial"))
        for f in parquet_files(root):
            assert pq.read_metadata(f).num_rows >= 1
        summaries = list(root.glob("**/summary.parquet"))
        for s in summaries:              # every run that is there is whole
            assert (s.parent / "_details" / "iostat.parquet").exists()
    return interrupted
