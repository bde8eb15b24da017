"""The commit path on the real filesystem layer (ext3 over the Linux block layer):
fsync costs come from the device and the filesystem, not from the engine."""
import pytest

from models.block import BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.device.raid import RAID, RAIDConfig
from models.engine.cpu import CPUConfig
from models.engine.innodb import fs_open_file
from models.engine.innodb.server import InnoDBServerConfig, make_innodb_server
from models.fs import Filesystem, FsConfig
from models.sim import Simulator
from models.workload.mysqlslap import Mysqlslap, MysqlslapConfig
from tests.models.fakes import FixedDevice


def run(device, concurrency, queries, **engine):
    sim = Simulator()
    dev = device(sim)
    q = BlockQueue(sim, dev)
    fs = Filesystem(sim, FsConfig(type="ext3"), q)
    engine.setdefault("innodb_log_file_size", "64M")
    cfg = InnoDBServerConfig(**engine)
    eng = make_innodb_server(sim, cfg, CPUConfig(), fs, fs, fs,
                             fs_open_file(fs, cfg.log_files_cached))
    slap = Mysqlslap(sim, MysqlslapConfig(concurrency=concurrency,
                                          number_of_queries=queries), eng)
    before = q.snapshot()
    slap.start()
    sim.run()
    r = slap.results()
    r["iostat"] = q.iostat(before)
    r["fs"] = fs.stats()
    return r


def cache_100us(sim):
    """Stand-in for a battery-backed controller cache: every write 0.1 ms."""
    return FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=300 << 30,
                       name="sda")


def disk_15k(sim):
    """A 15k RPM SAS drive, write cache off (write-through, as behind a RAID card
    without a battery)."""
    return HDD(sim, "sda", default_15k_sas(write_cache=False))


def raid1(battery_backed):
    """The E2 storage: two 15k RPM SAS drives (their own caches off) in RAID 1 behind a
    controller whose write-back cache is battery-backed or not (write-through)."""
    def make(sim):
        disks = [HDD(sim, f"hdd{i}", default_15k_sas(write_cache=False)) for i in range(2)]
        return RAID(sim, "sda", RAIDConfig(level=1, battery_backed=battery_backed), disks)
    return make


@pytest.mark.parametrize("xa,per_trx", [(True, 2.0), (False, 1.0)])
def test_builtin_on_battery_backed_raid_runs_at_the_fsync_ceiling(xa, per_trx):
    """Published: ~10,000 fsync/s with the BBU cache, 2 (xa=1) or 1 (xa=0) per
    transaction. The ceiling comes from the controller (~0.1 ms per cached write) and
    the kernel path, not from the engine."""
    r = run(raid1(True), 10, 400, commit_protocol="mysql51_builtin", innodb_support_xa=xa)
    assert r["fsyncs_per_trx_redo"] == pytest.approx(per_trx, rel=0.02)
    assert 8_500 < r["fsyncs_redo_s"] < 10_500
    r0 = run(raid1(False), 5, 60, commit_protocol="mysql51_builtin", innodb_support_xa=xa)
    assert r0["fsyncs_redo_s"] == pytest.approx(250, rel=0.05)    # one per revolution


@pytest.mark.parametrize("xa,per_trx", [(True, 2.0), (False, 1.0)])
def test_builtin_fsyncs_per_trx_and_flat_throughput(xa, per_trx):
    tps = []
    for c in (1, 10, 50):
        r = run(cache_100us, c, 400, commit_protocol="mysql51_builtin", innodb_support_xa=xa)
        assert r["fsyncs_per_trx_redo"] == pytest.approx(per_trx, rel=0.02)
        tps.append(r["tps"])
    assert tps[2] == pytest.approx(tps[1], rel=0.02)
    # the device is kept busy by the serial fsyncs: most of its time is log writes (the
    # rest: the mutex hand-off and the wake-ups after each fsync, ~20 us each)
    assert r["iostat"]["util_pct"] > 60
    # every commit's log write reaches the device; the rest are t1.ibd's growth (the new
    # table's file extended page by page: zeros, an fsync, its journal commit)
    assert per_trx * tps[2] <= r["iostat"]["w_s"] < 1.15 * per_trx * tps[2]


def test_plugin_shares_fsyncs_on_the_cached_device():
    b = run(cache_100us, 30, 600, commit_protocol="mysql51_builtin")
    p = run(cache_100us, 30, 900, commit_protocol="innodb_plugin_104")
    assert p["fsyncs_per_trx_redo"] < 0.5
    assert p["tps"] / b["tps"] > 4


def test_without_cache_fsync_is_rotation_bound():
    """Each log write rewrites the block that has just passed under the head: about one
    revolution (4 ms at 15,000 RPM) per write, 250 redo fsyncs a second (two per
    transaction). The disk's other writes - t1.ibd's growth (the new table's file
    extended page by page: zeros, an fsync, its journal commit) - are few, and those
    queued behind a write they continue stream on without a revolution of their own
    (``combine_seq_writes``; before it the disk did exactly 250 writes a second)."""
    b = run(disk_15k, 5, 100, commit_protocol="mysql51_builtin")
    assert b["fsyncs_redo_s"] == pytest.approx(250, rel=0.05)
    assert b["fsyncs_redo_s"] < b["iostat"]["w_s"] < 1.1 * 250
    assert b["tps"] == pytest.approx(b["fsyncs_redo_s"] / 2, rel=0.01)
    p = run(disk_15k, 30, 600, commit_protocol="innodb_plugin_104")
    assert p["tps"] / b["tps"] > 8
    assert p["redo_group_size_avg"] > 8


def test_uncached_log_pages_are_read_before_a_partial_write():
    r = run(cache_100us, 1, 50, commit_protocol="mysql51_builtin", log_files_cached=False)
    assert r["fs"]["rmw_reads"] >= 1 and r["iostat"]["r_s"] > 0
    r = run(cache_100us, 1, 50, commit_protocol="mysql51_builtin")
    assert r["fs"]["rmw_reads"] == 0


def test_o_dsync_log_writes_are_rotation_bound_like_fsync_without_cache():
    """innodb_flush_method=O_DSYNC: the log files are opened O_SYNC, so each log write
    returns when the disk has it - one revolution per write, as write() + fsync() -
    with no fsync called, and flush_log_at_trx_commit=2 cannot skip the wait."""
    o = run(disk_15k, 5, 100, commit_protocol="mysql51_builtin")
    for trx_commit in (1, 2):
        d = run(disk_15k, 5, 100, commit_protocol="mysql51_builtin",
                innodb_flush_method="O_DSYNC", innodb_flush_log_at_trx_commit=trx_commit)
        assert d["fsyncs_redo"] == 0
        assert d["tps"] == pytest.approx(o["tps"], rel=0.05)
        # two log writes per transaction, each a revolution, plus t1.ibd's growth
        # (which streams behind a write it continues: above)
        assert 2 * d["tps"] == pytest.approx(250, rel=0.05)
        assert d["iostat"]["w_s"] == pytest.approx(o["iostat"]["w_s"], rel=0.03)
        assert 2 * d["tps"] > 0.9 * d["iostat"]["w_s"]
