"""engine=innodb_server_56: bad server variables are one line naming the key, exit 2,
no file written (validation and the trial build run before anything is simulated)."""
from __future__ import annotations

import pytest

import pipeline.version
from pipeline.run import main

from .helpers import all_files

BAD = [
    ("engine.innodb_io_capacity=50", "engine.innodb_io_capacity", "must be >= 100"),
    ("engine.innodb_io_capacity_max=100", "engine.innodb_io_capacity_max",
     "must be >= innodb_io_capacity"),
    ("engine.innodb_bogus=1", "engine.innodb_bogus", "not in 'InnoDBServerConfig'"),
    ("engine.version=5.7", "engine.version", "must be one of 5.1, 5.5, 5.6"),
    ("engine.innodb_flush_neighbors=3", "engine.innodb_flush_neighbors", "must be 0, 1 or 2"),
    ("engine.innodb_max_dirty_pages_pct=120", "engine.innodb_max_dirty_pages_pct", "0..99"),
    ("engine.innodb_buffer_pool_size=64G", "engine.innodb_buffer_pool_size",
     "larger than the machine's memory"),
    ("engine.innodb_log_file_size=512K", "engine.innodb_log_file_size",
     "the log files are too small"),
    ("engine.innodb_data_file_path=ibdata1", "engine.innodb_data_file_path",
     "expected name:size[:autoextend]"),
    ("engine.innodb_autoextend_increment=0", "engine.innodb_autoextend_increment",
     "must be in 1..1000"),
    ("engine.innodb_autoextend_increment=2000", "engine.innodb_autoextend_increment",
     "must be in 1..1000"),
    ("engine.innodb_change_buffering=most", "engine.innodb_change_buffering",
     "must be one of none, inserts, deletes"),
    ("engine.innodb_change_buffer_max_size=51", "engine.innodb_change_buffer_max_size",
     "must be in 0..50"),
]


def _one_line_exit_2(code: int, err: str, key: str, message: str, tmp_path) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert lines[0].startswith(f"error: {key}: ") and message in lines[0], lines[0]
    assert all_files(tmp_path) == []


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:innodb_server")


@pytest.mark.parametrize("override,key,message", BAD, ids=[b[1] for b in BAD])
def test_bad_server_variables_are_one_line_exit_2(tmp_path, monkeypatch, capfd, override,
                                                  key, message):
    monkeypatch.chdir(tmp_path)
    code = main(["engine=innodb_server_56", "workload=mysqlslap_write",
                 f"results.dir={tmp_path / 'out'}", override])
    _one_line_exit_2(code, capfd.readouterr().err, key, message, tmp_path)


# with the workload that lays tables out (sysbench: ``create_tables`` at build time), and
# keys whose check needs another section (the page cache's memory, the thread limit)
BAD_SYSBENCH = [
    (["engine.innodb_data_file_path=ibdata1:12M", "engine.innodb_file_per_table=false"],
     "engine.innodb_data_file_path", "ibdata1 is too small for the tables"),
    (["engine.innodb_log_file_size=1M", "engine.innodb_thread_concurrency=64"],
     "engine.innodb_log_file_size", "too small for innodb_thread_concurrency 64"),
    (["engine.innodb_buffer_pool_size=2G", "page_cache.memory_bytes=1g"],
     "engine.innodb_buffer_pool_size", "larger than the machine's memory"),
    (["engine.innodb_old_blocks_pct=2"], "engine.innodb_old_blocks_pct", "must be in 5..95"),
    (["engine.innodb_lru_scan_depth=10"], "engine.innodb_lru_scan_depth", "must be >= 100"),
    # MySQL's limit on the log group (was: 8 TB of per-page arrays, killed by the OOM killer)
    (["engine.innodb_log_file_size=4t"], "engine.innodb_log_file_size",
     "combined size (innodb_log_files_in_group x innodb_log_file_size) must be < 512G on 5.6, "
     "got 2 x 4t"),
    (["engine.version=5.5", "engine.innodb_log_file_size=2G"], "engine.innodb_log_file_size",
     "must be < 4G on 5.5, got 2 x 2G"),
    (["engine.innodb_log_files_in_group=101"], "engine.innodb_log_files_in_group",
     "must be in 2..100"),
    # files that do not fit their filesystem (a 2 GB / 1 GB drive: ext4 keeps 256 MB)
    (["device.sda.capacity_bytes=2g", "engine.innodb_log_file_size=1g"],
     "engine.innodb_log_file_size",
     "ib_logfile1 (1G) does not fit on the filesystem of sda: 768M left for files; make "
     "innodb_log_file_size or innodb_log_files_in_group smaller"),
    (["device.sda.capacity_bytes=2g", "engine.innodb_data_file_path=ibdata1:2G:autoextend"],
     "engine.innodb_data_file_path", "ibdata1 (2G) does not fit on the filesystem of sda"),
    (["device.sda.capacity_bytes=1g", "workload.tables=4", "workload.table_size=1000000"],
     "placement.tablespace", "sbtest3.ibd (227.6M) does not fit on the filesystem of sda"),
    (["device.sda.capacity_bytes=1g", "workload.tables=4", "workload.table_size=1000000",
      "engine.innodb_file_per_table=false"],
     "placement.system", "ibdata1 with the tables (694.9M) does not fit on the filesystem of sda"),
]


@pytest.mark.parametrize("overrides,key,message", BAD_SYSBENCH,
                         ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD_SYSBENCH)])
def test_bad_server_input_under_sysbench_is_one_line_exit_2(tmp_path, monkeypatch, capfd,
                                                            overrides, key, message):
    monkeypatch.chdir(tmp_path)
    code = main(["engine=innodb_server_56", "workload=sysbench", "workload.table_size=1000",
                 f"results.dir={tmp_path / 'out'}", *overrides])
    _one_line_exit_2(code, capfd.readouterr().err, key, message, tmp_path)


def test_the_log_size_rule_is_innodbs_both_ways():
    """``log_calc_max_ages``: 2 x 1M of log holds the margins of 10 threads
    (``innodb_thread_concurrency=0``) but not of 10 + 64; 2 x 6M holds both."""
    from models.engine.innodb.log_checkpoint import calc_max_ages

    capacity = 2 * (2**20 - 2048)
    assert calc_max_ages(capacity, 0)["max_checkpoint_age"] > 0
    with pytest.raises(ValueError, match="^innodb_log_file_size: .*too small"):
        calc_max_ages(capacity, 64)
    assert calc_max_ages(2 * (6 * 2**20 - 2048), 64)["max_checkpoint_age"] > 0
