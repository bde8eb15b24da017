"""The storage side of a run's spec: its devices (``device.<name>``: type, RAID members,
request queue, filesystem and bus overrides) and where its files go (``placement``,
the filesystems mounted). ``pipeline.spec.validate`` calls these; see its docstring
for the rules they enforce."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from . import registry
from .coerce import to_object, typed_entry
from .errors import ConfigError, did_you_mean

from models.block import LEGACY_NR_REQUESTS, LEGACY_SCHEDULERS, BlockConfig
from models.fs import FsConfig
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
class MountSpec:
    device: str
    config: FsConfig
    overridden: bool = False           # device.<name>.fs set keys of its own



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
    return raw["name"], to_object(rest, BusConfig, key)


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
    if sched == "deadline" and merged.get("deadline_contiguous_batches") is None:
        merged["deadline_contiguous_batches"] = kernel.deadline_contiguous_batches()
    if merged.get("flush_merging") is None:
        merged["flush_merging"] = kernel.flush_merging()
    if merged.get("blkdev_sync") is None:
        merged["blkdev_sync"] = kernel.blkdev_sync()
    if sched in LEGACY_SCHEDULERS:
        if merged.get("nr_requests") is None:
            merged["nr_requests"] = LEGACY_NR_REQUESTS
        if merged.get("request_lists") is None:
            merged["request_lists"] = kernel.request_lists()
    return merged


def parse_devices(raw: dict, block: dict, kernel: KernelConfig = KernelConfig(),
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
        typ, cfg, taken = typed_entry(entry, registry.DEVICES, f"device.{name}",
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
        specs[n] = dataclasses.replace(d, queue=to_object(merged, BlockConfig, f"device.{n}.queue"))
    return tuple(specs[n] for n in order)



# -- placement and mounts ------------------------------------------------------------------
def resolve_placement(raw: Any, used: list[str], top: list[str]) -> dict:
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


def on_filename(placed: Any, classes: tuple, dev: str) -> Any:
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


def resolve_mounts(placement: dict, devices, fs_raw: dict, fs: FsConfig) -> tuple:
    """One filesystem per device that holds a file, in device order; ``device.<name>.fs``
    keys over the ``fs`` section."""
    out = []
    for d in devices:
        if d.name not in placement.values():
            if d.fs is not None:     # checked even when nothing is mounted on it
                to_object({**fs_raw, **d.fs}, FsConfig, f"device.{d.name}.fs")
            continue
        if d.fs is None:
            out.append(MountSpec(d.name, fs))
        else:
            out.append(MountSpec(d.name, to_object({**fs_raw, **d.fs}, FsConfig,
                                                    f"device.{d.name}.fs"), True))
    return tuple(out)
