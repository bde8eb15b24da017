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

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from . import coerce, inputs, registry
from .errors import ConfigError, describe, did_you_mean, from_value_error
from .naming import ad_hoc_overrides
from .scaling import effective_parameters
from .schema import NOT_PARAMETERS, MetaConfig, ResultsConfig, RunConfig

from models.block import LEGACY_NR_REQUESTS, LEGACY_SCHEDULERS, MQ_SCHEDULERS, BlockConfig
from models.engine.cpu import CPUConfig
from models.fs import FsConfig, PageCacheConfig
from models.linux import KernelConfig


@dataclass(frozen=True)
class DeviceSpec:
    name: str
    type: str
    config: Any
    members: tuple[str, ...] = ()
    preset: str | None = None
    queue: BlockConfig | None = None   # top-level devices: the effective queue settings
    fs: dict | None = None             # device.<name>.fs: keys over the ``fs`` section
    bus: tuple | None = None           # device.<name>.bus: (link name, BusConfig)


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
class MountSpec:
    device: str
    config: FsConfig
    overridden: bool = False           # device.<name>.fs set keys of its own


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


# -- conversion helpers ---------------------------------------------------------------------
def _to_object(node: Any, cls: Any, prefix: str) -> Any:
    """Build ``cls`` (or a preset instance's class, from its values) from ``node``,
    checked against the dataclass annotations (``pipeline.coerce``)."""
    if node is not None and not isinstance(node, dict):
        raise ConfigError(prefix, f"expected a mapping, got {node!r}")
    return coerce.build(cls, node, prefix)


def _container(cfg: DictConfig, key: str) -> Any:
    try:
        node = OmegaConf.select(cfg, key, throw_on_missing=True)
        if isinstance(node, DictConfig):
            return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
        return node
    except OmegaConfBaseException as ex:
        err = describe(ex)
        raise ConfigError(err.key if err and err.key else key,
                          err.message if err else str(ex)) from None


def _typed_entry(entry: Any, kinds: dict, prefix: str, extras: dict | None = None):
    if not isinstance(entry, dict):
        raise ConfigError(prefix, f"expected a mapping with a 'type' key, got {entry!r}")
    entry = dict(entry)
    typ = entry.pop("type", None)
    if typ is None:
        raise ConfigError(f"{prefix}.type", f"missing; one of {', '.join(sorted(kinds))}")
    if typ not in kinds:
        known = ", ".join(sorted(kinds)) or "none registered"
        raise ConfigError(f"{prefix}.type", f"unknown type {typ!r} (known: {known})"
                          + did_you_mean(typ, kinds))
    taken = {}
    for k, default in (extras or {}).items():
        taken[k] = entry.pop(k, default)
    base = kinds[typ].config
    presets = getattr(kinds[typ], "presets", {})
    if "preset" in entry and presets:
        name = entry.pop("preset")
        if name not in presets:
            raise ConfigError(f"{prefix}.preset", f"unknown preset {name!r} for {typ} "
                              f"(known: {', '.join(sorted(presets))})" + did_you_mean(name, presets))
        taken["preset"] = name
        try:
            base = presets[name]()
        except ValueError as ex:
            raise from_value_error(prefix, ex) from None
    return typ, _to_object(entry, base, prefix), taken


# -- devices -------------------------------------------------------------------------------
def _bus(device: str, raw: Any) -> tuple | None:
    """``device.<name>.bus: {name: hba0, bandwidth_MBps: 300}``: the device sits behind
    the shared link ``name`` (``models.device.bus``); devices naming the same link share
    it, and must give it the same bandwidth."""
    if raw is None:
        return None
    key = f"device.{device}.bus"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ConfigError(key, f"expected {{name: <link>, bandwidth_MBps: <MB/s>}}, got {raw!r}")
    from models.device.bus import BusConfig

    rest = {k: v for k, v in raw.items() if k != "name"}
    return raw["name"], _to_object(rest, BusConfig, key)


def _queue_settings(kernel: KernelConfig, d: DeviceSpec, block: dict, over: dict | None,
                    nr_cpus: int) -> dict:
    """The queue keys of top-level device ``d``: ``device.<name>.queue`` over ``block``,
    with the kernel's default scheduler where it is null (``models/linux.py``): a
    device with several hardware queues (one per CPU at most) gets ``none``."""
    merged = {**block, **(over or {})}
    nvme = d.type == "nvme"
    sched = merged.get("scheduler")
    if sched is None:
        multi = nvme and min(int(getattr(d.config, "nr_queues", 1)), nr_cpus) > 1
        merged["scheduler"] = sched = kernel.default_scheduler(nvme, multi)
    else:
        why = kernel.check_scheduler(sched, nvme)
        if why is not None:
            key = (f"device.{d.name}.queue.scheduler" if over and over.get("scheduler")
                   else "block.scheduler")
            raise ConfigError(key, why)
    if sched in LEGACY_SCHEDULERS and merged.get("nr_requests") is None:
        merged["nr_requests"] = LEGACY_NR_REQUESTS
    return merged


def _devices(raw: dict, block: dict, kernel: KernelConfig = KernelConfig(),
             nr_cpus: int = 1) -> tuple[DeviceSpec, ...]:
    if not raw:
        raise ConfigError("device", "no devices configured")
    specs = {}
    queues = {}
    for name, entry in raw.items():
        if not str(name).isidentifier():
            raise ConfigError(f"device.{name}", "device names must be identifiers (sda, hdd0)")
        if name == "page_cache":   # fsstat.page_cache.* are the page cache's columns
            raise ConfigError(f"device.{name}", "reserved name; choose another")
        typ, cfg, taken = _typed_entry(entry, registry.DEVICES, f"device.{name}",
                                       extras={"queue": None, "fs": None, "bus": None})
        field = registry.DEVICES[typ].members_field
        members = tuple(getattr(cfg, field)) if field else ()
        fs_over = taken.get("fs")
        if fs_over is not None and not isinstance(fs_over, dict):
            raise ConfigError(f"device.{name}.fs", f"expected a mapping, got {fs_over!r}")
        specs[name] = DeviceSpec(name, typ, cfg, members, taken.get("preset"), fs=fs_over or None,
                                 bus=_bus(name, taken.get("bus")))
        queues[name] = taken.get("queue")

    owner: dict[str, str] = {}
    for d in specs.values():
        key = f"device.{d.name}.{registry.DEVICES[d.type].members_field}"
        if len(set(d.members)) != len(d.members):
            raise ConfigError(key, f"a device is listed twice in {list(d.members)}")
        for m in d.members:
            if m == d.name:
                raise ConfigError(key, f"{d.name!r} cannot be a member of itself")
            if m not in specs:
                raise ConfigError(key, f"unknown device {m!r} (configured: {', '.join(specs)})")
            if m in owner:
                raise ConfigError(key, f"device {m!r} is already a member of {owner[m]!r}")
            owner[m] = d.name

    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str, path: tuple[str, ...]) -> None:
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            raise ConfigError(f"device.{n}", f"member cycle {' -> '.join(path + (n,))}")
        state[n] = 1
        for m in specs[n].members:
            visit(m, path + (n,))
        state[n] = 2
        order.append(n)

    for n in specs:
        visit(n, ())

    links: dict = {}
    for n, d in specs.items():
        if d.bus is not None:
            first = links.setdefault(d.bus[0], (n, d.bus[1]))
            if first[1] != d.bus[1]:
                raise ConfigError(f"device.{n}.bus", f"link {d.bus[0]!r} has bandwidth_MBps "
                                  f"{first[1].bandwidth_MBps} on {first[0]!r}")
    for n, d in specs.items():
        over = queues[n]
        if n in owner:
            if over is not None:
                raise ConfigError(f"device.{n}.queue", f"{n!r} is a member of {owner[n]!r}, "
                                  "not a block device: it has no request queue")
            if d.fs is not None:
                raise ConfigError(f"device.{n}.fs", f"{n!r} is a member of {owner[n]!r}, "
                                  "not a block device: nothing is mounted on it")
            continue
        if over is not None and not isinstance(over, dict):
            raise ConfigError(f"device.{n}.queue", f"expected a mapping, got {over!r}")
        merged = _queue_settings(kernel, d, block, over, nr_cpus)
        specs[n] = dataclasses.replace(d, queue=_to_object(merged, BlockConfig, f"device.{n}.queue"))
    return tuple(specs[n] for n in order)


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
    run = _to_object(_container(cfg, "run"), RunConfig, "run")
    experiment = run.name or experiment
    results = _to_object(_container(cfg, "results"), ResultsConfig, "results")
    meta = _to_object(_container(cfg, "meta"), MetaConfig, "meta")
    kernel = _to_object(_container(cfg, "kernel"), KernelConfig, "kernel")
    block_raw = _container(cfg, "block") or {}
    block = _to_object(block_raw, BlockConfig, "block")
    cpu = _to_object(_container(cfg, "cpu"), CPUConfig, "cpu")
    devices = _devices(_container(cfg, "device") or {}, dict(block_raw), kernel, cpu.cores)
    fs_raw = dict(_container(cfg, "fs") or {})
    for key, value in kernel.fs_defaults().items():   # the kernel's, where left null
        if fs_raw.get(key) is None:
            fs_raw[key] = value
    fs = _to_object(fs_raw, FsConfig, "fs")
    page_cache = _to_object(_container(cfg, "page_cache"), PageCacheConfig, "page_cache")

    engine = None
    eng_raw = _container(cfg, "engine")
    if eng_raw:
        etyp, ecfg, _ = _typed_entry(eng_raw, registry.ENGINES, "engine")
        engine = EngineSpec(etyp, ecfg)

    wl_raw = _container(cfg, "workload") or {}
    if not wl_raw:
        raise ConfigError("workload", "no workload configured")
    typ = wl_raw.get("type") if isinstance(wl_raw, dict) else None
    kind = registry.WORKLOADS.get(typ)
    if kind is not None and kind.expand is not None:   # fio job files and option names
        wl_raw = kind.expand(wl_raw)
        typ = wl_raw.get("type")
        kind = registry.WORKLOADS.get(typ)
    extras = kind.extras if kind is not None else {}
    typ, wl_cfg, taken = _typed_entry(wl_raw, registry.WORKLOADS, "workload", extras)
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
    placed = _container(cfg, "placement") or {}
    if kind.on == "fs" and target is not None:      # fio direct=0: on its filename's device
        placed = _on_filename(placed, kind.files, str(target).removeprefix("/dev/"))
    placement = _placement(placed, used, top_order)
    mounts = _mounts(placement, devices, fs_raw, fs)
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


def _placement(raw: Any, used: list[str], top: list[str]) -> dict:
    """The device of every file class the run uses (``placement`` resolved)."""
    if not isinstance(raw, dict):
        raise ConfigError("placement", f"expected a mapping of file class -> device, got {raw!r}")
    classes = registry.file_classes()
    for cls, dev in raw.items():
        key = f"placement.{cls}"
        if cls != "default" and cls not in classes:
            raise ConfigError(key, f"unknown file class (known: default, {', '.join(classes)})"
                              + did_you_mean(cls, ["default", *classes]))
        if not isinstance(dev, str) or dev.removeprefix("/dev/") not in top:
            raise ConfigError(key, f"{dev!r} is not a configured block device "
                                   f"(top-level devices: {', '.join(top)})")
    out = {}
    for cls in used:
        dev = raw.get(cls, raw.get("default"))
        if dev is None:
            if len(top) != 1:
                raise ConfigError(f"placement.{cls}", "not placed: several block devices "
                                  f"({', '.join(top)}); set placement.{cls} or placement.default")
            dev = top[0]
        out[cls] = str(dev).removeprefix("/dev/")
    return out


def _on_filename(placed: Any, classes: tuple, dev: str) -> Any:
    """A filesystem workload that names its device (``filename``): its file classes are
    placed there; a ``placement`` that says another device is an error."""
    if not isinstance(placed, dict):
        return placed
    for cls in classes:
        other = placed.get(cls)
        if other is not None and str(other).removeprefix("/dev/") != dev:
            raise ConfigError(f"placement.{cls}", f"{other!r}, but workload.filename is "
                              f"{dev!r}; set one of them")
    return {**placed, **{cls: dev for cls in classes}}


def _mounts(placement: dict, devices, fs_raw: dict, fs: FsConfig) -> tuple:
    """One filesystem per device that holds a file, in device order; ``device.<name>.fs``
    keys over the ``fs`` section."""
    out = []
    for d in devices:
        if d.name not in placement.values():
            if d.fs is not None:     # checked even when nothing is mounted on it
                _to_object({**fs_raw, **d.fs}, FsConfig, f"device.{d.name}.fs")
            continue
        if d.fs is None:
            out.append(MountSpec(d.name, fs))
        else:
            out.append(MountSpec(d.name, _to_object({**fs_raw, **d.fs}, FsConfig,
                                                    f"device.{d.name}.fs"), True))
    return tuple(out)


def prepare(cfg: DictConfig, experiment: str = "default", code_version: str = "") -> RunSpec:
    """``validate`` plus a trial build of the whole stack (nothing is simulated)."""
    spec = validate(cfg, experiment, code_version)
    from .build import build

    build(spec)
    return spec
