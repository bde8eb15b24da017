"""innodb_flush_method=nosync (``SRV_UNIX_NOSYNC`` of 5.1-5.6): a commit at
``innodb_flush_log_at_trx_commit=1`` writes the log without flushing it
(``trx_commit_off_kernel``: ``log_write_up_to(lsn, ..., FALSE)``), the master thread's
once-a-second flush fsyncs it, and a checkpoint neither syncs the data files nor the
log file after its checkpoint info; every other ``fil_flush`` - after flush batches,
doublewrite copies, single-page flushes, file extensions - fsyncs as with ``fsync``."""
import collections

import pytest

from .test_flush_method_o_direct_no_fsync import DATA_FILES, _write_run


@pytest.mark.parametrize("doublewrite", [True, False])
def test_commits_write_the_log_unflushed_and_the_data_files_are_fsynced_as_with_fsync(doublewrite):
    out = {}
    for method in ("fsync", "nosync"):
        trx, n, srv, fs = _write_run(method, innodb_doublewrite=doublewrite)
        out[method] = (trx, n, srv)
    trx, n, srv = out["fsync"]
    assert srv.redo.flush_requests == trx > 200           # a durable log write per commit
    trx, n, srv = out["nosync"]
    assert trx > 200
    assert srv.redo.flush_requests == 0                   # commits ask for a write only ...
    assert srv.redo.writes >= trx
    # ... the log is fsynced by the master thread and the write-ahead rule of page writes
    assert 0 < srv.redo.fsyncs < trx / 4
    fl = srv.flusher
    assert fl.pages_flushed > 300 and fl.flushed_single > 100
    # the flusher's fil_flush calls: per batch (per doublewrite chunk), per single page
    assert fl.data_fsyncs > 100 and n["sbtest1.ibd"] > 100
    assert (n["ibdata1"] > 100) == doublewrite            # the doublewrite copies' syncs


@pytest.mark.parametrize("method,data_synced,log_synced", [
    ("fsync", True, True), ("nosync", False, False), ("O_DSYNC", True, False)])
def test_a_checkpoint_syncs_per_the_method(method, data_synced, log_synced):
    """``log_checkpoint``: ``fil_flush_file_spaces`` unless nosync; ``log_io_complete``
    after the checkpoint info: ``fil_flush`` of the log unless O_DSYNC (its files are
    opened O_SYNC) or nosync. fsync() calls counted per file during one checkpoint."""
    trx, n, srv, fs = _write_run(method)
    sim, ck = srv.sim, srv.ckpt
    assert ck.oldest_lsn() > ck.last_checkpoint_lsn        # dirty pages since the last
    before, ended, k0 = collections.Counter(n), [], ck.checkpoints

    def one():
        yield from ck.checkpoint()
        ended.append(sim.now_ns)
    sim.spawn(one())
    while not ended:
        sim.run(until_ns=sim.now_ns + 1_000_000)
    during = n - before
    assert ck.checkpoints == k0 + 1
    assert (sum(during[f] for f in DATA_FILES) > 0) == data_synced, during
    assert during["ib_logfile0"] == (1 if log_synced else 0), during
