"""fio ``sync=1`` (O_SYNC writes) on a block device, as each kernel's device node sends
them (``BlockConfig.blkdev_sync``): exact command traces on a drive that serves one
command a millisecond."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import FLUSH, WRITE
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from tests.models.block.test_fua import _Drive


def _run(kind, blkdev_sync, queue_depth=1, **fio):
    sim = Simulator()
    dev = _Drive(sim, kind, queue_depth=queue_depth)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop", flush_merging=True,
                                         blkdev_sync=blkdev_sync))
    cfg = FioConfig(**{"rw": "randwrite", "sync": 1, "runtime_s": 1.0, **fio})
    job = FioJob(sim, cfg, q, np.random.default_rng(1))
    job.start()
    sim.run()
    return job.results(), dev.log


def _ops(log, n=6):
    return ["RWF"[op] + ("u" if fua else "") for _, op, fua in log[:n]]


@pytest.mark.parametrize("kind, blkdev_sync, ops, iops", [
    ("hdd", "none", ["W"] * 6, 1000),                  # 2.6.18: nothing more
    ("hdd", "flush", ["W", "F"] * 3, 500),             # 2.6.32-3.10: write, then FLUSH
    ("hdd", "fua", ["Wu", "F"] * 3, 500),              # 4.10+: FUA write, then FLUSH
    ("ssd", "fua", ["W", "F", "F"] * 2, 1000 / 3),     # no FUA: its FLUSH, then fsync's
])
def test_psync_o_sync_writes_by_kernel(kind, blkdev_sync, ops, iops):
    """A synchronous engine's O_SYNC write returns after what the kernel sends for it;
    its latency runs to the end of the last FLUSH."""
    res, log = _run(kind, blkdev_sync, ioengine="psync")
    assert _ops(log) == ops
    assert res["write_iops"] == pytest.approx(iops, rel=0.01)
    assert res["write_clat_mean_ms"] == pytest.approx(1000 / iops, rel=0.01)


def test_libaio_o_sync_writes_on_4_10_carry_fua_and_nothing_else():
    """From 4.10 an asynchronous O_SYNC write is a FUA write (``dio_bio_write_op``): on
    a drive with FUA, the queue depth is kept and no FLUSH is sent."""
    res, log = _run("hdd", "fua", queue_depth=4, iodepth=4)
    assert _ops(log, 100) == ["Wu"] * 100
    assert res["write_iops"] == pytest.approx(1000, rel=0.01)
    assert res["write_clat_mean_ms"] == pytest.approx(4.0, rel=0.02)   # Little: 4 in flight


def test_libaio_o_sync_writes_without_fua_share_their_flushes():
    """4.10+ on a SATA SSD (no FUA): each of the 4 writes in flight is followed by a
    FLUSH; the first goes behind the writes queued at the drive, the three asked while
    it waits or runs share the next (flush merging): 4 writes per 6 ms, each write
    complete when its FLUSH is."""
    res, log = _run("ssd", "fua", queue_depth=4, iodepth=4)
    assert _ops(log, 30) == ["W"] * 4 + ["F"] * 2 + ["W"] * 4 + ["F"] * 2 + (["W"] * 4 + ["F"] * 2) * 3
    assert res["write_iops"] == pytest.approx(4 / 6e-3, rel=0.02)


def test_libaio_o_sync_write_is_synced_at_submission_up_to_3_10():
    """2.6.32-3.10: ``blkdev_aio_write`` syncs an asynchronous O_SYNC write when it is
    queued - a FLUSH right behind the write, and ``io_submit`` returns once the FLUSH
    completes: one write in flight whatever the iodepth. fio issues the write when the
    call returns: the wait (write 1 ms + FLUSH 1 ms) is its slat, and its clat is 0 -
    it completed inside the call."""
    res, log = _run("hdd", "flush", queue_depth=4, iodepth=8)
    assert _ops(log) == ["W", "F"] * 3
    assert res["write_iops"] == pytest.approx(500, rel=0.01)
    assert res["write_clat_mean_ms"] == 0.0
    assert res["write_slat_mean_ms"] == pytest.approx(2.0, rel=1e-6)
    assert res["write_slat_max_ms"] == pytest.approx(2.0, rel=1e-6)


def test_reads_of_a_mixed_job_go_on_until_a_write_is_synced():
    """Synced at submission, a mixed job issues reads up to its depth and stops at a
    write until that write's FLUSH completes: a read and a write in flight, then the
    FLUSH; the reads need no FLUSH, so the job does more than the 500 I/Os a second
    of its writes alone."""
    res, log = _run("hdd", "flush", queue_depth=8, iodepth=8, rw="randrw")
    assert _ops(log, 5) == ["R", "W", "F", "W", "F"]
    assert res["read_iops"] == pytest.approx(res["write_iops"], rel=0.1)
    assert 500 < res["read_iops"] + res["write_iops"] < 1000
    assert "sync_count" not in res          # O_SYNC writes are not fsync calls


@pytest.mark.parametrize("value, flag", [("none", 0), ("0", 0), ("1", 0o4010000),
                                         ("sync", 0o4010000), ("dsync", 0o10000)])
def test_sync_takes_fio_values(value, flag):
    assert FioConfig(sync=value).o_sync == flag
    with pytest.raises(ValueError, match="sync: must be one of"):
        FioConfig(sync="always")


def test_the_kernel_decides_what_the_device_node_sends():
    from models.linux import KernelConfig

    assert [KernelConfig(v).blkdev_sync() for v in ("2.6.18", "2.6.32", "3.10", "4.19", "6.1")] \
        == ["none", "flush", "flush", "fua", "fua"]
    with pytest.raises(ValueError, match="blkdev_sync: must be one of none, flush, fua"):
        BlockConfig(blkdev_sync="always")


def test_a_buffered_job_opens_its_file_o_sync():
    """direct=0, sync=1: each write returns after what fsync of its range does - the
    page written, the journal committed, the cache flushed - so the kernel writes it
    at once, not at writeback."""
    from models.fs import Filesystem
    from models.fs.config import FsConfig
    from models.workload.fio.buffered import FioBufferedJob

    out = {}
    for sync in (0, 1):
        sim = Simulator()
        dev = _Drive(sim, "hdd")
        fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig()))
        job = FioBufferedJob(sim, FioConfig(rw="randwrite", direct=False, size="16m",
                                            sync=sync, runtime_s=0.2), fs,
                             np.random.default_rng(1))
        job.start()
        sim.run()
        out[sync] = (job.results(), dev.log)
    (plain, plain_log), (synced, synced_log) = out[0], out[1]
    assert not plain_log                               # below the dirty thresholds: in cache
    assert plain["write_clat_mean_ms"] < 0.1
    writes = sum(op == WRITE for _, op, _ in synced_log)
    assert writes >= synced["write_iops"] * 0.2        # each page written by its own call
    assert synced["write_clat_mean_ms"] > 1.0          # the write, the commit, the FLUSH
    assert any(op == FLUSH for _, op, _ in synced_log)


@pytest.mark.parametrize("blkdev_sync, ends_with_flush", [("none", False), ("flush", True)])
def test_end_fsync_drains_then_syncs_inside_the_runtime(blkdev_sync, ends_with_flush):
    """fio's end_fsync: once the runtime is over the job issues nothing more, its 4 I/Os
    in flight complete and count, then fsync of the device (a FLUSH from 2.6.32); the
    job's runtime runs to there (fio's do_io returns after it), not to the 100 ms."""
    res, log = _run("hdd", blkdev_sync, queue_depth=4, iodepth=4, sync=0, end_fsync=True,
                    runtime_s=0.1)
    assert [op for _, op, _ in log].count(FLUSH) == int(ends_with_flush)
    assert (log[-1][1] == FLUSH) == ends_with_flush
    writes = sum(op == WRITE for _, op, _ in log)
    assert res["write_iops"] * res["runtime_s"] == pytest.approx(writes)   # all counted
    assert res["runtime_s"] == pytest.approx((writes + ends_with_flush) * 1e-3, abs=1e-6)


def test_end_fsync_of_a_job_that_stops_by_itself():
    """Not time based: 10 writes, then the sync, inside the runtime."""
    res, log = _run("hdd", "flush", number_ios=10, time_based=False, sync=0, end_fsync=True)
    assert ["RWF"[op] for _, op, _ in log] == ["W"] * 10 + ["F"]
    assert res["runtime_s"] == pytest.approx(11e-3)
    assert "sync_count" not in res        # fio does not count the end fsync's latency


def test_a_buffered_job_with_end_fsync_writes_its_dirty_pages_inside_its_runtime():
    """direct=0: without end_fsync the writes stay in the page cache and the job reports
    memory speed; with it fsync writes them back before the job ends."""
    from models.fs import Filesystem
    from models.fs.config import FsConfig
    from models.workload.fio.buffered import FioBufferedJob

    out = {}
    for end in (False, True):
        sim = Simulator()
        dev = _Drive(sim, "hdd")
        fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig()))
        job = FioBufferedJob(sim, FioConfig(rw="write", direct=False, size="4m", bs="64k",
                                            time_based=False, end_fsync=end), fs,
                             np.random.default_rng(1))
        job.start()
        sim.run()
        out[end] = (job.results(), dev.log)
    (plain, plain_log), (synced, synced_log) = out[False], out[True]
    assert not plain_log and synced_log
    assert synced["runtime_s"] > 10 * plain["runtime_s"]
    assert synced["write_MB_s"] < plain["write_MB_s"] / 10
