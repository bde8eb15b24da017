"""The end of a time-based fio job, as fio's ``do_io`` ends it: once the runtime is over
the job issues nothing more, reaps its I/Os in flight (``io_u_queued_complete``) - and
a synchronous engine finishes the call it is in - and counts them; the job's runtime
runs to the last (``update_runtime`` after ``do_io`` returns). A job asleep (think
time, a rate wait) has nothing to reap and ends at the runtime. Exact traces on a drive
that serves one command a millisecond."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import WRITE
from models.fs import Filesystem
from models.fs.config import FsConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.block.test_fua import MS, _Drive


def _direct(queue_depth=4, **fio):
    sim = Simulator()
    dev = _Drive(sim, "hdd", queue_depth=queue_depth)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop", blkdev_sync="none"))
    job = FioJob(sim, FioConfig(**{"rw": "randwrite", "runtime_s": 0.1, **fio}), q,
                 np.random.default_rng(1))
    job.start()
    sim.run()
    return sim, job, dev.log


@pytest.mark.parametrize("end_fsync", [False, True])
def test_the_ios_in_flight_at_the_runtime_end_are_reaped_and_counted(end_fsync):
    """iodepth=4 on a drive of one command a millisecond, a runtime of 100.5 ms: 100
    writes complete in it, the 4 in flight then complete by 104 ms and count, and the
    runtime is 104 ms - with ``end_fsync`` the same (2.6.18's device node sends no
    FLUSH)."""
    sim, job, log = _direct(iodepth=4, end_fsync=end_fsync, runtime_s=0.1005)
    res = job.results()
    assert len(log) == 104 and all(op == WRITE for _, op, _ in log)
    assert res["write_clat_count"] == 104
    assert res["runtime_s"] == pytest.approx(0.104)
    assert res["write_iops"] == pytest.approx(1000)
    assert sim.now_ns == job.finished_ns == 104 * MS
    assert job.iostat()["w_s"] == pytest.approx(1000)


def test_a_job_asleep_at_the_runtime_end_ends_there():
    """``rate_iops=100``: a write every 10 ms, each done in 1 ms - at 101.5 ms the job
    waits for its rate with nothing in flight, and its runtime is the 101.5 ms."""
    sim, job, log = _direct(iodepth=1, rate_iops=100, runtime_s=0.1015)
    res = job.results()
    assert res["runtime_s"] == pytest.approx(0.1015)
    assert res["write_clat_count"] == len(log) == 11


def _buffered(**fio):
    sim = Simulator()
    dev = _Drive(sim, "hdd")
    fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig()))
    job = FioBufferedJob(sim, FioConfig(**{"rw": "write", "direct": False, "size": "4m",
                                           "bs": "4k", "runtime_s": 0.05, **fio}),
                         fs, np.random.default_rng(1))
    job.start()
    sim.run()
    return sim, job


def test_a_synchronous_call_in_progress_at_the_runtime_end_finishes_and_counts():
    """psync, ``fsync=1`` through ext4: the fsync the thread is in at 50 ms finishes and
    counts, and the runtime runs to its end."""
    sim, job = _buffered(fsync=1)
    res = job.results()
    assert res["runtime_s"] > 0.05
    assert sim.now_ns == job.finished_ns
    assert res["runtime_s"] == pytest.approx((job.finished_ns - job.measure_from_ns) / 1e9)
    assert res["sync_count"] == res["write_clat_count"]      # every write's fsync counted


def test_a_thread_in_its_think_time_at_the_runtime_end_ends_there():
    """``thinktime=40ms`` after each 4 KB write into the page cache: at 50 ms the thread
    is asleep, the job ends at the runtime."""
    sim, job = _buffered(thinktime_us=40_000)
    res = job.results()
    assert res["runtime_s"] == pytest.approx(0.05)
    assert res["write_clat_count"] == 2
