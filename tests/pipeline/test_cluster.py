"""A real two-node Ray cluster on this machine runs a 16-run sweep whose results are
bit-identical to the same sweep run serially and on a local Ray.

The test starts its own cluster - ``ray start --head`` and a second ``ray start
--address=...`` node, each with ``--num-cpus=1``, its own ``--temp-dir`` and its own
ports, bound to 127.0.0.1, with token authentication on (``RAY_AUTH_MODE=token`` and
a token of its own in ``RAY_AUTH_TOKEN``, given to both nodes and the driver) - and
stops exactly those nodes (their process sessions) afterwards, whatever happened.
The nodes run outside the project (cwd a temp dir, no PYTHONPATH), so the workers can
only import ``models``/``pipeline`` from the code the driver ships
(``runtime_env.py_modules``); the driver gets ``RAY_ADDRESS`` and nothing else, as a
user would. Results come back to the driver's ``results.dir``.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import sink
from pipeline.run import main

from . import procs
from .helpers import ROOT, parquet_files

ray = pytest.importorskip("ray")
from ray._private.utils import get_ray_client_dependency_error  # noqa: E402

# 2 block sizes x 2 schedulers x 4 seeds = 16 runs of 5 ms simulated time each, on a
# RAM disk: the HDD and SSD models' numba kernels would first be compiled on each
# fresh node (30 s of CPU each; the shipped code carries no caches), which says
# nothing about the cluster path. The HDD stack's determinism across executions is
# tested on the local Ray below.
SWEEP = ["device@device.sda=tmpfs", "workload.size=1g", "workload.bs=4k,64k",
         "block=noop,deadline", "run.seed=1,2,3,4", "workload.runtime_s=0.005",
         "workload.iodepth=4", "results.summary=false"]
# Columns allowed to differ between executions: wall time, and the code version (a
# commit landing between two sweeps of a shared working tree changes it).
VOLATILE = {"wall_seconds", "code_version"}


def _ray_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ray.scripts.scripts", *args]


class TwoNodeCluster:
    """Head + one worker node, each a session of its own (stopped by session id)."""

    def __init__(self) -> None:
        # short paths: Ray's Unix sockets live under the temp dir (108-byte limit)
        self.tmp = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))
        self.token = secrets.token_hex(32)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("RAY_") and k != "PYTHONPATH"}
        self.env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token,
                        RAY_USAGE_STATS_ENABLED="0")
        self.sessions: list[int] = []
        self.address = ""

    def _start(self, name: str, args: list[str]) -> None:
        ports = procs.free_ports(8)
        cmd = _ray_cli("start", f"--temp-dir={self.tmp / name}", "--num-cpus=1",
                       "--node-ip-address=127.0.0.1", f"--node-manager-port={ports[0]}",
                       f"--object-manager-port={ports[1]}",
                       f"--dashboard-agent-listen-port={ports[2]}",
                       f"--dashboard-agent-grpc-port={ports[3]}",
                       f"--runtime-env-agent-port={ports[4]}", f"--metrics-export-port={ports[5]}",
                       "--object-store-memory=80000000", "--disable-usage-stats", *args)
        if "--head" in args:
            cmd += [f"--dashboard-port={ports[6]}", "--include-dashboard=false"]
            if get_ray_client_dependency_error() is None:
                # Only with ray[client] installed does the head start a client server
                # (on 10001 unless told); the plain `ray` package rejects the flag.
                cmd.append(f"--ray-client-server-port={ports[7]}")
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        self.sessions.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start ({name}) failed:\n{out[-3000:]}")

    def start(self) -> "TwoNodeCluster":
        port = procs.free_ports(1)[0]
        self._start("h", ["--head", f"--port={port}"])
        self.address = f"127.0.0.1:{port}"
        self._start("w", [f"--address={self.address}"])
        return self

    def stop(self) -> list[int]:
        killed = []
        for sid in reversed(self.sessions):
            killed += procs.stop_session(sid)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return killed


@pytest.fixture(scope="module")
def cluster():
    c = TwoNodeCluster()
    try:
        t0 = time.monotonic()
        c.start()
        print(f"cluster up in {time.monotonic() - t0:.1f} s")
        yield c
    finally:
        c.stop()
        assert not any(procs.in_session(s) for s in c.sessions), "cluster processes left behind"


def _table(root: Path):
    files = sorted(root.glob("experiment=*/run=*/summary.parquet"))
    rows = {}
    for f in files:
        t = pq.read_table(f)
        rows[t.column("config_hash")[0].as_py()] = t
    return rows


def _same_bits(a, b) -> list[str]:
    """Columns whose values differ bit for bit (floats compared as raw bytes)."""
    import numpy as np

    diff = []
    names = set(a.column_names) | set(b.column_names)
    for c in sorted(names - VOLATILE):
        if c not in a.column_names or c not in b.column_names:
            diff.append(c)
            continue
        x, y = a.column(c), b.column(c)
        if x.type != y.type:
            diff.append(c)
        elif str(x.type) in ("double", "float"):
            if not np.array_equal(np.asarray(x).view(np.uint64 if str(x.type) == "double" else np.uint32),
                                  np.asarray(y).view(np.uint64 if str(x.type) == "double" else np.uint32)):
                diff.append(c)
        elif x.to_pylist() != y.to_pylist():
            diff.append(c)
    return diff


def test_sweep_on_a_two_node_cluster_matches_serial_and_local_ray(cluster, ray_session, tmp_path):
    # the sweep on the cluster, as a user runs it: RAY_ADDRESS plus the cluster's token
    on_cluster = tmp_path / "cluster"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(RAY_ADDRESS=cluster.address, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=cluster.token,
               PYTHONPATH=str(ROOT))
    env.pop("HYDRA_FULL_ERROR", None)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pipeline.run", "-m", f"results.dir={on_cluster}",
                           *SWEEP], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240)
    cluster_s = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "16 ok, 0 failed, 0 skipped" in proc.stderr
    assert len(parquet_files(on_cluster)) == 16

    # both nodes ran tasks, from the shipped code (not the project directory)
    metas = [sink.read_meta(on_cluster, "default", h) for h in _table(on_cluster)]
    assert len({m["node_id"] for m in metas}) == 2, metas
    for m in metas:
        assert not m["code_dir"].startswith(str(ROOT)), m["code_dir"]
        assert "runtime_resources" in m["code_dir"], m["code_dir"]
        assert int(m["peak_rss_bytes"]) > 0

    # the same sweep serially in this process, and on the local Ray of the test session
    serial, local = tmp_path / "serial", tmp_path / "local"
    t1 = time.monotonic()
    assert main(["-m", f"results.dir={serial}", "hydra/launcher=serial", *SWEEP]) == 0
    t2 = time.monotonic()
    assert main(["-m", f"results.dir={local}", *SWEEP]) == 0
    t3 = time.monotonic()

    a, b, c = _table(on_cluster), _table(serial), _table(local)
    assert sorted(a) == sorted(b) == sorted(c) and len(a) == 16
    for h in a:
        assert _same_bits(a[h], b[h]) == [], h
        assert _same_bits(c[h], b[h]) == [], h
    print(f"16 runs: cluster {cluster_s:.1f} s, serial {t2 - t1:.1f} s, local Ray {t3 - t2:.1f} s")


def test_hdd_stack_is_bit_identical_serially_and_on_local_ray(ray_session, tmp_path):
    """The default stack (15k SAS HDD, NCQ, deadline, fio through the compiled loop)."""
    sweep = ["workload.bs=4k,64k", "run.seed=1,2", "workload.iodepth=4", "workload.runtime_s=0.2",
             "results.summary=false"]
    serial, local = tmp_path / "serial", tmp_path / "local"
    assert main(["-m", f"results.dir={serial}", "hydra/launcher=serial", *sweep]) == 0
    assert main(["-m", f"results.dir={local}", *sweep]) == 0
    a, b = _table(serial), _table(local)
    assert sorted(a) == sorted(b) and len(a) == 4
    for h in a:
        assert a[h].column("fio.iops")[0].as_py() > 0
        assert _same_bits(a[h], b[h]) == [], h
