import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from tests.models.fakes import FixedDevice


def _run(cfg, service_ns=1_000_000, queue_depth=32, block=BlockConfig(), seed=1):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=service_ns, queue_depth=queue_depth)
    blk = BlockQueue(sim, dev, block)
    job = FioJob(sim, cfg, blk, np.random.default_rng(seed))
    job.start()
    sim.run()
    return job.results(), job.iostat(), dev


def test_qd1_iops_is_one_over_service_time():
    res, st, _ = _run(FioConfig(rw="randread", bs="4k", iodepth=1, runtime_s=1.0))
    assert res["iops"] == pytest.approx(1000, rel=0.002)
    assert res["read_clat_p50_ms"] == pytest.approx(1.0)


def test_deeper_queue_on_a_single_server_only_adds_latency_littles_law():
    res, st, _ = _run(FioConfig(rw="randread", iodepth=8, runtime_s=1.0))
    assert res["iops"] == pytest.approx(1000, rel=0.01)
    assert res["read_clat_mean_ms"] == pytest.approx(8.0, rel=0.01)
    assert st["avgqu_sz"] == pytest.approx(8.0, rel=0.01)
    assert st["util_pct"] == pytest.approx(100.0, rel=0.001)


def test_batched_submission_of_sequential_16k_merges_to_max_sectors():
    cfg = FioConfig(rw="read", bs="16k", iodepth=64, iodepth_batch_submit=64,
                    iodepth_batch_complete_min=64, runtime_s=0.5)
    res, st, dev = _run(cfg, service_ns=100_000, block=BlockConfig(max_sectors_kb=256))
    assert st["avgrq_sz"] == pytest.approx(512.0)         # 256 KB requests
    assert st["rrqm_s"] == pytest.approx(15 * st["r_s"], rel=0.01)


def test_number_ios_stops_each_job_and_mixed_ratio_holds():
    cfg = FioConfig(rw="randrw", rwmixread=70, iodepth=4, numjobs=2, number_ios=2000, runtime_s=100)
    res, st, _ = _run(cfg, service_ns=10_000)
    assert res["read_clat_count"] + res["write_clat_count"] == 4000
    assert res["read_clat_count"] / 4000 == pytest.approx(0.7, abs=0.03)


def test_same_seed_same_result_different_seed_different_offsets():
    cfg = FioConfig(rw="randread", iodepth=4, runtime_s=0.05)
    a = _run(cfg, seed=3)[2].served
    b = _run(cfg, seed=3)[2].served
    c = _run(cfg, seed=4)[2].served
    assert a == b and a != c


@pytest.mark.parametrize("key, value", [("bs", "1000"), ("bs", "-4k"), ("iodepth", 0), ("rw", "scan"),
                                        ("size", "lots"), ("rwmixread", 101)])
def test_bad_options_name_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        FioConfig(**{key: value})


def test_region_larger_than_device_is_rejected():
    sim = Simulator()
    dev = FixedDevice(sim, capacity_bytes=2**30)
    with pytest.raises(ValueError, match="^size:"):
        FioJob(sim, FioConfig(size="2g"), BlockQueue(sim, dev), np.random.default_rng(0))
