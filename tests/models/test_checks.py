"""models.checks: the range checks the config dataclasses share, and their messages."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from models.block.config import BlockConfig
from models.checks import above, at_least
from models.device.raid import RAIDConfig
from models.device.ram import RAMConfig
from models.engine.cpu import CPUConfig


@dataclass(frozen=True)
class Cfg:
    count: int = 1
    depth: int = 4
    delay_us: float = 0.0
    rate: float = 1.5
    unset: float | None = None


def message(check, cfg, minimum, *keys) -> str:
    with pytest.raises(ValueError) as info:
        check(cfg, minimum, *keys)
    return str(info.value)


def test_values_within_the_bound_pass():
    at_least(Cfg(), 1, "count", "depth")
    at_least(Cfg(), 0, "delay_us")              # the bound itself is allowed
    above(Cfg(), 0, "rate", "count")
    at_least(Cfg(rate=math.inf), 0, "rate")
    at_least(Cfg(count=0), 1)                   # no keys: nothing to check


@pytest.mark.parametrize("cfg, minimum, key, text", [
    (Cfg(count=0), 1, "count", "count: must be >= 1, got 0"),
    (Cfg(count=-3), 0, "count", "count: must be >= 0, got -3"),
    (Cfg(delay_us=-0.5), 0, "delay_us", "delay_us: must be >= 0, got -0.5"),
    (Cfg(depth=3), 4, "depth", "depth: must be >= 4, got 3"),
    (Cfg(delay_us=1.0), 1.5, "delay_us", "delay_us: must be >= 1.5, got 1.0"),
    (Cfg(delay_us=math.nan), 0, "delay_us", "delay_us: must be >= 0, got nan"),
    (Cfg(delay_us=-math.inf), 0, "delay_us", "delay_us: must be >= 0, got -inf"),
])
def test_at_least_message(cfg, minimum, key, text):
    assert message(at_least, cfg, minimum, key) == text


@pytest.mark.parametrize("cfg, key, text", [
    (Cfg(rate=0.0), "rate", "rate: must be > 0, got 0.0"),
    (Cfg(rate=-2.5), "rate", "rate: must be > 0, got -2.5"),
    (Cfg(count=0), "count", "count: must be > 0, got 0"),
    (Cfg(rate=math.nan), "rate", "rate: must be > 0, got nan"),
])
def test_above_message(cfg, key, text):
    assert message(above, cfg, 0, key) == text


def test_the_first_failing_key_in_the_given_order_is_reported():
    cfg = Cfg(count=0, depth=0)
    assert message(at_least, cfg, 1, "count", "depth") == "count: must be >= 1, got 0"
    assert message(at_least, cfg, 1, "depth", "count") == "depth: must be >= 1, got 0"
    assert message(at_least, Cfg(depth=0), 1, "count", "depth") == "depth: must be >= 1, got 0"


def test_the_message_starts_with_the_key_the_pipeline_reports_it_under():
    assert message(above, Cfg(rate=0.0), 0, "rate").startswith("rate:")


def test_none_is_not_a_value():
    # an optional key keeps its own ``is not None`` check; None here is a type error,
    # as the hand-written ``<`` was
    with pytest.raises(TypeError):
        at_least(Cfg(), 0, "unset")
    with pytest.raises(TypeError):
        above(Cfg(), 0, "unset")


def test_a_missing_key_is_an_attribute_error():
    with pytest.raises(AttributeError):
        at_least(Cfg(), 0, "no_such_key")


@pytest.mark.parametrize("cls, kwargs, text", [
    (CPUConfig, {"cores": 0}, "cores: must be >= 1, got 0"),
    (CPUConfig, {"ghz": 0.0}, "ghz: must be > 0, got 0.0"),
    (BlockConfig, {"fifo_batch": 0, "quantum": 0}, "fifo_batch: must be >= 1, got 0"),
    (RAMConfig, {"capacity_bytes": 100}, "capacity_bytes: must be >= 4096, got 100"),
    (RAIDConfig, {"destage_max_bytes": 0}, "destage_max_bytes: must be >= 512, got 0"),
])
def test_config_classes_keep_their_messages(cls, kwargs, text):
    with pytest.raises(ValueError) as info:
        cls(**kwargs)
    assert str(info.value) == text
