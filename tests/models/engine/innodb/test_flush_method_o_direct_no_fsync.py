"""innodb_flush_method=O_DIRECT_NO_FSYNC (MySQL 5.6.7+): data files opened O_DIRECT as
with O_DIRECT, and ``fil_flush`` of a tablespace returns without an fsync (5.6
``fil_buffering_disabled``) - after flush batches, single-page flushes, the doublewrite
copies, checkpoints and file extensions - while the redo log is still written buffered
and fsync'ed as with O_DIRECT. Refused by the versions before 5.6."""
import collections

import pytest

from models.block import BlockQueue
from models.engine.cpu import CPU, CPUConfig
from models.engine.innodb.ops import Op, TableDef, Transaction
from models.engine.innodb.redo import RedoConfig, RedoLog
from models.engine.innodb.server import InnoDBServerConfig
from models.fs.file import CACHED
from models.sim import Simulator
from tests.models.engine.fakefs import FakeFS
from tests.models.fakes import FixedDevice

from .server.stack import build, clients, updates

T100K = (TableDef("sbtest1", 100_000, 180, ("k",)),)
DATA_FILES = ("ibdata1", "sbtest1.ibd", "orders.ibd")


def test_accepted_on_5_6_with_o_direct_data_files_and_no_data_fsync():
    cfg = InnoDBServerConfig(version="5.6", innodb_flush_method="O_DIRECT_NO_FSYNC")
    assert cfg.data_direct and not cfg.data_fsync and cfg.fil_buffering_disabled
    o_direct = InnoDBServerConfig(version="5.6", innodb_flush_method="O_DIRECT")
    assert o_direct.data_direct and o_direct.data_fsync and not o_direct.fil_buffering_disabled
    assert RedoConfig(innodb_flush_method="O_DIRECT_NO_FSYNC")


@pytest.mark.parametrize("version", ["5.1", "5.5", "percona_5.1", "percona_5.5"])
def test_refused_before_5_6(version):
    with pytest.raises(ValueError, match=r"^innodb_flush_method: O_DIRECT_NO_FSYNC is a "
                                         r"MySQL 5\.6\.7\+ value, not of version") as e:
        InnoDBServerConfig(version=version, commit_protocol="innodb_plugin_104",
                           innodb_flush_method="O_DIRECT_NO_FSYNC")
    assert "\n" not in str(e.value)


def _redo_calls(method):
    """The filesystem calls of a redo log taking commits (flush_log_at_trx_commit=1),
    a write-only call and the master thread's once-a-second flush."""
    sim = Simulator()
    fs = FakeFS(sim, BlockQueue(sim, FixedDevice(sim, service_ns=100_000)), barrier=False)
    rcfg = RedoConfig(innodb_flush_method=method, innodb_log_file_size="64K")
    files = [fs.create(f"ib_logfile{i}", rcfg.log_file_size_bytes) for i in range(2)]
    redo = RedoLog(sim, rcfg, fs, files, CPU(sim, CPUConfig(wakeup_us=0)))

    def t():
        for i in range(300):                  # wraps the 2 x 62 KB of log data
            lsn = yield from redo.append(400)
            yield from redo.commit_flush(lsn)
            if i % 50 == 0:
                lsn = yield from redo.append(100)
                yield from redo.write_up_to(lsn, False)
    redo.start_master()
    sim.spawn(t())
    sim.run(until_ns=3_000_000_000)
    redo.stop_master()
    return fs.calls, redo


def test_the_redo_log_is_written_and_fsynced_exactly_as_with_o_direct():
    calls, redo = _redo_calls("O_DIRECT_NO_FSYNC")
    ref_calls, ref = _redo_calls("O_DIRECT")
    assert calls == ref_calls
    assert redo.fsyncs == ref.fsyncs >= 300           # every commit's log_write_up_to
    assert not redo.direct and not redo.open_sync      # buffered, no O_SYNC


def _write_run(method, **kw):
    """One client updating a 100k-row table through an 8 MB pool (flush batches and
    single-page flushes), fsync() calls counted per file at the filesystem."""
    kw = {"innodb_log_file_size": "32M", **kw}
    sim, srv, fs, q = build(tables=T100K, ram_MBps=60.0, innodb_flush_log_at_trx_commit=1,
                            log_bin=False, innodb_buffer_pool_size="8M",
                            innodb_flush_method=method, **kw)
    n = collections.Counter()
    fsync = fs.fsync

    def counted(f, *a, **k):
        n[f.name] += 1
        return fsync(f, *a, **k)
    fs.fsync = counted
    r = clients(sim, srv, 1, updates(rows=100_000), 1.0, preload=True)
    return r["trx"], n, srv, fs


@pytest.mark.parametrize("doublewrite", [True, False])
def test_data_files_get_no_fsync_the_redo_log_one_per_commit_as_with_o_direct(doublewrite):
    out = {}
    for method in ("O_DIRECT", "O_DIRECT_NO_FSYNC"):
        trx, n, srv, fs = _write_run(method, innodb_doublewrite=doublewrite)
        st = srv.status()
        fl = srv.flusher
        assert fl.pages_flushed > 300 and fl.flushed_single > 100, method
        assert (st["Innodb_dblwr_writes"] > 100) == doublewrite
        # the redo log: one log_write_up_to + fsync per commit (one client), both ways
        log = n["ib_logfile0"] + n["ib_logfile1"]
        assert log == st["Innodb_os_log_fsyncs"] == srv.redo.fsyncs + srv.ckpt.log_fsyncs
        assert trx <= log <= trx + 3, (method, trx, log)
        # data pages written O_DIRECT both ways (never in the page cache)
        assert int((fs.open("sbtest1.ibd").state & CACHED != 0).sum()) == 0
        out[method] = (n, st, fl)
    n, st, fl = out["O_DIRECT"]
    assert n["sbtest1.ibd"] > 100 and fl.data_fsyncs > 100
    assert (n["ibdata1"] > 100) == doublewrite                 # the doublewrite copies
    n, st, fl = out["O_DIRECT_NO_FSYNC"]
    assert sum(n[name] for name in DATA_FILES) == 0
    assert fl.data_fsyncs == 0
    assert st["Innodb_data_fsyncs"] == st["Innodb_os_log_fsyncs"]   # the log's only


def test_a_file_extension_is_not_fsynced_either():
    """5.6 ``fil_extend_space_to_desired_size`` ends in ``fil_flush(space_id)``, which
    returns at once for a tablespace with O_DIRECT_NO_FSYNC."""
    keys = iter(range(3001, 10**6))
    sim, srv, fs, q = build(tables=(TableDef("orders", 3000, 4000),),
                            innodb_flush_method="O_DIRECT_NO_FSYNC")
    n = collections.Counter()
    fsync = fs.fsync
    fs.fsync = lambda f, *a, **k: (n.update([f.name]), fsync(f, *a, **k))[1]
    clients(sim, srv, 4, lambda rng, i: Transaction((Op("insert", "orders", next(keys)),)), 0.1)
    st = srv.status()
    assert st["Innodb_data_file_extensions"] >= 2
    assert st["Innodb_data_file_extension_fsyncs"] == 0
    assert n["orders.ibd"] == 0 and n["ibdata1"] == 0
