"""models.checks: the range checks the config dataclasses share, and their messages."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from models.block.config import BlockConfig
from models.checks import MAX_SECONDS, above, at_least, at_most
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
    at_most(Cfg(), MAX_SECONDS, "delay_us", "rate")
    at_least(Cfg(count=0), 1)                   # no keys: nothing to check


@pytest.mark.parametrize("cfg, minimum, key, text", [
    (Cfg(count=0), 1, "count", "count: must be >= 1, got 0"),
    (Cfg(count=-3), 0, "count", "count: must be >= 0, got -3"),
    (Cfg(delay_us=-0.5), 0, "delay_us", "delay_us: must be >= 0, got -0.5"),
    (Cfg(depth=3), 4, "depth", "depth: must be >= 4, got 3"),
    (Cfg(delay_us=1.0), 1.5, "delay_us", "delay_us: must be >= 1.5, got 1.0"),
    (Cfg(delay_us=math.nan), 0, "delay_us", "delay_us: must be >= 0, got nan"),
    (Cfg(delay_us=-math.inf), 0, "delay_us", "delay_us: must be >= 0, got -inf"),
    (Cfg(rate=math.inf), 0, "rate", "rate: must be a finite number >= 0, got inf"),
])
def test_at_least_message(cfg, minimum, key, text):
    assert message(at_least, cfg, minimum, key) == text


@pytest.mark.parametrize("cfg, key, text", [
    (Cfg(rate=0.0), "rate", "rate: must be > 0, got 0.0"),
    (Cfg(rate=-2.5), "rate", "rate: must be > 0, got -2.5"),
    (Cfg(count=0), "count", "count: must be > 0, got 0"),
    (Cfg(rate=math.nan), "rate", "rate: must be > 0, got nan"),
    (Cfg(rate=math.inf), "rate", "rate: must be a finite number > 0, got inf"),
])
def test_above_message(cfg, key, text):
    assert message(above, cfg, 0, key) == text


@pytest.mark.parametrize("cfg, text", [
    (Cfg(delay_us=1e30), "delay_us: must be <= 1e+09, got 1e+30"),
    (Cfg(delay_us=math.inf), "delay_us: must be <= 1e+09, got inf"),
    (Cfg(delay_us=math.nan), "delay_us: must be <= 1e+09, got nan"),
])
def test_at_most_message(cfg, text):
    assert message(at_most, cfg, MAX_SECONDS, "delay_us") == text


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
    (CPUConfig, {"ghz": math.inf}, "ghz: must be a finite number > 0, got inf"),
    (CPUConfig, {"wakeup_us": 1e30}, "wakeup_us: must be <= 1e+15, got 1e+30"),
    (BlockConfig, {"read_expire_ms": math.inf}, "read_expire_ms: must be a finite number > 0, got inf"),
    (BlockConfig, {"fifo_batch": 0, "quantum": 0}, "fifo_batch: must be >= 1, got 0"),
    (RAMConfig, {"capacity_bytes": 100}, "capacity_bytes: must be >= 4096, got 100"),
    (RAIDConfig, {"destage_max_bytes": 0}, "destage_max_bytes: must be >= 512, got 0"),
])
def test_config_classes_keep_their_messages(cls, kwargs, text):
    with pytest.raises(ValueError) as info:
        cls(**kwargs)
    assert str(info.value) == text
