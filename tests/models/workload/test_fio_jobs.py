"""Several fio jobs of one job file on one device: jobs without a stonewall share the
device at the same time; a stonewall job starts when those above it ended."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, WRITE
from models.sim import Simulator
from models.workload.fio import FioConfig
from models.workload.fio.jobs import FioJobs, FioJobsConfig
from tests.models.fakes import FixedDevice

MS = 1_000_000


def _run(cfg):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=MS, queue_depth=32)    # one command at a time
    jobs = FioJobs(sim, cfg, BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                   np.random.default_rng(5))
    jobs.start()
    sim.run()
    return jobs, dev


def test_two_jobs_share_the_device_and_a_stonewall_job_runs_after_them():
    cfg = FioJobsConfig(
        jobs=(FioConfig(rw="randread", runtime_s=0.2), FioConfig(rw="randwrite", runtime_s=0.2),
              FioConfig(rw="read", runtime_s=0.1)),
        names=("r", "w", "after"), groups=(0, 0, 1), stonewall=(False, False, True))
    jobs, dev = _run(cfg)
    res = jobs.results()
    # QD1 each on a FIFO device of 1 ms per command: they alternate, 500 IOPS each
    assert res["job0.read_iops"] == pytest.approx(500, abs=5)
    assert res["job1.write_iops"] == pytest.approx(500, abs=5)
    first = [t for t, *_ in dev.served if t < 200 * MS]
    assert len(first) == 200 and {op for _, op, *_ in dev.served[:200]} == {READ, WRITE}
    # the stonewall job started once the first two had ended: the reader reaped the
    # read it had in flight at 200 ms (fio's do_io reaps before the job exits), so at
    # 201 ms; then the sequential job alone, 100 reads in its 100 ms
    assert [m.finished_ns for m in jobs.members[:2]] == [201 * MS, 200 * MS]
    assert res["job0.read_clat_count"] == 101 and res["job0.runtime_s"] == pytest.approx(0.201)
    assert jobs.members[2].started_ns == 201 * MS
    assert dev.served[200][:2] == (200 * MS, READ)
    assert [off for _, _, off, _ in dev.served[201:]] == [i * 4096 for i in range(100)]
    assert res["job2.read_iops"] == pytest.approx(1000)
    assert res["runtime_s"] == pytest.approx(0.301)
    assert res["iops"] == pytest.approx((res["job0.iops"] * 0.201 + res["job1.iops"] * 0.2
                                         + 100) / 0.301)


def test_a_later_jobs_ramp_counts_from_its_own_start():
    cfg = FioJobsConfig(
        jobs=(FioConfig(rw="read", runtime_s=0.1),
              FioConfig(rw="read", runtime_s=0.1, ramp_time_s=0.04)),
        names=("a", "b"), groups=(0, 1), stonewall=(False, True))
    jobs, dev = _run(cfg)
    res = jobs.results()
    # the runtime now follows the ramp, as fio's (it was 140 .. 200 ms, inside 0.1 s)
    assert res["job1.runtime_s"] == pytest.approx(0.1)           # 140 .. 240 ms
    assert res["job1.read_clat_count"] == pytest.approx(100, abs=1)


def test_a_job_bounded_by_size_ends_its_phase_early():
    cfg = FioJobsConfig(
        jobs=(FioConfig(rw="read", size="40k", time_based=False, runtime_s=10),
              FioConfig(rw="write", size="4k", offset="1m", time_based=False, runtime_s=10)),
        names=("a", "b"), groups=(0, 1), stonewall=(False, True))
    jobs, dev = _run(cfg)
    assert [op for _, op, *_ in dev.served] == [READ] * 10 + [WRITE]
    assert jobs.results()["runtime_s"] == pytest.approx(0.011)


@pytest.mark.parametrize("kw, msg", [
    ({"names": ("a",)}, "^names: one per job"),
    ({"groups": (1, 0)}, "^groups: group ids start at 0"),
    ({"jobs": (FioConfig(), FioConfig(direct=False))}, "^jobs: several jobs in one file run "
                                                        "with direct=1 only"),
])
def test_a_malformed_job_list_names_the_field(kw, msg):
    base = {"jobs": (FioConfig(), FioConfig()), "names": ("a", "b"), "groups": (0, 0),
            "stonewall": (False, False)}
    with pytest.raises(ValueError, match=msg):
        FioJobsConfig(**{**base, **kw})


def test_a_job_with_startdelay_joins_the_one_already_running():
    """startdelay=100ms on the second job: the first has the device alone for 100 ms,
    then they share it; both measure their own runtime."""
    cfg = FioJobsConfig(
        jobs=(FioConfig(rw="randread", runtime_s=0.3),
              FioConfig(rw="randwrite", runtime_s=0.1, startdelay_s=0.1)),
        names=("r", "w"), groups=(0, 0), stonewall=(False, False))
    jobs, dev = _run(cfg)
    writes = [t for t, op, *_ in dev.served if op == WRITE]
    assert min(writes) == 100 * MS and max(writes) <= 200 * MS   # (one in flight at its end)
    assert all(op == READ for t, op, *_ in dev.served if t < 100 * MS)
    assert jobs.members[1].measure_from_ns == 100 * MS
    assert jobs.results()["job1.write_iops"] == pytest.approx(500, abs=10)


@pytest.mark.parametrize("delay_ms, start_ms", [(50, 100), (150, 150)])
def test_a_stonewall_jobs_startdelay_counts_from_the_runs_start(delay_ms, start_ms):
    """fio's run_threads starts a job once its startdelay has passed since fio started
    (utime_since_genesis) and the jobs above its stonewall have ended: behind a 100 ms
    job, a delay of 50 ms is over already (start at 100 ms), one of 150 ms starts it at
    150 ms - not at the phase's start plus the delay (150 and 250 ms)."""
    cfg = FioJobsConfig(
        jobs=(FioConfig(rw="read", runtime_s=0.1),
              FioConfig(rw="write", runtime_s=0.05, startdelay_s=delay_ms / 1000)),
        names=("a", "b"), groups=(0, 1), stonewall=(False, True))
    jobs, dev = _run(cfg)
    assert jobs.members[1].started_ns == start_ms * MS
    assert min(t for t, op, *_ in dev.served if op == WRITE) == start_ms * MS
