"""Joining a token-protected Ray cluster without its token: one line that says the
cluster needs its token and how to pass it, in seconds (``ray.init`` alone retries for
~20 s, printing a warning each second, and ends in ``ConnectionError``).

Starts a one-node token cluster of its own (``test_cluster.TwoNodeCluster``'s head,
~8 s) and stops exactly it; the driver runs as a subprocess without RAY_* variables.
~20 s wall on the 2-core CI machine.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from . import procs
from .helpers import ROOT, all_files

pytest.importorskip("ray")


def test_a_token_cluster_joined_without_its_token_is_one_line_exit_2(tmp_path):
    from .test_cluster import TwoNodeCluster

    cluster = TwoNodeCluster()
    port = procs.free_ports(1)[0]
    try:
        cluster._start("h", ["--head", f"--port={port}"])
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("RAY_") and k != "HYDRA_FULL_ERROR"}
        env["PYTHONPATH"] = str(ROOT)
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "pipeline.run", "-m",
                            f"results.dir={tmp_path / 'out'}", "workload.runtime_s=0.01",
                            f"hydra.launcher.ray.address=127.0.0.1:{port}"],
                           cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
    finally:
        cluster.stop()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-3000:]
    assert lines[0] == (f"error: hydra.launcher.ray.address: cannot join the Ray cluster at "
                        f"127.0.0.1:{port}: the cluster needs its token: export "
                        "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN=<the cluster's token> "
                        "(or put it in ~/.ray/auth_token)")
    assert took < 18, f"{took:.1f} s"
    assert all_files(tmp_path) == []
