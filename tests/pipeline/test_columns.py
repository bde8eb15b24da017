"""Which result columns are parameters of the run (pipeline.columns)."""
import pytest

from pipeline.columns import is_param


@pytest.mark.parametrize("col", ["device.sda.rpm", "cpu.wakeup_us", "page_cache.memory_bytes",
                                 "fs.wakeup_ns", "engine.sync_binlog", "run.scale",
                                 "placement.redo_log", "block.nr_requests",
                                 "workload.iodepth"])
def test_config_sections_are_parameters(col):
    assert is_param(col)


@pytest.mark.parametrize("col", ["cpustat.util_pct", "iostat.sda.r_s", "mysqlslap.tps",
                                 "innodb.commit.redo.fsyncs", "fsstat.sda.commits", "status",
                                 "wall_seconds"])
def test_metrics_and_run_metadata_are_not(col):
    assert not is_param(col)
