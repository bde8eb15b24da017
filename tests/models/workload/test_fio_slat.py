"""fio's submission latency (``slat``): an asynchronous engine's ``io_submit`` that
sleeps for a request (``nr_requests`` / blk-mq tags all taken) issues its I/Os when it
returns - their slat runs to there, their clat from there (fio's ``issue_time``, set by
libaio's commit after ``io_submit``); a synchronous engine's sleep is inside its call,
in clat. Exact samples on a drive of one command a millisecond with two tags."""
import numpy as np
import pytest

from models.block import BlockConfig
from models.block.mq.queue import MQQueue
from models.device.request import READ
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from tests.models.block.test_fua import MS, _Drive


def _run(**fio):
    sim = Simulator()
    q = MQQueue(sim, _Drive(sim, "hdd"), BlockConfig(scheduler="none", nr_requests=2))
    job = FioJob(sim, FioConfig(**{"rw": "randread", "iodepth": 4, "number_ios": 8,
                                   "time_based": False, **fio}),
                 q, np.random.default_rng(1))
    job.start()
    sim.run()
    return job, job.results()


def test_an_io_submit_that_sleeps_for_a_tag_is_slat_not_clat():
    """iodepth=4, two tags: the first two reads are issued at once (clat 1 and 2 ms);
    every later one waits 1 ms in io_submit for the tag a completion frees, then 2 ms
    behind the read ahead of it."""
    job, res = _run()
    assert [ns // 1000 for ns in job.lat[READ].samples] == [1000] + [2000] * 7
    assert job.slat[READ] == [(i, MS) for i in range(2, 8)]
    assert res["read_clat_mean_ms"] == pytest.approx(1.875)
    assert (res["read_slat_mean_ms"], res["read_slat_max_ms"]) == (0.75, 1.0)
    assert res["runtime_s"] == pytest.approx(0.008)


def test_an_io_completed_while_its_call_slept_has_a_clat_of_0():
    """``iodepth_batch_submit=4``: one io_submit of four reads sleeps until the fourth
    has a tag, at 2 ms; the first two completed at 1 and 2 ms, and fio reaps them after
    the call returns: slat 2 ms, clat 0."""
    job, res = _run(iodepth_batch_submit=4)
    assert list(job.lat[READ].samples)[:4] == [0, 0, MS, 2 * MS]
    assert job.slat[READ][:4] == [(0, 2 * MS), (1, 2 * MS), (2, 2 * MS), (3, 2 * MS)]


def test_a_synchronous_engine_sleeps_inside_its_call():
    """psync, three jobs on two tags: the third job's pread sleeps for a tag inside the
    system call - clat, and no slat columns (fio does not time a sync submission)."""
    job, res = _run(ioengine="psync", numjobs=3, number_ios=4)
    assert not any("slat" in k for k in res)
    assert not job.slat[READ]
    assert max(job.lat[READ].samples) > 2 * MS
