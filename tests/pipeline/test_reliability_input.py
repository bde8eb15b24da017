"""Bad input of sweeps and launchers: one line naming the key (and what is allowed),
exit status 2, nothing started and nothing written - checked before any task runs.
(Model-level cases - unknown keys, types, ranges, RAID members - are in
test_errors.py; random ones in test_properties.py.)"""
from __future__ import annotations

import socket
import time

import pytest

from pipeline.run import main

from .helpers import all_files

CASES = [
    (["hydra.launcher.ray.num_cpus=0"], "hydra.launcher.ray.num_cpus",
     "must be >= 1 or null (all cores), got 0"),
    (["hydra.launcher.ray.max_retries=-2"], "hydra.launcher.ray.max_retries",
     "must be >= 0, or -1 (retry forever), got -2"),
    (["hydra.launcher.ray.object_store_memory_mb=10"], "hydra.launcher.ray.object_store_memory_mb",
     "must be >= 75 (Ray's minimum), got 10"),
    (["hydra.launcher.ray.address=nonsense"], "hydra.launcher.ray.address",
     "expected 'host:port', 'auto' or 'ray://host:port', got 'nonsense'"),
    (["hydra.launcher.ray.address=127.0.0.1:1"], "hydra.launcher.ray.address",
     "no Ray cluster at 127.0.0.1:1"),
    (["run.seed=range(0,100000000)"], "run.seed",
     "the sweep would have more than 10000 jobs; split it into several commands"),
    (["run.seed=range(0,5,0)"], "run.seed", "range() step must not be 0"),
    (["run.seed=range(5,0)"], "run.seed", "the sweep has no values"),
    (["run.seed=interval(0,1)"], "run.seed", "interval() sweeps cannot be listed"),
    (["block=0"], "block", "must name an option of the group (bfq, cfq, deadline, default, kyber"),
    (["workload.size=1t"], "workload.size", "exceeds device 'sda'"),       # file > device
    (["workload.filename=sdz"], "workload.filename", "is not a block device (top-level devices: sda)"),
    (["run.seed=1,x"], "run.seed", "could not be converted to Integer"),   # one bad job of two
    (["run.seed=a\nb"], "run.seed", "LexerNoViableAltException"),        # stays one line
]


@pytest.mark.parametrize("args,key,message", CASES, ids=[c[1] + ":" + c[2][:20] for c in CASES])
def test_bad_sweep_input_is_one_line_exit_2_before_anything_runs(tmp_path, monkeypatch, capfd,
                                                                  args, key, message):
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    code = main(["-m", f"results.dir={tmp_path / 'out'}", "workload.runtime_s=0.01", *args])
    out, err = capfd.readouterr()
    assert time.monotonic() - t0 < 30
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {key}: ") and message in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert all_files(tmp_path) == []                   # nothing written, not even staging


def test_an_explicit_address_is_not_silently_replaced_by_this_process_session(
        tmp_path, ray_session, capfd):
    with socket.socket() as other:          # something listening: "another cluster"
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        code = main(["-m", f"results.dir={tmp_path / 'out'}", "workload.runtime_s=0.01",
                     f"hydra.launcher.ray.address=127.0.0.1:{port}"])
    err = capfd.readouterr().err
    assert code == 2
    assert err.startswith("error: hydra.launcher.ray.address: this process is already connected "
                          "to Ray at ")


def test_a_cluster_that_ray_init_cannot_join_is_one_line_naming_the_address(monkeypatch):
    """A cluster that passes the probes (reachable, no token asked) but that ``ray.init``
    still fails to join: the error names the key and the address, with Ray's own reason
    (its first line, without where it was raised) - not a NameError from the handler."""
    ray = pytest.importorskip("ray")
    from pipeline import ray_session
    from pipeline.errors import ConfigError
    from pipeline.schema import RayConfig

    def init(**_kw):
        raise RuntimeError("version mismatch\nmore detail")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)   # as in a fresh driver
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray_session, "_probe", lambda *a: None)
    monkeypatch.setattr(ray_session, "_probe_auth", lambda *a: None)
    with pytest.raises(ConfigError) as e:
        ray_session.init_ray(RayConfig(address="10.1.2.3:6379", ship_code=False))
    assert str(e.value) == ("hydra.launcher.ray.address: cannot join the Ray cluster at "
                            "10.1.2.3:6379: RuntimeError: version mismatch")
