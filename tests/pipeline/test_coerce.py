"""Config values checked against a dataclass's own annotations (OmegaConf's rules)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pytest

from pipeline.coerce import build
from pipeline.errors import ConfigError


@dataclass(frozen=True)
class Zone:
    first: int
    runs: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.first < 0:
            raise ValueError(f"first: must be >= 0, got {self.first}")


@dataclass(frozen=True)
class Drive:
    rpm: float
    zones: tuple[Zone, ...] = ()
    name: str = "d"
    cache: bool = False
    depth: int = 1
    limit: Optional[int] = None
    curve: tuple[float, ...] = ()


def test_values_convert_like_omegaconf():
    d = build(Drive, {"rpm": 15000, "zones": [{"first": "3", "runs": [[1, 2], (5, 1)]}],
                      "name": 42, "cache": "true", "depth": "8", "limit": None,
                      "curve": [1, 2.5]}, "device.d")
    assert d == Drive(15000.0, (Zone(3, ((1, 2), (5, 1))),), "42", True, 8, None, (1.0, 2.5))
    assert isinstance(d.rpm, float) and isinstance(d.zones, tuple)


def test_a_preset_instance_supplies_the_defaults():
    preset = Drive(10000.0, depth=32)
    d = build(preset, {"depth": 4}, "device.d")
    assert (d.rpm, d.depth) == (10000.0, 4)


@pytest.mark.parametrize("values,key,match", [
    ({"rpm": 1, "rpmm": 2}, "device.d.rpmm", "Key 'rpmm' not in 'Drive'"),
    ({}, "device.d.rpm", "Missing mandatory value"),
    ({"rpm": "fast"}, "device.d.rpm", "could not be converted to Float"),
    ({"rpm": True}, "device.d.rpm", "could not be converted to Float"),
    ({"rpm": 1, "depth": 1.5}, "device.d.depth", "could not be converted to Integer"),
    ({"rpm": 1, "cache": "maybe"}, "device.d.cache", "could not be converted to Boolean"),
    ({"rpm": 1, "limit": "x"}, "device.d.limit", "could not be converted to Integer"),
    ({"rpm": 1, "curve": 3}, "device.d.curve", "expected a list"),
    ({"rpm": 1, "zones": [{"first": 0, "runs": [[1, 2, 3]]}]}, "device.d.zones[0].runs[0]",
     "expected 2 values"),
    ({"rpm": 1, "zones": [{"first": -1}]}, "device.d.zones[0].first", "must be >= 0"),
    ({"rpm": 1, "zones": [{"first": 0, "last": 1}]}, "device.d.zones[0].last", "not in 'Zone'"),
    ({"rpm": 1, "zones": ["z"]}, "device.d.zones[0]", "expected a mapping"),
])
def test_errors_name_the_full_key(values, key, match):
    with pytest.raises(ConfigError, match=match) as ei:
        build(Drive, values, "device.d")
    assert ei.value.key == key
