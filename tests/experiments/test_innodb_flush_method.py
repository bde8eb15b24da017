"""innodb_flush_method=O_DSYNC through the pipeline (experiment=group_commit, a small
point): the log files are opened O_SYNC, so every commit's log write waits for the
device and no fsync is called - not the throughput of flush_log_at_trx_commit=2."""
import pytest

from tests.experiments.helpers import run_point

SMALL = "run.scale=0.005"      # 500 of the 100,000 queries per point


@pytest.fixture(scope="module")
def points():
    cases = {"O_DIRECT": (), "O_DSYNC": ("engine.innodb_flush_method=O_DSYNC",),
             "trx_commit_2": ("engine.innodb_flush_log_at_trx_commit=2",)}
    return {k: run_point("group_commit", SMALL, *ov) for k, ov in cases.items()}


def test_o_dsync_commits_wait_for_the_device_without_fsync(points):
    d, two = points["O_DSYNC"], points["trx_commit_2"]
    assert d["mysqlslap.fsyncs_redo"] == 0
    # one device write per log write (each its own group at concurrency 1), plus the
    # handful the background writes of the binlog add in both runs
    redo_writes = d["innodb.commit.redo.writes"]
    assert redo_writes == d["innodb.commit.redo.flushes"] == 2 * d["mysqlslap.transactions"]
    other = two["devstat.sda.completed_writes"]
    assert redo_writes <= d["devstat.sda.completed_writes"] <= redo_writes + other
    assert d["mysqlslap.tps"] < 0.5 * two["mysqlslap.tps"]
    assert d["mysqlslap.commit_lat_mean_ms"] > 5 * two["mysqlslap.commit_lat_mean_ms"]


def test_o_dsync_costs_what_a_write_plus_fsync_costs_on_ext3(points):
    """ext3 of the era: an O_SYNC overwrite of the preallocated log is one data write,
    as write() + fsync() is (no barrier, no commit for a timestamp-only change)."""
    d, o = points["O_DSYNC"], points["O_DIRECT"]
    assert o["mysqlslap.fsyncs_redo"] == o["innodb.commit.redo.writes"]
    assert d["devstat.sda.completed_writes"] == pytest.approx(
        o["devstat.sda.completed_writes"], abs=2)
    # O_DSYNC saves the fsync system call and its wake-up, nothing else
    assert d["mysqlslap.tps"] == pytest.approx(o["mysqlslap.tps"], rel=0.05)


def test_o_dsync_log_write_holds_log_sys_mutex_so_groups_do_not_form():
    """5.1's log_write_up_to writes the log buffer while holding log_sys->mutex; with
    O_SYNC files that write lasts until the device has it, so no thread can append
    meanwhile and the Plugin's group commit is lost (one log write per commit)."""
    r = run_point("group_commit", SMALL, "engine=innodb_plugin_104", "workload.concurrency=30",
                  "engine.innodb_flush_method=O_DSYNC")
    assert r["mysqlslap.fsyncs_redo"] == 0
    assert r["innodb.commit.redo.flushes"] > 0.9 * 2 * r["mysqlslap.transactions"]
