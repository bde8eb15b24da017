"""Cloud block volumes (models/device/cloud_volume.py): burst credits, the provider's
I/O accounting, the caps, the rules by volume type, the instance's shared link."""
import dataclasses

import numpy as np
import pytest

from models.device.cloud_volume import GIB, MIB, CloudVolume, CloudVolumeConfig
from models.device.request import FLUSH, READ, IORequest
from models.sim import Simulator

from .jobs import run_job

KB = 1024


def volume(**kw):
    sim = Simulator()
    return sim, CloudVolume(sim, "xvdf", CloudVolumeConfig(**kw), rng=np.random.default_rng(1))


def completions(sim, dev, bs, qd, n, rw="randread"):
    """Completion times (ns) of a closed loop of ``n`` I/Os."""
    times = []
    rng = np.random.default_rng(2)
    state = {"issued": 0, "pos": 0}

    def issue():
        if state["issued"] < n:
            state["issued"] += 1
            if rw == "randread":
                off = int(rng.integers(0, dev.capacity_bytes // bs)) * bs
            else:
                off = state["pos"]
                state["pos"] += bs
            dev.submit(IORequest(READ, off, bs))

    def done(req):
        times.append(req.done_ns)
        issue()

    dev.on_complete = done
    for _ in range(qd):
        issue()
    sim.run()
    return np.array(times)


def rate(times, t0_s, t1_s):
    return np.count_nonzero((times >= t0_s * 1e9) & (times < t1_s * 1e9)) / (t1_s - t0_s)


def test_burst_lasts_initial_credits_over_burst_minus_baseline_then_baseline():
    # gp2, 100 GiB: baseline 300 IOPS, burst 3,000; 27,000 credits -> 10 s of burst
    sim, dev = volume(volume_type="gp2", capacity_bytes=100 * GIB, burst_credits_initial=27_000)
    assert dev.cfg.baseline_iops == 300 and dev.cfg.burst_rate == 3000
    t = completions(sim, dev, 16 * KB, 16, 36_000)
    expected_end_s = 27_000 / (3000 - 300)
    assert dev.burst_end_ns / 1e9 == pytest.approx(expected_end_s, rel=0.02)
    assert rate(t, 1, 9) == pytest.approx(3000, rel=0.02)
    assert rate(t, 12, t[-1] / 1e9) == pytest.approx(300, rel=0.02)
    # the bucket refills at baseline while the volume idles
    b0 = dev.burst_balance()
    assert dev.burst_balance(sim.now_ns + 10**9) == pytest.approx(b0 + 300, abs=1)


def test_a_full_gp2_bucket_is_5_4_million_credits():
    cfg = CloudVolumeConfig(volume_type="gp2", capacity_bytes=500 * GIB)
    assert cfg.credits_initial == cfg.credits_max == 5_400_000
    assert 5_400_000 / (cfg.burst_rate - cfg.baseline_iops) == 3600      # an hour


def test_an_io_larger_than_the_accounting_unit_counts_as_several():
    # 1,000 IOPS, no throughput limit in reach, 256 KiB units: 1 MiB I/Os run at 250/s
    sim, dev = volume(volume_type="custom", iops=1000, throughput_MiBps=10_000,
                      io_unit_bytes=256 * KB, latency_median_us=500)
    r = run_job(sim, dev, "randread", 1 << 20, 8, 1000)
    assert r.iops == pytest.approx(250, rel=0.02)
    assert dev.operations == 4 * 1000
    sim, dev = volume(volume_type="custom", iops=1000, throughput_MiBps=10_000,
                      io_unit_bytes=256 * KB, latency_median_us=500)
    r = run_job(sim, dev, "randread", 16 * KB, 8, 2000)
    assert r.iops == pytest.approx(1000, rel=0.02)


def test_sequential_small_ios_merge_into_one_unit():
    sim, dev = volume(volume_type="custom", iops=1000, throughput_MiBps=10_000,
                      io_unit_bytes=256 * KB, latency_median_us=500)
    completions(sim, dev, 64 * KB, 1, 400, rw="read")
    assert dev.operations == 100                  # four 64 KiB I/Os per 256 KiB unit


def test_throughput_cap():
    # gp3: 3,000 IOPS and 125 MiB/s; 1 MiB I/Os are throughput-bound (4 ops each = 750/s)
    sim, dev = volume(volume_type="gp3", capacity_bytes=500 * GIB)
    r = run_job(sim, dev, "randread", 1 << 20, 8, 500)
    assert r.mb_s * 1e6 / MIB == pytest.approx(125, rel=0.02)


def test_st1_bursts_throughput_on_mib_credits():
    # 2 TiB st1: 80 MiB/s baseline, 500 MiB/s burst; 1,000 MiB of credits -> 2.38 s
    sim, dev = volume(volume_type="st1", capacity_bytes=2048 * GIB, burst_credits_initial=1000)
    cfg = dev.cfg
    assert (cfg.baseline_MiBps, cfg.burst_rate, cfg.unit_bytes) == (80, 500, 1 << 20)
    assert cfg.credits_max == 2 * 1024 * 1024           # 1 TiB of credits per TiB
    t = completions(sim, dev, 1 << 20, 32, 2000, rw="read")
    assert dev.burst_end_ns / 1e9 == pytest.approx(1000 / (500 - 80), rel=0.02)
    assert rate(t, 0.5, 2.0) == pytest.approx(500, rel=0.02)          # MiB/s = I/O/s
    assert rate(t, 4.0, t[-1] / 1e9) == pytest.approx(80, rel=0.02)


@pytest.mark.parametrize("gib,baseline", [(10, 100), (100, 300), (1000, 3000), (6000, 16000)])
def test_gp2_baseline_by_size(gib, baseline):
    cfg = CloudVolumeConfig(volume_type="gp2", capacity_bytes=gib * GIB)
    assert cfg.baseline_iops == baseline
    assert cfg.burst_kind == ("iops" if baseline < 3000 else "none")


def test_provisioned_volumes_have_no_burst():
    io2 = CloudVolumeConfig(volume_type="io2", iops=20_000)
    assert (io2.baseline_iops, io2.baseline_MiBps, io2.burst_kind) == (20_000, 4000, "none")
    io1 = CloudVolumeConfig(volume_type="io1", iops=10_000)
    assert io1.baseline_MiBps == 500 and io1.burst_kind == "none"
    assert CloudVolumeConfig(volume_type="io1", iops=1000).baseline_MiBps == 250
    assert CloudVolumeConfig(volume_type="io1", iops=64_000, capacity_bytes=2000 * GIB
                             ).baseline_MiBps == 1000


def test_latency_is_a_lognormal_round_trip():
    sim, dev = volume(volume_type="io2", iops=20_000)
    lat = []
    for i in range(400):
        req = IORequest(READ, i * 4096, 4096)
        dev.on_complete = lambda r: lat.append(r.done_ns - r.dispatch_ns)
        dev.submit(req)
        sim.run()
    assert np.median(lat) == pytest.approx(250_000, rel=0.1)
    assert np.std(np.log(lat)) == pytest.approx(0.25, rel=0.15)
    assert dev.volatile_bytes() == 0


def test_flush_costs_a_round_trip_and_no_credit():
    sim, dev = volume(volume_type="gp2", capacity_bytes=100 * GIB)
    dev.on_complete = lambda r: None
    dev.submit(IORequest(FLUSH, 0, 0))
    sim.run()
    assert dev.operations == 0 and 0 < sim.now_ns < 5_000_000


@pytest.mark.parametrize("kw,key", [
    (dict(volume_type="gp4"), "volume_type"),
    (dict(volume_type="io1"), "iops"),
    (dict(volume_type="st1", capacity_bytes=10 * GIB), "capacity_bytes"),
    (dict(volume_type="custom", iops=100, throughput_MiBps=10), "latency_median_us"),
    (dict(burst_on="sometimes"), "burst_on"),
    (dict(volume_type="io1", iops=30_000, capacity_bytes=500 * GIB), "iops"),
    (dict(volume_type="gp3", iops=3000, throughput_MiBps=1000), "throughput_MiBps"),
])
def test_bad_values_name_the_key(kw, key):
    with pytest.raises(ValueError, match=f"^{key}:"):
        CloudVolumeConfig(**kw)


def test_volumes_of_one_instance_share_its_ebs_bandwidth():
    from pipeline.registry import DEVICES
    make = DEVICES["cloud_volume"].make
    sim = Simulator()
    cfg = CloudVolumeConfig(volume_type="io2", iops=50_000, instance_bandwidth_MBps=200.0)
    a = make(sim, "xvdf", cfg, (), np.random.default_rng(1))
    b = make(sim, "xvdg", cfg, (), np.random.default_rng(2))
    other = make(sim, "xvdh", dataclasses.replace(cfg, instance="i-1"), (),
                 np.random.default_rng(3))
    assert a.bus is b.bus and other.bus is not a.bus
    done = {"n": 0}
    for dev in (a, b):
        def complete(req, dev=dev):
            done["n"] += 1
            if done["n"] <= 400:
                dev.submit(IORequest(READ, req.offset_bytes, req.size_bytes))
        dev.on_complete = complete
        for i in range(8):
            dev.submit(IORequest(READ, i << 20, 1 << 20))
    sim.run()
    mb_s = (done["n"] << 20) / sim.now_ns * 1e3
    assert mb_s == pytest.approx(200.0, rel=0.03)


def streams(sim, dev, bs, qd, n, jobs=1, region=1 << 30):
    """``jobs`` sequential readers, each its own region and ``qd`` I/Os in flight,
    until ``n`` I/Os in all have completed; returns MiB/s over the run."""
    state = {"issued": 0, "pos": [j * region for j in range(jobs)]}

    def issue(j):
        if state["issued"] < n:
            state["issued"] += 1
            off = state["pos"][j]
            state["pos"][j] += bs
            req = IORequest(READ, off, bs)
            req.issuer = j
            dev.submit(req)

    dev.on_complete = lambda req: issue(req.issuer)
    for _ in range(qd):
        for j in range(jobs):
            issue(j)
    sim.run()
    return n * bs / MIB / (sim.now_ns / 1e9)


def test_merged_sequential_ios_still_count_against_the_throughput_cap():
    # gp3: 16 KiB sequential reads merge 16 to a 256 KiB operation (500 op/s at
    # 125 MiB/s, far below 3,000 IOPS); their bytes are held to 125 MiB/s
    sim, dev = volume(volume_type="gp3", capacity_bytes=500 * GIB)
    assert streams(sim, dev, 16 * KB, 16, 16_000) == pytest.approx(125, rel=0.02)
    assert dev.operations == 16_000 // 16
    for bs in (128 * KB, 256 * KB):
        sim, dev = volume(volume_type="gp3", capacity_bytes=500 * GIB)
        assert streams(sim, dev, bs, 16, 1000) == pytest.approx(125, rel=0.02), bs


def test_several_sequential_jobs_get_no_less_than_one():
    # interleaved streams, each its own region, merge as one stream does
    got = {}
    for jobs in (1, 2, 4):
        sim, dev = volume(volume_type="gp3", capacity_bytes=500 * GIB)
        got[jobs] = streams(sim, dev, 16 * KB, 16 // jobs, 16_000, jobs=jobs)
        assert dev.operations == pytest.approx(16_000 / 16, abs=jobs), jobs
    assert got[2] >= got[1] * 0.99 and got[4] >= got[1] * 0.99, got
    assert got[4] == pytest.approx(125, rel=0.02)


def test_st1_sequential_burst_spends_every_byte():
    # 512 KiB sequential reads (a 1 MiB I/O split by the block layer): two per 1 MiB
    # operation; each MiB spends a credit, so 840 credits last 840 / (500 - 80) = 2 s
    sim, dev = volume(volume_type="st1", capacity_bytes=2048 * GIB, burst_credits_initial=840)
    t = completions(sim, dev, 512 * KB, 16, 2 * 1300, rw="read")
    assert dev.burst_end_ns / 1e9 == pytest.approx(840 / (500 - 80), rel=0.02)
    assert rate(t, 0.2, 1.8) / 2 == pytest.approx(500, rel=0.02)      # MiB/s
    assert rate(t, 3.0, t[-1] / 1e9) / 2 == pytest.approx(80, rel=0.02)


def test_burst_balance_never_goes_below_zero():
    # credits are spent at admissions that lie ahead of now (I/Os queued behind the
    # cap); the balance counts them spent, never below an empty bucket
    sim, dev = volume(volume_type="st1", capacity_bytes=2048 * GIB, burst_credits_initial=200)
    seen = []

    def probe(_req):
        seen.append(dev.burst_balance())

    run_job(sim, dev, "read", 1 << 20, 32, 800, on_submit=probe, on_done=probe)
    assert dev.burst_end_ns > 0 and min(seen) >= 0


def test_a_merged_io_does_not_pass_the_throttled_io_it_continues():
    # 10 IOPS: the second I/O waits 100 ms for the cap; the third continues it (a
    # merge, no operation) and is admitted behind it, not at once
    sim, dev = volume(volume_type="custom", iops=10, throughput_MiBps=10_000,
                      io_unit_bytes=256 * KB, latency_median_us=500, latency_sigma=0.0)
    done = {}
    dev.on_complete = lambda r: done.setdefault(r.offset_bytes, r.done_ns)
    for off in (0, 1 << 20, (1 << 20) + 16 * KB):
        dev.submit(IORequest(READ, off, 16 * KB))
    sim.run()
    assert dev.operations == 2
    assert done[(1 << 20) + 16 * KB] >= done[1 << 20] >= 100_000_000
