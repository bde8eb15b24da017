"""Files on devices: placement, mounted filesystems, the engine section and their
parameter and metric columns."""
from __future__ import annotations

import pytest

from pipeline.build import build, simulate
from pipeline.errors import ConfigError
from pipeline.spec import validate

SECTIONS = ("run", "results", "device", "block", "fs", "page_cache", "placement", "engine",
            "cpu", "workload")
SLAP = ("workload=mysqlslap_write", "engine=innodb_plugin_104", "workload.number_of_queries=40",
        "workload.concurrency=4", "engine.innodb_log_file_size=8M")
TWO = ("+device@device.sdb=ssd_x25e",)


def _error(compose, *overrides) -> ConfigError:
    with pytest.raises(ConfigError) as ei:
        validate(compose(*overrides))
    return ei.value


def test_placement_on_a_device_that_is_not_configured_names_the_key(compose):
    err = _error(compose, *SLAP, "placement.binlog=sdb")
    assert err.key == "placement.binlog" and "'sdb'" in err.message


def test_placement_on_a_raid_member_is_an_error(compose):
    err = _error(compose, "experiment=group_commit", "placement.redo_log=hdd0")
    assert err.key == "placement.redo_log" and "top-level devices: sda" in err.message


def test_unknown_file_class_is_an_error(compose):
    err = _error(compose, *SLAP, "+placement.ibdatta=sda")
    assert err.key == "placement.ibdatta" and "unknown file class" in err.message


def test_with_two_block_devices_every_used_class_must_be_placed(compose):
    err = _error(compose, *SLAP, *TWO, "placement.redo_log=sda")
    assert err.key == "placement.tablespace" and "not placed" in err.message
    err = _error(compose, *SLAP, *TWO, "placement.redo_log=sda", "placement.tablespace=sda",
                 "placement.system=sda")
    assert err.key == "placement.binlog" and "not placed" in err.message
    spec = validate(compose(*SLAP, *TWO, "placement.default=sdb", "placement.redo_log=sda"))
    assert spec.placement == {"tablespace": "sdb", "system": "sdb", "redo_log": "sda",
                              "binlog": "sdb"}
    assert spec.params["placement.binlog"] == "sdb"


def test_engine_is_required_by_mysqlslap_and_refused_by_fio(compose):
    assert _error(compose, "workload=mysqlslap_write").key == "engine"
    err = _error(compose, "engine=mysql51_builtin")
    assert err.key == "engine" and "engine=null" in err.message


def test_raw_device_runs_carry_no_fs_or_engine_columns(compose):
    spec = validate(compose())
    assert not spec.mounts and spec.engine is None and not spec.placement
    assert not any(k.split(".")[0] in ("fs", "page_cache", "placement", "engine", "cpu")
                   for k in spec.params)


def test_redo_and_binlog_on_two_devices_share_one_page_cache(compose):
    spec = validate(compose(*SLAP, *TWO, "placement.redo_log=sda", "placement.binlog=sdb",
                            "placement.default=sda",
                            "+device.sdb.fs.type=xfs", "fs=ext3", "engine.sync_binlog=1"))
    assert [(m.device, m.config.type, m.overridden) for m in spec.mounts] == [
        ("sda", "ext3", False), ("sdb", "xfs", True)]
    assert spec.params["fs.type"] == "ext3" and spec.params["device.sdb.fs.type"] == "xfs"
    assert "device.sda.fs.type" not in spec.params
    stack = build(spec)
    a, b = stack.filesystems["sda"], stack.filesystems["sdb"]
    assert a.cache is b.cache is stack.page_cache
    assert set(a.files) == {"ib_logfile0", "ib_logfile1", "t1.ibd"}    # ibdata1 at start
    assert "mysql-bin.index" in b.files
    m = simulate(spec).summary
    assert m["mysqlslap.transactions"] == 40
    assert m["innodb.commit.binlog.fsyncs"] >= 40 - 4       # sync_binlog=1: groups of <= 4
    assert m["fsstat.sdb.pages_written"] > 0 and m["iostat.sdb.w_s"] > 0
    assert m["innodb.commit.redo.fsyncs"] > 0 and m["iostat.sda.w_s"] > 0
    assert m["cpustat.cores"] == 16
    assert not any(k.split(".")[0] in SECTIONS for k in m), "a metric column looks like a parameter"


def test_fs_override_of_a_raid_member_is_an_error(compose):
    err = _error(compose, "experiment=group_commit", "+device.hdd0.fs.type=xfs")
    assert err.key == "device.hdd0.fs"


def test_fs_values_are_range_checked_with_their_key(compose):
    err = _error(compose, "workload=fsync_bench", "fs.journal_bytes=4k")
    assert err.key == "fs.journal_bytes"
    err = _error(compose, "workload=fsync_bench", "+device.sda.fs.type=ntfs")
    assert err.key == "device.sda.fs.type"
