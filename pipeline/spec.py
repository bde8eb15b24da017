"""From a composed Hydra config to a validated, picklable ``RunSpec``.

Validation, component by component, so every error names its full key:

- ``run``, ``results``, ``meta``, ``block``: typed by the root schema already; building
  their frozen dataclasses runs the range checks (``block.nr_requests: must be >= 1``).
- ``device.<name>``: ``type`` picks the registered config class; the remaining keys
  are checked against that dataclass's fields and annotations (unknown key, wrong
  type: ``pipeline.coerce``, OmegaConf's rules) and the dataclass is built (its range
  checks). Devices named in a RAID's ``members`` must exist, be
  distinct, not be the RAID itself, belong to at most one array, and form no cycle.
- ``device.<name>.queue``: optional per-device request-queue settings
  (``/sys/block/<name>/queue``) over the ``block`` defaults; only a top-level device
  (one that is no RAID member) has a queue.
- ``workload``: the same with the workload registry; ``filename`` must name a
  top-level block device.
- ``engine``: empty, or an entry of the engine registry (``type: innodb``); a workload
  that runs on an engine (mysqlslap) needs one, any other workload must have none.
- ``placement``: file class -> device (``placement.redo_log: sdb``); ``default``
  places every class not named. Keys must be file classes some workload or engine
  creates, values top-level block devices; a class the run uses and nobody placed
  goes to the only top-level device, or is an error when there are several.
- ``fs`` / ``page_cache``: the filesystem mounted on each device that holds a file of
  the run (``device.<name>.fs`` overrides keys per device) and the one page cache all
  of them share; ``cpu``: the engine's cores. They are parameters of the run (columns)
  only when used.

The ``RunSpec`` carries the validated model configs, the flattened parameters (the
columns of the summary row; fields ``run.scale`` shrinks at the value the model uses,
``pipeline.scaling``; a file the run reads, such as a trace, by content,
``workload.<key>_sha256``, ``pipeline.inputs``), the hash of the configuration as
written, and the experiment's ``meta`` declarations (``min_scale``).
``pipeline.build`` then constructs the
stack; ``prepare`` also does a trial build so errors a model can only find when it
sees its neighbours (a fio region larger than the device) are config errors too.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig

from . import inputs, registry
from .coerce import container, to_object, typed_entry
from .errors import ConfigError, did_you_mean
from .naming import ad_hoc_overrides
from .scaling import effective_parameters
from .schema import NOT_PARAMETERS, MetaConfig, ResultsConfig, RunConfig
from .storage_spec import (DeviceSpec, MountSpec, on_filename, parse_devices,
                           resolve_mounts, resolve_placement)

from models.block import MQ_SCHEDULERS, BlockConfig
from models.engine.cpu import CPUConfig
from models.fs import FsConfig, PageCacheConfig
from models.linux import KernelConfig


@dataclass(frozen=True)
class WorkloadSpec:
    type: str
    config: Any
    extras: dict
    inputs: dict = dataclasses.field(default_factory=dict)   # extras key -> file it reads


@dataclass(frozen=True)
class EngineSpec:
    type: str
    config: Any


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    run: RunConfig
    results: ResultsConfig
    devices: tuple[DeviceSpec, ...]      # in build order: members before arrays
    block: BlockConfig
    workload: WorkloadSpec
    params: dict                          # flat "section.key" -> scalar (effective sizes)
    config_hash: str
    code_version: str = ""
    engine: EngineSpec | None = None
    cpu: CPUConfig | None = None          # with an engine
    placement: dict = dataclasses.field(default_factory=dict)  # file class -> device (used)
    mounts: tuple[MountSpec, ...] = ()    # one filesystem per device holding files
    page_cache: PageCacheConfig | None = None   # shared by the mounts
    meta: MetaConfig = MetaConfig()       # the experiment's declarations (not parameters)
    overrides: tuple[str, ...] = ()       # keys set ad hoc (ad_hoc_overrides), sorted
    kernel: KernelConfig = KernelConfig()

    @property
    def seed(self) -> int:
        return self.run.seed

    @property
    def min_scale(self) -> float:
        """The experiment's ``meta.min_scale`` (0: any scale is valid)."""
        return self.meta.min_scale

    @property
    def below_valid_scale(self) -> bool:
        """``run.scale`` is below the smallest scale at which the experiment's
        published effect holds."""
        return self.run.scale < self.meta.min_scale

    @property
    def labels(self) -> dict:
        """Summary-row columns derived from the spec that are no parameters (not in
        the config hash)."""
        return {"run.below_valid_scale": self.below_valid_scale,
                "run.overrides": " ".join(self.overrides)}

    @property
    def top_level(self) -> tuple[str, ...]:
        """Devices that are nobody's member: each gets a block queue."""
        used = {m for d in self.devices for m in d.members}
        return tuple(d.name for d in self.devices if d.name not in used)


# -- flattening --------------------------------------------------------------------------
def _scalar(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if dataclasses.is_dataclass(v):
        return json.dumps(_plain(v), sort_keys=True)
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(_plain(v), sort_keys=True)
    return str(v)


def _plain(v: Any) -> Any:
    if dataclasses.is_dataclass(v):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


def flatten_config(prefix: str, obj: Any, out: dict) -> dict:
    """``prefix.field`` -> scalar for each field of a dataclass (nested lists/dataclasses
    become JSON strings, so every column is a plain SQL scalar)."""
    for f in dataclasses.fields(obj):
        out[f"{prefix}.{f.name}"] = _scalar(getattr(obj, f.name))
    return out


def parameters(run: RunConfig, devices, block: BlockConfig, workload: WorkloadSpec,
               engine: EngineSpec | None = None, cpu: CPUConfig | None = None,
               placement: dict | None = None, mounts: tuple = (),
               fs: FsConfig | None = None, page_cache: PageCacheConfig | None = None,
               kernel: KernelConfig | None = None) -> dict:
    p: dict = {}
    flatten_config("run", run, p)
    del p["run.name"]      # where results are kept, not what is simulated
    flatten_config("kernel", kernel or KernelConfig(), p)
    overridden = {m.device: m.config for m in mounts if m.overridden}
    for d in sorted(devices, key=lambda d: d.name):
        p[f"device.{d.name}.type"] = d.type
        p[f"device.{d.name}.preset"] = d.preset
        flatten_config(f"device.{d.name}", d.config, p)
        if d.queue is not None:
            flatten_config(f"device.{d.name}.queue", d.queue, p)
        if d.bus is not None:
            p[f"device.{d.name}.bus.name"] = d.bus[0]
            flatten_config(f"device.{d.name}.bus", d.bus[1], p)
        if d.name in overridden:
            flatten_config(f"device.{d.name}.fs", overridden[d.name], p)
    flatten_config("block", block, p)
    if mounts:
        flatten_config("fs", fs, p)
        flatten_config("page_cache", page_cache, p)
    for cls, dev in sorted((placement or {}).items()):
        p[f"placement.{cls}"] = dev
    if engine is not None:
        p["engine.type"] = engine.type
        flatten_config("engine", engine.config, p)
    if cpu is not None:
        flatten_config("cpu", cpu, p)
    p["workload.type"] = workload.type
    for k, v in sorted(workload.extras.items()):
        p[f"workload.{k}"] = _scalar(v)
    for k, path in sorted(workload.inputs.items()):
        try:
            p[f"workload.{k}_sha256"] = inputs.digest(path)
        except OSError as ex:
            raise ConfigError(f"workload.{k}", f"cannot read {path}: {ex.strerror or ex}") from None
    flatten_config("workload", workload.config, p)
    return p


def config_hash(params: dict) -> str:
    text = json.dumps(params, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- entry point ----------------------------------------------------------------------------
def validate(cfg: DictConfig, experiment: str = "default", code_version: str = "") -> RunSpec:
    """Check a composed config and return its ``RunSpec``; raises ``ConfigError``."""
    known = {"run", "results", "meta", "kernel", "device", "block", "fs", "page_cache", "placement",
             "engine", "cpu", "workload", "hydra"}
    for key in cfg.keys():
        if key not in known:
            raise ConfigError(str(key), "unknown top-level key" + did_you_mean(key, sorted(known)))
    run = to_object(container(cfg, "run"), RunConfig, "run")
    experiment = run.name or experiment
    results = to_object(container(cfg, "results"), ResultsConfig, "results")
    meta = to_object(container(cfg, "meta"), MetaConfig, "meta")
    kernel = to_object(container(cfg, "kernel"), KernelConfig, "kernel")
    block_raw = container(cfg, "block") or {}
    block = to_object(block_raw, BlockConfig, "block")
    cpu = to_object(container(cfg, "cpu"), CPUConfig, "cpu")
    devices = parse_devices(container(cfg, "device") or {}, dict(block_raw), kernel, cpu.cores)
    fs_raw = dict(container(cfg, "fs") or {})
    for key, value in kernel.fs_defaults().items():   # the kernel's, where left null
        if fs_raw.get(key) is None:
            fs_raw[key] = value
    fs = to_object(fs_raw, FsConfig, "fs")
    page_cache = to_object(container(cfg, "page_cache"), PageCacheConfig, "page_cache")

    engine = None
    eng_raw = container(cfg, "engine")
    if eng_raw:
        etyp, ecfg, _ = typed_entry(eng_raw, registry.ENGINES, "engine")
        engine = EngineSpec(etyp, ecfg)

    wl_raw = container(cfg, "workload") or {}
    if not wl_raw:
        raise ConfigError("workload", "no workload configured")
    typ = wl_raw.get("type") if isinstance(wl_raw, dict) else None
    kind = registry.WORKLOADS.get(typ)
    if kind is not None and kind.expand is not None:   # fio job files and option names
        wl_raw = kind.expand(wl_raw)
        typ = wl_raw.get("type")
        kind = registry.WORKLOADS.get(typ)
    extras = kind.extras if kind is not None else {}
    typ, wl_cfg, taken = typed_entry(wl_raw, registry.WORKLOADS, "workload", extras)
    kind = registry.WORKLOADS[typ]
    if kind.check is not None:
        taken = kind.check(taken)
    workload = WorkloadSpec(typ, wl_cfg, taken, kind.inputs(taken) if kind.inputs else {})
    if kind.on == "engine" and engine is None:
        raise ConfigError("engine", f"workload {typ} runs on a database engine; choose one "
                          f"(engine=<option>, types: {', '.join(sorted(registry.ENGINES))})")
    if kind.on != "engine" and engine is not None:
        raise ConfigError("engine", f"workload {typ} does not run on an engine; "
                          "drop it (engine=null)")

    top_order = [d.name for d in devices if d.name not in {m for x in devices for m in x.members}]
    top = set(top_order)
    if "filename" in taken and taken["filename"] is None:
        raise ConfigError("workload.filename", "must name a block device (e.g. sda), got null")
    target = taken.get("filename")
    if target is not None:
        dev = str(target).removeprefix("/dev/")
        if dev not in top:
            raise ConfigError("workload.filename",
                              f"{target!r} is not a block device (top-level devices: "
                              f"{', '.join(sorted(top))})")

    used = list(kind.files) + ([c for c in registry.ENGINES[engine.type].files
                                if c not in kind.files] if engine is not None else [])
    placed = container(cfg, "placement") or {}
    if kind.on == "fs" and target is not None:      # fio direct=0: on its filename's device
        placed = on_filename(placed, kind.files, str(target).removeprefix("/dev/"))
    placement = resolve_placement(placed, used, top_order)
    mounts = resolve_mounts(placement, devices, fs_raw, fs)
    if not mounts:
        page_cache = None
    # the CPUs matter with an engine (its threads) and to blk-mq (the software queues
    # its hardware contexts are mapped from)
    uses_cpu = engine is not None or any(d.queue is not None and d.queue.scheduler in MQ_SCHEDULERS
                                         for d in devices)
    params = parameters(run, devices, block, workload, engine, cpu if uses_cpu else None,
                        placement, mounts, fs, page_cache, kernel)
    assert not any(k.split(".")[0] in NOT_PARAMETERS for k in params)
    digest = config_hash(params)      # of the configuration as written (pipeline.scaling)
    params = effective_parameters(params, workload, run.scale)
    return RunSpec(experiment, run, results, devices, block, workload, params,
                   digest, code_version, engine, cpu if uses_cpu else None,
                   placement, mounts, page_cache, meta, ad_hoc_overrides(cfg), kernel)


def prepare(cfg: DictConfig, experiment: str = "default", code_version: str = "") -> RunSpec:
    """``validate`` plus a trial build of the whole stack (nothing is simulated)."""
    spec = validate(cfg, experiment, code_version)
    from .build import build

    build(spec)
    return spec
