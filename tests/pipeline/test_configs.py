"""Every config in conf/ composes, validates and builds; every experiment runs briefly."""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from models.block import MQ_SCHEDULERS

from pipeline import registry
from pipeline.errors import ConfigError
from pipeline.job import execute
from pipeline.spec import prepare, validate
from pipeline.sweep import experiment_name

from .helpers import CONF


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def _device_entry(option: str) -> dict:
    return yaml.safe_load((CONF / "device" / f"{option}.yaml").read_text()) or {}


def _needs_members(option: str) -> bool:
    """Arrays name their members per experiment; they are built by the experiments."""
    entry = _device_entry(option)
    kind = registry.DEVICES.get(entry.get("type"))
    return "members" in entry or (kind is not None and kind.members_field is not None)


def _device_case(option: str) -> list[str]:
    return [f"device@device.sda={option}", "workload.size=512m"]  # old drives hold 1-9 GB


def test_every_device_option_names_its_type():
    """The pipeline needs ``type:`` (DiskSim imports write ``type: hdd`` too)."""
    for option in _options("device"):
        assert _device_entry(option).get("type") in registry.DEVICES, option


def _missing_types(experiment: str) -> set[str]:
    """Device types an experiment uses that no model provides yet."""
    text = (CONF / "experiment" / f"{experiment}.yaml").read_text()
    used = set()
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("- ") and "/device@" in line:
            option = line.split(":", 1)[1].strip()
            used.add(_device_entry(option).get("type", "hdd"))
    return used - set(registry.DEVICES)


def _missing_models(experiment: str) -> list[str]:
    """The workload type and engine option an experiment overrides, when no model or
    conf/engine/ option provides them yet (sysbench before the InnoDB server lands)."""
    out = []
    for line in (CONF / "experiment" / f"{experiment}.yaml").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("- override /workload:"):
            typ = _entry("workload", line.split(":", 1)[1].strip()).get("type")
            if typ not in registry.WORKLOADS:
                out.append(f"workload {typ}")
        elif line.startswith("- override /engine:"):
            option = line.split(":", 1)[1].strip()
            if not (CONF / "engine" / f"{option}.yaml").exists():
                out.append(f"engine={option}")
    return out


def _experiment_param(experiment: str):
    missing = _missing_types(experiment)
    marks = [pytest.mark.skip(reason=f"device model not available yet: {sorted(missing)}")] if missing else []
    if _missing_models(experiment):
        marks = [pytest.mark.skip(reason=f"not available yet: {_missing_models(experiment)}")]
    return pytest.param(experiment, marks=marks)


def _entry(group: str, option: str) -> dict:
    return yaml.safe_load((CONF / group / f"{option}.yaml").read_text()) or {}


def _package(group: str, option: str) -> str:
    first = (CONF / group / f"{option}.yaml").read_text().splitlines()[:1]
    return first[0].split("@package", 1)[1].strip() if first and "@package" in first[0] else group


def _commit_engines() -> list[str]:
    """E2's commit-path engines (type innodb), which mysqlslap runs on."""
    return [o for o in _options("engine") if _package("engine", o) == "engine"
            and _entry("engine", o).get("type") == "innodb"]


def _server_engines() -> list[str]:
    """The InnoDB server (type innodb_server), which the OLTP workloads run on."""
    return [o for o in _options("engine") if _entry("engine", o).get("type") == "innodb_server"]


# the workload types that run on the InnoDB server rather than on the commit path
SERVER_WORKLOADS = ("sysbench", "tpcc", "dbt2")


def _workload_case(option: str) -> list[str]:
    """A workload that runs on an engine is composed with one of the kind it needs."""
    typ = _entry("workload", option).get("type")
    kind = registry.WORKLOADS.get(typ)
    engines = _server_engines() if typ in SERVER_WORKLOADS else _commit_engines()
    extra = [f"engine={engines[0]}"] if kind is not None and kind.on == "engine" else []
    return [f"workload={option}", *extra, "run.scale=0.001"]   # full_scan's table: 10 MB


def _unregistered(cases: list[list[str]]) -> list:
    """Workload options whose type no model registers yet (sysbench: the InnoDB server)
    are skipped, not failed."""
    out = []
    for c in cases:
        typ = (_entry("workload", c[0].split("=", 1)[1]).get("type")
               if c[0].startswith("workload=") else None)
        out.append(c if typ is None or typ in registry.WORKLOADS else pytest.param(
            c, marks=pytest.mark.skip(reason=f"workload {typ} not registered yet")))
    return out


def _engine_case(option: str) -> list[str]:
    """Commit-path engines run mysqlslap; the scan's read-ahead presets (package
    ``workload``) are keys of workload=full_scan."""
    if _package("engine", option) == "workload":
        return [f"engine={option}", "workload=full_scan", "run.scale=0.001"]
    if _entry("engine", option).get("type") == "innodb_server":
        return [f"engine={option}", "workload=sysbench", "workload.table_size=1000"]
    return [f"engine={option}", "workload=mysqlslap_write"]


EXPERIMENTS = [_experiment_param(e) for e in _options("experiment")]
def _block_case(option: str) -> list[str]:
    """A blk-mq scheduler needs a kernel that has blk-mq (the default is 2.6.18)."""
    mq = _entry("block", option).get("scheduler") in MQ_SCHEDULERS
    return [f"block={option}"] + (["kernel='5.15'"] if mq else [])


GROUP_CASES = ([_block_case(o) for o in _options("block")]
               + [[f"kernel='{o}'", "block=default"] for o in _options("kernel")]
               + [[f"run={o}"] for o in _options("run")]
               + _unregistered([_workload_case(o) for o in _options("workload")])
               + [_device_case(o) for o in _options("device") if not _needs_members(o)]
               + [[f"fs={o}", "workload=fsync_bench"] for o in _options("fs")]
               + [[f"page_cache={o}", "workload=fsync_bench"] for o in _options("page_cache")]
               + [_engine_case(o) for o in _options("engine")]
               + [[f"cpu={o}", f"engine={_commit_engines()[0]}", "workload=mysqlslap_write"]
                  for o in _options("cpu")])


def test_conf_has_the_groups_of_the_issue():
    for group in ("device", "block", "fs", "page_cache", "engine", "cpu", "workload", "run",
                  "experiment"):
        assert _options(group), f"conf/{group}/ is empty"


def test_every_case_is_a_point_of_its_experiments_sweep(compose):
    """conf/case/<experiment>/<case>.yaml: each case file is swept by its experiment,
    and sets a distinct run.case label."""
    for folder in sorted(p for p in (CONF / "case").iterdir() if p.is_dir()):
        cfg = compose(f"experiment={folder.name}")
        swept = str(cfg.hydra.sweeper.params[f"case/{folder.name}"]).split(",")
        cases = _options(f"case/{folder.name}")
        assert sorted(c.strip() for c in swept) == cases, folder.name
        labels = [(yaml.safe_load((folder / f"{c}.yaml").read_text())["run"]["case"]) for c in cases]
        assert len(set(labels)) == len(labels), folder.name


def test_default_config_builds(compose):
    spec = prepare(compose(), "default")
    assert spec.top_level == ("sda",)
    assert spec.params["block.scheduler"] == "deadline"
    assert spec.params["workload.type"] == "fio"


@pytest.mark.parametrize("overrides", GROUP_CASES, ids=lambda c: c[0])
def test_group_option_composes_and_builds(compose, overrides):
    cfg = compose(*overrides, TINY)      # the stack as configured, its data set tiny
    spec = prepare(cfg, experiment_name(cfg.hydra))
    assert spec.devices and spec.params


# Builds and brief runs use a tiny run.scale: data sets (full_scan's table, built by
# simulating its insert history) shrink with it, the stack does not.
TINY = "run.scale=0.001"


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_composes_and_validates(compose, experiment):
    cfg = compose(f"experiment={experiment}")
    spec = validate(cfg, experiment_name(cfg.hydra))
    assert spec.experiment == experiment


def _axes(cfg) -> list[list[str]]:
    params = cfg.hydra.sweeper.params or {}
    return [[f"{k}={v.strip()}" for v in str(vals).split(",")] for k, vals in params.items()]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_sweep_values_build(compose, experiment):
    """Every value of every axis of the experiment's own sweep (hydra.sweeper.params)
    composes, validates and builds (a trial build of the whole stack), the other axes
    at their first value. (The full grid composes the same group options and keys;
    composing every point would cost a second each.)"""
    axes = _axes(compose(f"experiment={experiment}"))
    built = set()
    for i, axis in enumerate(axes):
        for value in axis:
            point = tuple(value if j == i else a[0] for j, a in enumerate(axes))
            if point not in built:
                prepare(compose(f"experiment={experiment}", *point, TINY), experiment)
                built.add(point)
    assert built or not axes


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_runs_briefly(compose, experiment):
    """A few simulated milliseconds of each experiment complete without error. A TPC-C
    pool's warm replay (``workload.warm_pool_turnovers``) is left out: it does not scale
    with ``run.scale`` (~20 CPU s at 100 warehouses, the same code for every dbt2
    experiment) and has tests of its own (test_warm_replay.py, the E3 rows)."""
    cfg = compose(f"experiment={experiment}")
    warm = ("workload.warm_pool_turnovers=0",) if cfg.workload.get("warm_pool_turnovers") else ()
    cfg = compose(f"experiment={experiment}", "run.duration_s=0.01", TINY, *warm)
    out = execute(prepare(cfg, experiment))
    row = out.tables["summary"].to_pylist()[0]
    assert row["status"] == "ok", row["error"]
    assert row["events_processed"] > 0
    assert 0 < row["sim_seconds"] <= 0.01 + 1e-9


def test_range_error_names_the_full_key(compose):
    with pytest.raises(ConfigError) as ei:
        prepare(compose("block.nr_requests=0"))
    assert ei.value.key == "block.nr_requests"


def test_run_config_is_a_frozen_dataclass_with_checks():
    from pipeline.schema import RunConfig

    assert dataclasses.is_dataclass(RunConfig)
    with pytest.raises(ValueError, match=r"^seed: "):
        RunConfig(seed=-1)
    with pytest.raises(ValueError, match=r"^scale: "):
        RunConfig(scale=0)
