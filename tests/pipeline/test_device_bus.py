"""``device.<name>.bus``: devices behind one shared link (a host bus adapter); a wrong
entry is one line naming the key."""
import pytest

from pipeline.build import build
from pipeline.errors import ConfigError
from pipeline.spec import validate

TWO_SSDS = ("device@device.sda=ssd_x25e", "+device@device.sdb=ssd_x25e",
            "workload=fio_randread", "workload.filename=sdb", "workload.size=1g")


def test_two_ssds_share_one_link_and_its_bandwidth_is_a_parameter(compose):
    cfg = compose(*TWO_SSDS, "+device.sda.bus={name: hba0, bandwidth_MBps: 300}",
                  "+device.sdb.bus={name: hba0, bandwidth_MBps: 300}")
    spec = validate(cfg, "bus")
    assert spec.params["device.sda.bus.name"] == spec.params["device.sdb.bus.name"] == "hba0"
    assert spec.params["device.sdb.bus.bandwidth_MBps"] == 300
    stack = build(spec)
    a, b = stack.devices["sda"], stack.devices["sdb"]
    assert a.bus is b.bus and a.bus.cfg.bandwidth_MBps == 300
    assert validate(compose(*TWO_SSDS), "bus").config_hash != spec.config_hash


def test_a_link_with_two_bandwidths_or_no_name_is_bad_input(compose):
    cfg = compose(*TWO_SSDS, "+device.sda.bus={name: hba0, bandwidth_MBps: 300}",
                  "+device.sdb.bus={name: hba0, bandwidth_MBps: 600}")
    with pytest.raises(ConfigError, match=r"device.sdb.bus: link 'hba0' has bandwidth_MBps 300"):
        validate(cfg, "bus")
    with pytest.raises(ConfigError, match=r"device.sda.bus: expected \{name"):
        validate(compose(*TWO_SSDS, "+device.sda.bus={bandwidth_MBps: 300}"), "bus")
    with pytest.raises(ConfigError, match=r"device.sda.bus.bandwidth_MBps"):
        validate(compose(*TWO_SSDS, "+device.sda.bus={name: x, bandwidth_MBps: -1}"), "bus")
