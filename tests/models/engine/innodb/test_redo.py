"""Redo log: LSN arithmetic, circular file layout, and log_write_up_to's group flush."""
import pytest

from models.block import BlockQueue
from models.device.request import WRITE
from models.engine.cpu import CPU, CPUConfig
from models.engine.innodb.redo import (LOG_BLOCK_HDR_SIZE, RedoConfig, RedoLog,
                                       lsn_advance)
from models.sim import Simulator
from tests.models.engine.fakefs import FakeFS
from tests.models.fakes import FixedDevice

US = 1_000


def make(service_ns=100 * US, **cfg):
    sim = Simulator()
    q = BlockQueue(sim, FixedDevice(sim, service_ns=service_ns))
    fs = FakeFS(sim, q, barrier=False)
    rcfg = RedoConfig(**cfg)
    files = [fs.create(f"ib_logfile{i}", rcfg.log_file_size_bytes)
             for i in range(rcfg.innodb_log_files_in_group)]
    redo = RedoLog(sim, rcfg, fs, files, CPU(sim, CPUConfig(wakeup_us=0)))
    return sim, fs, redo


def test_lsn_counts_block_headers_and_trailers():
    start = 8192 + LOG_BLOCK_HDR_SIZE
    assert lsn_advance(start, 100, 512) == start + 100
    # 496 payload bytes per 512-byte block: filling one exactly moves to the next
    # block's first payload byte
    assert lsn_advance(start, 496, 512) == 8192 + 512 + 12
    assert lsn_advance(start, 497, 512) == 8192 + 512 + 13
    assert lsn_advance(start, 4080, 4096) == 8192 + 4096 + 12
    # appending in pieces gives the same LSN as at once
    lsn = start
    for _ in range(10):
        lsn = lsn_advance(lsn, 123, 512)
    assert lsn == lsn_advance(start, 1230, 512)


def test_file_extents_skip_headers_and_wrap_around_the_group():
    sim, fs, redo = make(innodb_log_file_size="64K", innodb_log_files_in_group=2)
    data = 64 * 1024 - 2048                       # per file, after the 4-block header
    s = redo.START_LSN
    assert list(redo._file_extents(s, s + 512)) == [(0, 2048, 512)]
    assert list(redo._file_extents(s + data - 512, s + data + 1024)) == [
        (0, 2048 + data - 512, 512), (1, 2048, 1024)]
    # past the end of the last file the ring starts again at file 0
    assert list(redo._file_extents(s + 2 * data, s + 2 * data + 512)) == [(0, 2048, 512)]


def test_write_covers_whole_blocks_from_the_last_partial_one():
    sim, fs, redo = make()
    log = []

    def t():
        lsn = yield from redo.append(300)
        yield from redo.write_up_to(lsn, True)
        lsn = yield from redo.append(300)          # crosses into the second block
        yield from redo.write_up_to(lsn, True)
        log.append(sim.now_ns)

    sim.spawn(t())
    sim.run()
    assert [c[1:5] for c in fs.calls] == [
        ("pwrite", "ib_logfile0", 2048, 512), ("fsync", "ib_logfile0"),
        ("pwrite", "ib_logfile0", 2048, 1024), ("fsync", "ib_logfile0")]
    assert log == [200 * US]
    assert redo.flushed_lsn == redo.lsn and redo.fsyncs == 2


def test_threads_arriving_during_a_flush_share_the_next_fsync():
    """A flushes at t=0 (fsync 0..100 us). B and C append at 10 and 20 us and wait;
    after A's flush the first of them writes and fsyncs for both; D appended before A
    started writing, so A's flush covers it."""
    sim, fs, redo = make()
    done = {}

    def trx(name, delay_ns, pre_appended=None):
        if delay_ns:
            yield delay_ns
        lsn = pre_appended if pre_appended is not None else (yield from redo.append(200))
        own = yield from redo.write_up_to(lsn, True)
        done[name] = (sim.now_ns, own)

    def start():
        lsn_d = yield from redo.append(200)        # D's records, before A's write
        lsn_a = yield from redo.append(200)
        sim.spawn(trx("A", 0, lsn_a))
        sim.spawn(trx("D", 5 * US, lsn_d))
        sim.spawn(trx("B", 10 * US))
        sim.spawn(trx("C", 20 * US))

    sim.spawn(start())
    sim.run()
    assert done == {"A": (100 * US, True), "D": (100 * US, False),
                    "B": (200 * US, True), "C": (200 * US, False)}
    assert redo.fsyncs == 2 and redo.flush_requests == 4 and redo.flush_waits == 2
    assert [c[1] for c in fs.calls] == ["pwrite", "fsync", "pwrite", "fsync"]


@pytest.mark.parametrize("mode,method,fsyncs,writes,requests", [
    (0, "O_DIRECT", 0, 0, 0), (2, "O_DIRECT", 0, 3, 0), (1, "O_DIRECT", 3, 3, 3),
    # trx_commit_off_kernel at 1 with nosync: log_write_up_to(lsn, ..., FALSE), as 2
    (1, "nosync", 0, 3, 0)])
def test_flush_log_at_trx_commit(mode, method, fsyncs, writes, requests):
    sim, fs, redo = make(innodb_flush_log_at_trx_commit=mode, innodb_flush_method=method)

    def t():
        for _ in range(3):
            lsn = yield from redo.append(100)
            yield from redo.commit_flush(lsn)
            yield 1_000_000

    sim.spawn(t())
    sim.run()
    assert (redo.fsyncs, redo.writes, redo.flush_requests) == (fsyncs, writes, requests)


@pytest.mark.parametrize("mode,method", [(0, "O_DIRECT"), (2, "O_DIRECT"), (1, "nosync")])
def test_master_thread_flushes_once_a_second(mode, method):
    sim, fs, redo = make(innodb_flush_log_at_trx_commit=mode, innodb_flush_method=method)
    redo.start_master()

    def t():
        for _ in range(25):                        # one commit every 100 ms for 2.5 s
            lsn = yield from redo.append(100)
            yield from redo.commit_flush(lsn)
            yield 100_000_000
        redo.stop_master()

    sim.spawn(t())
    sim.run()
    fsync_times = [c[0] for c in fs.calls if c[1] == "fsync"]
    # 5.1's master thread sleeps a full second after each round's work (here the
    # 100 us flush), so the second flush comes 100 us late
    assert fsync_times == [1_000_000_000, 2_000_100_000]
    assert redo.flush_requests == 0


@pytest.mark.parametrize("flush", [True, False])
def test_o_dsync_log_writes_wait_for_the_device_and_need_no_fsync(flush):
    """O_DSYNC: the log files are opened O_SYNC, so a commit's write returns only when
    it is on the device (one 100 us device write) - with flush_log_at_trx_commit=2's
    write-only call too - and log_write_up_to skips fil_flush."""
    sim, fs, redo = make(innodb_flush_method="O_DSYNC")
    done = []

    def t():
        lsn = yield from redo.append(100)
        yield from redo.write_up_to(lsn, flush)
        done.append(sim.now_ns)

    sim.spawn(t())
    sim.run(until_ns=500_000_000)
    assert done == [100 * US]
    assert redo.fsyncs == 0 and redo.flushed_lsn == redo.lsn
    assert [c[1] for c in fs.calls] == ["pwrite"]
    assert [op for _t, op, _o, _n in fs.queue.device.served] == [WRITE]
    assert redo.flushes == (1 if flush else 0)


@pytest.mark.parametrize("method", ["fsync", "littlesync", "nosync", "O_DIRECT"])
def test_buffered_log_methods_write_to_the_cache_and_fsync(method):
    """fsync / O_DIRECT / littlesync / nosync: log files buffered; the write returns
    at once and log_write_up_to(lsn, flush=True) fsyncs them (nosync changes what a
    commit asks for: test_flush_log_at_trx_commit)."""
    sim, fs, redo = make(innodb_flush_method=method)
    done = []

    def t():
        lsn = yield from redo.append(100)
        yield from redo.write_up_to(lsn, True)
        done.append(sim.now_ns)

    sim.spawn(t())
    sim.run(until_ns=500_000_000)
    assert [c[:2] for c in fs.calls] == [(0, "pwrite"), (0, "fsync")]
    assert done == [100 * US] and redo.fsyncs == 1


def test_all_o_direct_writes_reach_the_device_before_returning():
    sim, fs, redo = make(innodb_flush_method="ALL_O_DIRECT")
    log = []

    def t():
        lsn = yield from redo.append(100)
        yield from redo.write_up_to(lsn, False)
        log.append(sim.now_ns)

    sim.spawn(t())
    sim.run()
    assert fs.calls[0][5] is True and log == [100 * US]


def test_half_full_log_buffer_is_written_without_fsync():
    sim, fs, redo = make(innodb_flush_log_at_trx_commit=0, innodb_log_buffer_size="16K")

    def t():
        for _ in range(40):                         # 40 x 300 B > 8 KB
            yield from redo.append(300)

    sim.spawn(t())
    sim.run()
    assert redo.margin_writes >= 1 and redo.fsyncs == 0
    assert redo.lsn - redo.written_lsn < 8 * 1024


@pytest.mark.parametrize("key,kw", [
    ("innodb_flush_log_at_trx_commit", {"innodb_flush_log_at_trx_commit": 3}),
    ("innodb_log_block_size", {"innodb_log_block_size": 1024}),
    ("innodb_log_files_in_group", {"innodb_log_files_in_group": 1}),
    ("innodb_log_files_in_group", {"innodb_log_files_in_group": 101}),   # the sysvar: 2..100
    ("innodb_log_file_size", {"innodb_log_file_size": "1000"}),
    ("innodb_log_buffer_size", {"innodb_log_buffer_size": "1k"}),
    ("innodb_flush_method", {"innodb_flush_method": "O_SYNC"}),
])
def test_config_rejects_bad_values(key, kw):
    with pytest.raises(ValueError, match=f"^{key}:"):
        RedoConfig(**kw)
