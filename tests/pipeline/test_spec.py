"""Validation into a RunSpec: flat parameter names, the config hash, device references,
per-component random streams; the atomic Parquet sink."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from omegaconf import OmegaConf

from pipeline import registry
from pipeline.build import component_rng
from pipeline.errors import ConfigError
from pipeline.sink import run_dir, write_run, write_table
from pipeline.spec import validate


@dataclass(frozen=True)
class DiskConfig:
    size_gb: int = 1

    def __post_init__(self) -> None:
        if self.size_gb < 1:
            raise ValueError(f"size_gb: must be >= 1, got {self.size_gb}")


@dataclass(frozen=True)
class ArrayConfig:
    level: int = 1
    members: tuple[str, ...] = ()


@pytest.fixture
def fake_devices(monkeypatch):
    devices = dict(registry.DEVICES)
    devices["disk"] = registry.DeviceKind(DiskConfig, lambda *a: None)
    devices["array"] = registry.DeviceKind(ArrayConfig, lambda *a: None, members_field="members")
    monkeypatch.setattr(registry, "DEVICES", devices)


def _cfg(devices: dict, filename: str = "sda", **workload):
    return OmegaConf.create({
        "run": {"seed": 3}, "results": {"dir": "x"}, "block": {"scheduler": "noop"},
        "device": devices,
        "workload": {"type": "fio", "filename": filename, "size": "1m", **workload},
    })


def _disks(*names):
    return {n: {"type": "disk"} for n in names}


def test_parameters_are_flat_and_prefixed_by_component(fake_devices):
    spec = validate(_cfg({"sda": {"type": "array", "members": ["d0", "d1"]}, **_disks("d0", "d1")}),
                    "exp")
    p = spec.params
    assert p["run.seed"] == 3
    assert p["device.sda.type"] == "array" and p["device.sda.members"] == '["d0", "d1"]'
    assert p["device.d0.size_gb"] == 1
    assert p["block.scheduler"] == "noop" and p["block.nr_requests"] == 128
    assert p["workload.type"] == "fio" and p["workload.filename"] == "sda"
    assert p["workload.bs"] == "4k"     # FioConfig's default, resolved
    assert all(k.split(".")[0] in ("run", "kernel", "device", "block", "workload") for k in p)
    assert not any(k.startswith("results.") for k in p)
    assert [d.name for d in spec.devices] == ["d0", "d1", "sda"]   # members first
    assert spec.top_level == ("sda",)


def test_config_hash_follows_parameters_only(fake_devices):
    base = validate(_cfg(_disks("sda")))
    assert validate(_cfg(_disks("sda"))).config_hash == base.config_hash
    assert validate(_cfg(_disks("sda"), bs="8k")).config_hash != base.config_hash
    other_dir = _cfg(_disks("sda"))
    other_dir.results.dir = "elsewhere"
    assert validate(other_dir).config_hash == base.config_hash


@pytest.mark.parametrize("devices,key,match", [
    ({"sda": {"type": "array", "members": ["d0", "d9"]}, **_disks("d0")},
     "device.sda.members", "unknown device 'd9'"),
    ({"sda": {"type": "array", "members": ["sda", "d0"]}, **_disks("d0")},
     "device.sda.members", "member of itself"),
    ({"sda": {"type": "array", "members": ["d0", "d0"]}, **_disks("d0")},
     "device.sda.members", "listed twice"),
    ({"sda": {"type": "array", "members": ["d0", "d1"]}, "sdb": {"type": "array", "members": ["d1"]},
      **_disks("d0", "d1")}, "device.sdb.members", "already a member of 'sda'"),
    ({"sda": {"type": "array", "members": ["a1"]}, "a1": {"type": "array", "members": ["a2"]},
      "a2": {"type": "array", "members": ["a1"]}}, "device.a2.members", "already a member"),
    ({"sda": {"type": "disk", "size_gb": 0}}, "device.sda.size_gb", "must be >= 1"),
    ({"sda": {"type": "disk", "size_gbb": 2}}, "device.sda.size_gbb", "not in 'DiskConfig'"),
    ({"sda": {"type": "disk", "size_gb": "big"}}, "device.sda.size_gb", "could not be converted"),
    ({"sda": {"type": "tape"}}, "device.sda.type", "unknown type 'tape'"),
    ({"sda": {"size_gb": 2}}, "device.sda.type", "missing"),
    ({}, "device", "no devices"),
])
def test_device_errors_name_the_key(fake_devices, devices, key, match):
    with pytest.raises(ConfigError, match=match) as ei:
        validate(_cfg(devices))
    assert ei.value.key == key


def test_member_cycle_is_rejected(fake_devices):
    # a1 <-> a2 with no other owner: a cycle, not a double membership
    devices = {"sda": {"type": "disk"}, "a1": {"type": "array", "members": ["a2"]},
               "a2": {"type": "array", "members": ["a1"]}}
    with pytest.raises(ConfigError, match="cycle"):
        validate(_cfg(devices))


def test_workload_must_target_a_top_level_device(fake_devices):
    devices = {"sda": {"type": "array", "members": ["d0"]}, **_disks("d0")}
    with pytest.raises(ConfigError) as ei:
        validate(_cfg(devices, filename="d0"))
    assert ei.value.key == "workload.filename"
    assert validate(_cfg(devices, filename="/dev/sda")).params["workload.filename"] == "/dev/sda"


def test_unknown_top_level_key_is_rejected(fake_devices):
    cfg = _cfg(_disks("sda"))
    cfg.myisam = {"x": 1}
    with pytest.raises(ConfigError) as ei:
        validate(cfg)
    assert ei.value.key == "myisam"


def test_engine_entry_needs_a_registered_type(fake_devices):
    cfg = _cfg(_disks("sda"))
    cfg.engine = {"x": 1}
    with pytest.raises(ConfigError) as ei:
        validate(cfg)
    assert ei.value.key == "engine.type"


def test_component_streams_are_reproducible_and_independent():
    a = component_rng(7, "device.hdd0").integers(0, 2**62, 4)
    assert np.array_equal(a, component_rng(7, "device.hdd0").integers(0, 2**62, 4))
    assert not np.array_equal(a, component_rng(7, "device.hdd1").integers(0, 2**62, 4))
    assert not np.array_equal(a, component_rng(8, "device.hdd0").integers(0, 2**62, 4))


# -- sink ------------------------------------------------------------------------------------
def test_sink_layout_and_atomic_replace(tmp_path):
    t1 = pa.table({"x": [1]})
    paths = write_run(tmp_path, "my exp/1", "abc", {"summary": t1, "iostat": pa.table({"y": [1, 2]})})
    d = run_dir(tmp_path, "my exp/1", "abc")
    assert d == tmp_path / "experiment=my_exp_1" / "run=abc"
    # summary last; detail tables under _details/, where pyarrow datasets do not look
    assert [p.relative_to(d).as_posix() for p in paths] == ["_details/iostat.parquet",
                                                            "summary.parquet"]
    write_table(d / "summary.parquet", pa.table({"x": [2]}))
    assert pq.read_table(d / "summary.parquet").column("x").to_pylist() == [2]
    assert sorted(p.relative_to(d).as_posix() for p in d.rglob("*.parquet")) == [
        "_details/iostat.parquet", "summary.parquet"]


def test_sink_leaves_no_partial_file_on_failure(tmp_path):
    with pytest.raises(Exception):
        write_table(tmp_path / "summary.parquet", "not a table")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


# -- per-device request queues ---------------------------------------------------------
def test_device_queue_overrides_the_block_defaults(fake_devices):
    devices = {"sda": {"type": "disk", "queue": {"scheduler": "deadline", "nr_requests": 100000}},
               "sdb": {"type": "disk"}}
    spec = validate(_cfg(devices))
    q = {d.name: d.queue for d in spec.devices}
    assert (q["sda"].scheduler, q["sda"].nr_requests) == ("deadline", 100000)
    assert (q["sdb"].scheduler, q["sdb"].nr_requests) == ("noop", 128)   # the block defaults
    assert spec.params["device.sda.queue.nr_requests"] == 100000
    assert spec.params["device.sdb.queue.scheduler"] == "noop"
    assert spec.params["block.nr_requests"] == 128


@pytest.mark.parametrize("devices,key", [
    ({"sda": {"type": "disk", "queue": {"nr_requests": 0}}}, "device.sda.queue.nr_requests"),
    ({"sda": {"type": "disk", "queue": {"elevator": "noop"}}}, "device.sda.queue.elevator"),
    ({"sda": {"type": "array", "members": ["d0"]}, "d0": {"type": "disk", "queue": {"nr_requests": 4}}},
     "device.d0.queue"),
])
def test_device_queue_errors_name_the_key(fake_devices, devices, key):
    with pytest.raises(ConfigError) as ei:
        validate(_cfg(devices))
    assert ei.value.key == key
