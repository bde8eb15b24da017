"""Binary log: event sizes, sync_binlog, rotation."""
import pytest

from models.block import BlockQueue
from models.engine.cpu import CPU, CPUConfig
from models.engine.innodb.binlog import (FORMAT_DESCRIPTION_EVENT, Binlog, BinlogConfig,
                                         query_event_bytes, trx_event_bytes)
from models.sim import Simulator
from tests.models.engine.fakefs import FakeFS
from tests.models.fakes import FixedDevice


def make(**cfg):
    sim = Simulator()
    q = BlockQueue(sim, FixedDevice(sim, service_ns=100_000))
    fs = FakeFS(sim, q, barrier=False)
    b = Binlog(sim, BinlogConfig(**cfg), fs, fs.create, CPU(sim, CPUConfig(wakeup_us=0)))
    return sim, fs, b


def test_statement_event_sizes():
    cfg = BinlogConfig(db_name="mysqlslap")
    # BEGIN: 19 + 13 + 26 + 9 + 1 + 5; the Xid event is 27 bytes
    assert query_event_bytes(5, 9) == 73
    assert trx_event_bytes(cfg, [(160, 133)]) == 73 + (19 + 13 + 26 + 9 + 1 + 160) + 27
    row = BinlogConfig(binlog_format="ROW")
    assert trx_event_bytes(row, [(160, 133)]) < trx_event_bytes(row, [(160, 400)])


@pytest.mark.parametrize("sync_binlog,fsyncs", [(0, 0), (1, 10), (3, 3)])
def test_sync_binlog_counts_commits(sync_binlog, fsyncs):
    sim, fs, b = make(sync_binlog=sync_binlog)

    def t():
        yield from b.open()
        for _ in range(10):
            yield from b.write_trx(300)

    sim.spawn(t())
    sim.run()
    assert b.fsyncs == fsyncs
    assert b.pos == 4 + FORMAT_DESCRIPTION_EVENT + 10 * 300
    assert [c[1:5] for c in fs.calls if c[2] == "mysql-bin.000001"][:2] == [
        ("pwrite", "mysql-bin.000001", 0, 110), ("pwrite", "mysql-bin.000001", 110, 300)]


def test_sync_binlog_one_serialises_commits_under_lock_log():
    sim, fs, b = make(sync_binlog=1)
    done = []

    def t(i):
        yield from b.write_trx(300)
        done.append(sim.now_ns)

    for i in range(3):
        sim.spawn(t(i))
    sim.run()
    # one 100 us fdatasync each, one after the other (the first also writes the index
    # and its fdatasync when it opens the first file)
    assert done == [200_000, 300_000, 400_000]
    assert b.LOCK_log.contended == 2


def test_rotation_starts_a_new_file_and_syncs_the_index():
    sim, fs, b = make(max_binlog_size="4k")

    def t():
        for _ in range(30):
            yield from b.write_trx(300)      # write() never rotates (an Xid event)
            yield from b.unlog()             # rotate_and_purge, after the commit

    sim.spawn(t())
    sim.run()
    assert b.rotations == 2 and b.file_no == 3
    assert b.index_fsyncs == 3 and b.fsyncs == 0
    assert "mysql-bin.000003" in fs.files
    assert b.LOCK_log.acquisitions == 60               # write + unlog per commit


def test_group_write_is_one_write_and_sync_counts_groups():
    sim, fs, b = make(sync_binlog=2)

    def t():
        yield from b.open()
        for n in (3, 5, 1, 4):
            yield from b.write_group([300] * n)
            yield from b.sync_group()

    sim.spawn(t())
    sim.run()
    assert b.writes == 1 + 4 and b.fsyncs == 2
    assert b.stats()["group_size_avg"] == pytest.approx(13 / 4)


@pytest.mark.parametrize("key,kw", [("sync_binlog", {"sync_binlog": -1}),
                                    ("max_binlog_size", {"max_binlog_size": "2g"}),
                                    ("binlog_cache_size", {"binlog_cache_size": "1k"}),
                                    ("binlog_format", {"binlog_format": "MIXED"})])
def test_config_rejects_bad_values(key, kw):
    with pytest.raises(ValueError, match=f"^{key}:"):
        BinlogConfig(**kw)
