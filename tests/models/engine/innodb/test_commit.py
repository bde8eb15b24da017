"""The three commit protocols: exact orderings, fsyncs per transaction, and the
throughput each ordering allows. Device: a FIFO fake serving every command in 100 us
(a battery-backed controller cache) behind a fake filesystem whose fsync is one
write (no barrier)."""
import pytest

from models.engine.cpu import CPUConfig
from models.engine.innodb.commit_base import CommitConfig
from models.engine.innodb.server import InnoDBServerConfig
from tests.models.engine.stack import run_slap

US = 1_000
QUERIES = 1_000
PROTOCOLS = ("mysql51_builtin", "innodb_plugin_104", "mysql56_binlog_group_commit")


def _ops(fs, t_from=1):
    """(op, file) of every call after start-up (the binlog's first file and index)."""
    return [(c[1], c[2].split(".")[0].rstrip("0123456789")) for c in fs.calls if c[0] >= t_from]


@pytest.mark.parametrize("proto,expected", [
    ("mysql51_builtin", [("pwrite", "ib_logfile"), ("fsync", "ib_logfile"),
                         ("pwrite", "mysql-bin"), ("pwrite", "ib_logfile"),
                         ("fsync", "ib_logfile")]),
    ("innodb_plugin_104", [("pwrite", "ib_logfile"), ("fsync", "ib_logfile"),
                           ("pwrite", "mysql-bin"), ("pwrite", "ib_logfile"),
                           ("fsync", "ib_logfile")]),
    # 5.6: the commit record is not flushed (HA_IGNORE_DURABILITY)
    ("mysql56_binlog_group_commit", [("pwrite", "ib_logfile"), ("fsync", "ib_logfile"),
                                     ("pwrite", "mysql-bin")]),
])
def test_one_transaction_call_order(proto, expected):
    r, eng, sim, fs, q = run_slap(1, 1, commit_protocol=proto)
    assert _ops(fs) == expected
    assert eng.trx_committed == 1


def test_support_xa_0_skips_the_prepare_flush():
    r, eng, sim, fs, q = run_slap(1, 1, commit_protocol="mysql51_builtin",
                                  innodb_support_xa=False)
    assert _ops(fs) == [("pwrite", "mysql-bin"), ("pwrite", "ib_logfile"),
                        ("fsync", "ib_logfile")]


def _three_threads(proto):
    """Three clients with one INSERT each, all ready to prepare at the same instant;
    returns the start times (us) of the redo fsyncs and the engine."""
    r, eng, sim, fs, q = run_slap(3, 3, commit_protocol=proto, cpu=CPUConfig(wakeup_us=0))
    return [c[0] // US for c in fs.calls if c[1] == "fsync" and c[2].startswith("ib_")], eng


def test_builtin_serialises_whole_commits_plugin_shares_fsyncs():
    builtin, eng_b = _three_threads("mysql51_builtin")
    # 2 fsyncs each, none shared; each commit starts after the previous one's fsync
    assert len(builtin) == 6 and eng_b.redo.flush_waits == 0
    assert all(b - a >= 100 for a, b in zip(builtin, builtin[1:]))
    plugin, eng_p = _three_threads("innodb_plugin_104")
    # A's prepare flush starts first; B and C wait for it and B's next flush covers C
    # (and A's commit record, appended meanwhile): fewer fsyncs than transactions x 2
    assert eng_p.redo.flush_waits >= 2 and len(plugin) <= 4
    assert eng_p.trx_committed == 3


@pytest.mark.parametrize("xa,per_trx", [(True, 2.0), (False, 1.0)])
def test_builtin_fsyncs_per_transaction_at_every_concurrency(xa, per_trx):
    tps = []
    for c in (1, 5, 20, 50):
        r, *_ = run_slap(c, QUERIES, commit_protocol="mysql51_builtin", innodb_support_xa=xa)
        assert r["fsyncs_per_trx_redo"] == pytest.approx(per_trx, rel=0.02)
        assert r["redo_group_size_avg"] == pytest.approx(1.0)
        tps.append(r["tps"])
    # flat from 5 connections on: the serial section is the bottleneck
    assert max(tps[1:]) / min(tps[1:]) < 1.02


def test_builtin_throughput_is_one_over_the_serial_section():
    """With >1 connection the server is a single queue (prepare_commit_mutex) whose
    service is: switch-in of the woken waiter, prepare, fsync, binlog write, commit,
    fsync. Fsync = 100 us device + page write; the statement CPU overlaps. The
    prepare and commit CPU is their latched sections: kernel_mutex, rseg->mutex,
    log_sys->mutex; the commit's lock_table_dequeue steps over the IX locks of the
    transactions queued behind (all other 9 clients have inserted and wait)."""
    cfg = CommitConfig()
    cpu = CPUConfig()
    ns = lambda cycles: round(cycles / cpu.ghz)
    k = cfg.kernel_mutex_cycles
    prepare = k + cfg.prepare_cycles + cfg.mtr_commit_cycles + k + k

    def commit(behind):
        return (k + cfg.commit_cycles + cfg.mtr_commit_cycles + cfg.lock_release_cycles
                + behind * cfg.lock_queue_step_cycles + cfg.undo_cleanup_cycles + k)

    section = (cpu.wakeup_us * US + ns(prepare) + 100 * US + ns(cfg.binlog_cycles)
               + ns(commit(9)) + 100 * US)
    r, eng, *_ = run_slap(10, QUERIES, commit_protocol="mysql51_builtin")
    assert r["tps"] == pytest.approx(1e9 / section, rel=0.01)
    assert r["fsyncs_redo_s"] == pytest.approx(2e9 / section, rel=0.01)
    # one connection: the statement itself (wake-up + insert, every part of it) is
    # added, and nobody queues behind the commit
    r1, *_ = run_slap(1, QUERIES, commit_protocol="mysql51_builtin")
    insert = (InnoDBServerConfig().stmt_cycles + cfg.trx_start_cycles + cfg.lock_table_cycles
              + cfg.row_id_cycles + cfg.btr_search_cycles + cfg.lock_rec_cycles
              + cfg.undo_assign_cycles + cfg.undo_record_cycles + cfg.page_insert_cycles
              + 3 * cfg.mtr_commit_cycles)
    assert 60_000 < insert < 80_000            # a few tens of microseconds of one core
    single = section - ns(commit(9)) + ns(commit(0)) + ns(insert)
    assert r1["tps"] == pytest.approx(1e9 / single, rel=0.01)


def test_plugin_group_commit_emerges_with_concurrency():
    per_trx, tps = [], []
    for c in (1, 5, 10, 20):
        r, *_ = run_slap(c, QUERIES, commit_protocol="innodb_plugin_104")
        per_trx.append(r["fsyncs_per_trx_redo"])
        tps.append(r["tps"])
    assert per_trx[0] == pytest.approx(2.0)
    assert all(b < a for a, b in zip(per_trx, per_trx[1:]))
    assert all(b > a for a, b in zip(tps, tps[1:]))
    # past ~20 connections it stops growing: the waiters of each flush come back one
    # wake-up after another (the broadcast's chain); it still beats the built-in by far
    r30, *_ = run_slap(30, QUERIES, commit_protocol="innodb_plugin_104")
    assert r30["fsyncs_per_trx_redo"] < 0.5 * per_trx[0]
    builtin, *_ = run_slap(30, QUERIES, commit_protocol="mysql51_builtin")
    assert r30["tps"] / builtin["tps"] > 4


def test_sync_binlog_1_slow_in_old_protocols_fixed_by_56():
    res = {}
    for proto in PROTOCOLS:
        for c in (5, 30):
            r, *_ = run_slap(c, 1_000, commit_protocol=proto, sync_binlog=1)
            res[proto, c] = r
    for proto in ("mysql51_builtin", "innodb_plugin_104"):
        # one binlog fdatasync per commit, inside prepare_commit_mutex: no scaling
        assert res[proto, 30]["fsyncs_per_trx_binlog"] == pytest.approx(1.0)
        assert res[proto, 30]["tps"] < 1.1 * res[proto, 5]["tps"]
    new = res["mysql56_binlog_group_commit", 30]
    assert new["fsyncs_per_trx_binlog"] < 0.3
    assert new["tps"] > 3 * res["innodb_plugin_104", 30]["tps"]


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_binlog_off_every_protocol_group_commits(proto):
    r, eng, *_ = run_slap(20, QUERIES, commit_protocol=proto, log_bin=False)
    assert eng.binlog is None
    assert r["fsyncs_per_trx_redo"] < 0.25 and r["fsyncs_per_trx_binlog"] == 0


def test_56_stages_form_groups_and_order_commits_switch():
    # with sync_binlog=1 the sync stage takes an fsync: flushed groups queue for it
    r, eng, *_ = run_slap(30, QUERIES, commit_protocol="mysql56_binlog_group_commit",
                          sync_binlog=1)
    s = eng.stats()
    assert s["stage.sync.group_size_avg"] > 4
    assert s["binlog.fsyncs"] == s["stage.sync.groups"] < QUERIES / 2
    assert s["stage.commit.groups"] > 0
    assert eng.trx_committed == QUERIES
    r2, eng2, *_ = run_slap(30, QUERIES, commit_protocol="mysql56_binlog_group_commit",
                            sync_binlog=1, binlog_order_commits=False)
    s2 = eng2.stats()
    assert s2["stage.commit.groups"] == 0 and eng2.trx_committed == QUERIES


def test_without_controller_cache_fsyncs_cost_disk_time():
    """A 15k RPM disk rewriting the block it has just written waits about one
    revolution (4 ms) per fsync: here a 4 ms device."""
    slow = dict(service_ns=4_000_000)
    b, *_ = run_slap(10, 400, commit_protocol="mysql51_builtin", **slow)
    assert b["tps"] == pytest.approx(1e9 / 8.02e6, rel=0.02)
    p, _, _, fs, _ = run_slap(30, 1_500, commit_protocol="innodb_plugin_104", **slow)
    # the device's 250 writes a second: the redo fsyncs' and the zeros t1.ibd's growth
    # writes (autoextend: the new table grows page by page, one O_DIRECT write each)
    growth = sum(1 for c in fs.calls if c[1] == "pwrite" and c[2] == "t1.ibd")
    assert growth > 0
    assert (p["fsyncs_redo"] + growth) / p["seconds"] == pytest.approx(250, rel=0.03)
    assert p["redo_group_size_avg"] > 10
    assert p["tps"] / b["tps"] > 10


def test_commit_latency_reported():
    r, *_ = run_slap(5, 500, commit_protocol="innodb_plugin_104")
    assert 0 < r["commit_lat_p50_ms"] <= r["commit_lat_p99_ms"]
    assert r["commit_lat_count"] == 500


def test_config_rejects_unknown_protocol():
    with pytest.raises(ValueError, match="^commit_protocol:"):
        CommitConfig(commit_protocol="mysql57")
    with pytest.raises(ValueError, match="^sync_binlog:"):
        CommitConfig(sync_binlog=-1)
