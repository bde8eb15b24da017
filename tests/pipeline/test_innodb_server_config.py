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
]


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:innodb_server")


@pytest.mark.parametrize("override,key,message", BAD, ids=[b[1] for b in BAD])
def test_bad_server_variables_are_one_line_exit_2(tmp_path, monkeypatch, capfd, override,
                                                  key, message):
    monkeypatch.chdir(tmp_path)
    code = main(["engine=innodb_server_56", "workload=mysqlslap_write",
                 f"results.dir={tmp_path / 'out'}", override])
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert lines[0].startswith(f"error: {key}: ") and message in lines[0], lines[0]
    assert all_files(tmp_path) == []
