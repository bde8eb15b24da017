"""Size strings in every ``*_bytes`` key of a model config (pipeline.coerce): fio's
suffixes (k = 1024), checked like any other value."""
import pytest

from models.device.ssd import SSDConfig
from pipeline.coerce import build
from pipeline.errors import ConfigError


def test_a_bytes_key_takes_a_size_string():
    cfg = build(SSDConfig, {"capacity_bytes": "32g", "raw_capacity_bytes": "36g",
                            "write_cache_bytes": "512k"}, "device.sda")
    assert cfg.capacity_bytes == 32 * 2**30
    assert cfg.raw_capacity_bytes == 36 * 2**30
    assert cfg.write_cache_bytes == 512 * 1024


def test_a_bad_size_string_names_the_key():
    with pytest.raises(ConfigError) as ex:
        build(SSDConfig, {"write_cache_bytes": "lots"}, "device.sda")
    assert ex.value.key == "device.sda.write_cache_bytes"


def test_other_int_keys_take_no_suffix():
    with pytest.raises(ConfigError) as ex:
        build(SSDConfig, {"channels": "4k"}, "device.sda")
    assert ex.value.key == "device.sda.channels"
