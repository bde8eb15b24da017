"""The one explicit map from a config's ``type`` to a model's config class and builder.

YAML names a type (``type: hdd``) and optionally a preset (``preset: cheetah_15k7``, a
config derived in code from a data sheet, whose fields the entry may override); this
module says which frozen config dataclass
validates it and how the model object is constructed. No module paths or ``_target_``
strings live in YAML: adding a model means adding one line here.

Each device builder is ``make(sim, name, cfg, members, rng) -> Device`` where
``members`` are the already-built devices named in the config's ``members`` field
(RAID), in order. Each workload builder is ``make(sim, cfg, queue, rng, scale)`` and
returns an object with ``start()`` and ``results() -> dict`` (and optionally
``iostat() -> dict`` for its own queue over its measured interval).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from models.workload.fio import FioConfig, FioJob


@dataclass(frozen=True)
class DeviceKind:
    config: type
    make: Callable[..., Any]
    # the config field that names other devices (RAID members), if any
    members_field: str | None = None
    # named starting points (``preset: cheetah_15k7``): functions returning a config
    # derived from a data sheet; the entry's other keys override its fields
    presets: dict = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadKind:
    config: type
    make: Callable[..., Any]
    # pipeline-level keys beside the model's own options, with defaults:
    # ``filename`` is the block device the job runs against (fio's own option name).
    extras: dict = field(default_factory=dict)


def _construct(cls: type, sim, name: str, cfg, members, rng):
    """``cls(sim, name, cfg)``, passing ``members=`` / ``rng=`` when the model takes them."""
    params = inspect.signature(cls).parameters
    kw = {}
    if "members" in params:
        kw["members"] = members
    if "rng" in params:
        kw["rng"] = rng
    return cls(sim, name, cfg, **kw)


def _device(config: type, cls: type, members_field: str | None = None,
            presets: dict | None = None) -> DeviceKind:
    return DeviceKind(config, lambda sim, name, cfg, members, rng:
                      _construct(cls, sim, name, cfg, members, rng), members_field,
                      presets or {})


from models.device.hdd import HDD, HDDConfig, default_15k_sas  # noqa: E402
from models.device.ssd import SSD, SSDConfig  # noqa: E402

DEVICES: dict[str, DeviceKind] = {
    "hdd": _device(HDDConfig, HDD, presets={"cheetah_15k7": default_15k_sas}),
    "ssd": _device(SSDConfig, SSD),
}
WORKLOADS: dict[str, WorkloadKind] = {
    "fio": WorkloadKind(FioConfig,
                        lambda sim, cfg, queue, rng, scale: FioJob(sim, cfg, queue, rng),
                        extras={"filename": "sda"}),
}


def _optional(module: str):
    """Import a model module that may not have landed yet (None if it is absent;
    any other import error is raised)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as ex:
        if ex.name == module:
            return None
        raise


_ram = _optional("models.device.ram")
if _ram is not None:
    DEVICES["ram"] = _device(_ram.RAMConfig, _ram.RAM)
_raid = _optional("models.device.raid")
if _raid is not None:
    DEVICES["raid"] = _device(_raid.RAIDConfig, _raid.RAID, members_field="members")
_full_scan = _optional("models.workload.full_scan")
if _full_scan is not None:
    # E1: InnoDB full-table scan; `filename` is the block device holding the .ibd file
    WORKLOADS["full_scan"] = WorkloadKind(
        _full_scan.FullScanConfig,
        lambda sim, cfg, queue, rng, scale: _full_scan.FullScan(sim, cfg, queue, rng, scale),
        extras={"filename": "sda"})
