"""fio options as fio documents them: thinktime, rate_iops, random_distribution, fsync /
fdatasync, the sync engines, io_uring, time_based."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import FLUSH
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.distribution import BlockSampler, _scatter, parse_distribution
from tests.models.fakes import FixedDevice

MS = 1_000_000


def _run(cfg, service_ns=MS, queue_depth=32, seed=1, **block):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=service_ns, queue_depth=queue_depth)
    job = FioJob(sim, cfg, BlockQueue(sim, dev, BlockConfig(scheduler="noop", **block)),
                 np.random.default_rng(seed))
    job.start()
    sim.run()
    return job.results(), job


def test_rate_iops_caps_each_job_and_leaves_a_faster_device_idle():
    res, _ = _run(FioConfig(rw="randread", iodepth=8, rate_iops=200, runtime_s=1.0))
    assert res["iops"] == pytest.approx(200, abs=2)
    assert res["read_clat_mean_ms"] == pytest.approx(1.0, rel=0.01)   # never queued
    two, _ = _run(FioConfig(rw="randread", iodepth=8, rate_iops=200, numjobs=2, runtime_s=1.0))
    assert two["iops"] == pytest.approx(400, abs=4)


def test_a_job_ahead_of_its_rate_drains_then_sleeps_the_whole_wait():
    """fio's rate_ddir: ahead of the rate, the job waits for its I/Os in flight
    (io_u_quiesce), then sleeps as long as it was ahead when it stopped, then catches
    up: 250 reads a second (due every 4 ms) on a 1 ms device start at 0, 5, 9, 13 ms,
    each one late by the drain, and the rate holds."""
    res, job = _run(FioConfig(rw="randread", iodepth=8, rate_iops=250, runtime_s=1.0))
    assert [t // MS for t, *_ in job.queue.device.served][:5] == [0, 5, 9, 13, 17]
    assert res["iops"] == pytest.approx(250, abs=2)


@pytest.mark.parametrize("caps, read_iops, write_iops", [
    ({"rate_iops": "100,50"}, 100, 50),
    ({"rate_iops": "100"}, 100, 100),           # one value caps each direction (fio)
    ({"rate": "400k,200k"}, 100, 50),           # bytes a second at bs=4k
    ({"rate": "400k", "rate_iops": "1"}, 100, 100),   # rate wins over rate_iops (init.c)
])
def test_rate_caps_reads_and_writes_of_a_mixed_job_each(caps, read_iops, write_iops):
    res, _ = _run(FioConfig(rw="randrw", iodepth=8, runtime_s=1.0, **caps))
    assert res["read_iops"] == pytest.approx(read_iops, abs=1.5)
    assert res["write_iops"] == pytest.approx(write_iops, abs=1.5)
    # a 1000-IOPS device, mostly idle: a read waits at most for the write due with it
    assert res["read_clat_mean_ms"] <= 2.0


def test_a_write_cap_alone_gives_the_reads_the_rest_of_the_device():
    # writes at 50/s; a drawn write that is not due is switched to a read (rate_ddir),
    # so reads take what the device (1 ms per I/O, one at a time) has left
    res, _ = _run(FioConfig(rw="randrw", iodepth=8, runtime_s=1.0, rate_iops=",50"))
    assert res["write_iops"] == pytest.approx(50, abs=1.5)
    assert res["read_iops"] + res["write_iops"] == pytest.approx(1000, rel=0.01)


@pytest.mark.parametrize("bad", ["1,2,3,4", "fast", "-5", "10,x"])
def test_a_bad_rate_names_the_option(bad):
    with pytest.raises(ValueError, match="^rate_iops: expected read"):
        FioConfig(rate_iops=bad)


@pytest.mark.parametrize("minimum, error, runtime_s", [
    ({"rate_iops_min": "2000"}, 5, 2.1),          # 1000 IOPS < 2000: EIO at the first cycle
    ({"rate_min": "8m"}, 5, 2.1),                 # 3.9 MB/s < 8 MiB/s (bytes, fio's rate_min)
    ({"rate_iops_min": "500,2000"}, 0, 2.3),      # the read minimum is met; no writes
])
def test_a_job_below_rate_min_ends_with_fios_error_after_the_settle(minimum, error, runtime_s):
    # the device serves 1000 IOPS; fio checks after a 2 s settle, then every rate_cycle
    res, _ = _run(FioConfig(rw="randread", iodepth=1, runtime_s=2.3, rate_cycle_ms=100,
                            **minimum))
    assert res["error"] == error
    assert res["runtime_s"] == pytest.approx(runtime_s, abs=0.002)


def test_thinktime_stalls_after_every_thinktime_blocks_completions():
    # 1 ms service + 4 ms think: 200 IOPS at QD1
    res, _ = _run(FioConfig(rw="randread", iodepth=1, thinktime_us=4000, runtime_s=1.0))
    assert res["iops"] == pytest.approx(200, abs=2)
    # think 4 ms after every 4 completions: 4 I/Os in 4 ms, then 4 ms idle
    res, _ = _run(FioConfig(rw="randread", iodepth=1, thinktime_us=4000, thinktime_blocks=4,
                            runtime_s=1.0))
    assert res["iops"] == pytest.approx(500, abs=5)


def test_thinktime_waits_for_the_ios_in_flight_before_it_sleeps():
    """fio's handle_thinktime quiesces first. QD8 on a device serving one I/O per ms,
    a 4 ms think every 8 completions: the think is due at the 8th completion (8 ms)
    with 7 I/Os in flight; they drain (15 ms), then the job sleeps to 19 ms. The 7
    completed while draining count toward the next think (fio takes
    last_thinktime_blocks before the drain), so from then on each think comes after
    one completion: 8 I/Os per 12 ms. (A think that overlapped the drain, as the model
    had it before, kept the device busy throughout: 999 IOPS, as if there were none.)"""
    res, job = _run(FioConfig(rw="randread", iodepth=8, thinktime_us=4000,
                              thinktime_blocks=8, runtime_s=1.0), queue_depth=8)
    served = [t // MS for t, *_ in job.queue.device.served]
    assert served[:24] == list(range(15)) + list(range(19, 27)) + [31]
    assert res["iops"] == pytest.approx(1000 * 8 / 12, abs=10)


@pytest.mark.parametrize("blkdev_sync", ["flush", "fua"])
def test_fsync_every_n_writes_drains_then_flushes(blkdev_sync):
    res, _ = _run(FioConfig(rw="randwrite", iodepth=4, fsync=8, runtime_s=0.5),
                  blkdev_sync=blkdev_sync)
    writes = res["write_iops"] * 0.5
    assert res["sync_count"] == pytest.approx(writes / 8, abs=1)
    # the sync waits for the writes in flight and its own flush (the fake device
    # serves one command at a time, 1 ms each): 8 writes + a flush -> 8 writes / 9 ms
    assert res["write_iops"] == pytest.approx(8 / 9e-3, rel=0.02)
    assert res["sync_lat_mean_ms"] == pytest.approx(1.0, rel=0.01)
    same, _ = _run(FioConfig(rw="randwrite", iodepth=4, fdatasync=8, runtime_s=0.5),
                   blkdev_sync=blkdev_sync)
    assert same["sync_count"] == res["sync_count"]        # a block device: both flush
    with pytest.raises(ValueError, match="fdatasync"):
        FioConfig(fsync=1, fdatasync=1)


def test_fsync_of_the_device_node_sends_no_flush_before_2_6_32():
    """``block_fsync`` of 2.6.18 wrote the device's dirty pages and nothing more: the
    job still drains before each sync, which then takes no time (2.6.18's default)."""
    res, job = _run(FioConfig(rw="randwrite", iodepth=4, fsync=8, runtime_s=0.5))
    assert job.queue.cfg.blkdev_sync is None
    assert res["sync_count"] == pytest.approx(res["write_iops"] * 0.5 / 8, abs=1)
    assert res["sync_lat_mean_ms"] == 0
    assert all(op != FLUSH for _, op, *_ in job.queue.device.served)
    assert res["write_iops"] == pytest.approx(1000, rel=0.01)


@pytest.mark.parametrize("engine", ["sync", "psync"])
def test_sync_engines_have_one_io_in_flight_whatever_iodepth(engine):
    res, _ = _run(FioConfig(rw="randread", iodepth=16, ioengine=engine, runtime_s=0.2))
    deep, _ = _run(FioConfig(rw="randread", iodepth=16, ioengine="libaio", runtime_s=0.2))
    # one server, 1 ms a command: same IOPS, but 16 in flight wait 16 ms (Little)
    assert res["read_clat_mean_ms"] == pytest.approx(1.0, rel=0.01)
    assert deep["read_clat_mean_ms"] == pytest.approx(16.0, rel=0.05)


def test_io_uring_is_asynchronous_like_libaio():
    ring, _ = _run(FioConfig(rw="randread", iodepth=16, ioengine="io_uring", runtime_s=0.2))
    aio, _ = _run(FioConfig(rw="randread", iodepth=16, ioengine="libaio", runtime_s=0.2))
    assert ring["iops"] == aio["iops"] and ring["read_clat_mean_ms"] == aio["read_clat_mean_ms"]
    assert ring["read_clat_mean_ms"] == pytest.approx(16.0, rel=0.05)


def test_without_time_based_a_job_stops_after_size_bytes():
    res, job = _run(FioConfig(rw="read", bs="64k", size="1m", time_based=False, runtime_s=100))
    assert job.jobs[0].issued == 16
    assert res["runtime_s"] < 0.05
    looped, job = _run(FioConfig(rw="read", bs="64k", size="1m", runtime_s=0.05))
    assert job.jobs[0].issued > 16


def _hot_share(kind, n=100_000, draws=200_000, top=0.01):
    s = BlockSampler(parse_distribution(kind), n, np.random.default_rng(3))
    counts = np.bincount(s.draw(draws), minlength=n)
    return np.sort(counts)[::-1][: int(n * top)].sum() / draws


def test_random_distributions_skew_as_fio_defines_them():
    assert _hot_share("random") < 0.05      # uniform: the busiest 1 % of blocks, ~3 %
    assert _hot_share("zipf:1.2") > 0.5                   # steep zipf: a hot 1 %
    assert 0.2 < _hot_share("zipf:0.8") < _hot_share("zipf:1.2")
    # pareto:0.2 is fio's 80/20: 80 % of the I/Os on the 20 % hottest ranks (the
    # ranks are spread over the region by a permutation, so those are 20 % of blocks)
    n = 100_000
    s = BlockSampler(parse_distribution("pareto:0.2"), n, np.random.default_rng(3))
    hot = _scatter(np.arange(n // 5), n, s.offset, s.stride)
    assert np.unique(hot).size == n // 5
    assert np.isin(s.draw(200_000), hot).mean() == pytest.approx(0.8, abs=0.01)
    # normal: draws around the middle of the region (before the scatter), the spread
    # set by the deviation percentage
    s = BlockSampler(parse_distribution("normal:10"), 1000, np.random.default_rng(3))
    s.offset = 0
    narrow = np.unique(s.draw(50_000)).size
    s2 = BlockSampler(parse_distribution("normal:50"), 1000, np.random.default_rng(3))
    assert narrow < np.unique(s2.draw(50_000)).size
    res, _ = _run(FioConfig(rw="randread", random_distribution="zipf:1.2", runtime_s=0.05))
    assert res["iops"] == pytest.approx(1000, abs=25)


@pytest.mark.parametrize("text, shares", [
    # zoned:<access %>/<size %>: consecutive zones from the region's start
    ("zoned:60/10:30/20:10/70", [0.6, 0.3, 0.1]),
    # a size left without a value takes what the others leave
    ("zoned:50/5:50", [0.5, 0.5]),
    # zoned_abs: sizes in bytes (1,000 blocks of 4 KiB here); past the zones: nothing
    ("zoned_abs:60/400k:40/1200k", [0.6, 0.4]),
])
def test_zoned_distributions_give_each_zone_its_share_uniformly(text, shares):
    """fio's __get_next_rand_offset_zoned(_abs): a draw of 1..100 picks the zone by
    its access percentage, then a uniform block inside it."""
    dist = parse_distribution(text)
    blocks = BlockSampler(dist, 1000, np.random.default_rng(3), 4096).draw(100_000)
    edges, prev = [0], 0.0
    for _, size in dist.zones:
        prev += size
        edges.append(int(prev) * 1000 // 100 if dist.kind == "zoned" else int(prev) // 4096)
    counts = np.histogram(blocks, bins=edges)[0]
    assert counts.sum() == blocks.size                 # nothing past the last zone
    assert list(counts / blocks.size) == pytest.approx(shares, abs=0.01)
    first = blocks[blocks < edges[1]]                   # uniform inside a zone
    assert np.unique(first).size == edges[1]
    assert np.bincount(first).max() < 3 * np.bincount(first).mean()


@pytest.mark.parametrize("value, message", [
    ("zipf", "random_distribution"), ("zipf:1", "random_distribution"),
    ("pareto:1.5", "random_distribution"), ("normal:101", "random_distribution"),
    ("zipf:x", "random_distribution"),
    ("zoned:60/10", r"^random_distribution: the zones' access percentages add up to 60, not 100"),
    ("zoned:50/60:50/60", r"^random_distribution: the zones' size percentages add up to more"),
    ("zoned:50/10:50/90,100/100", r"^random_distribution: a zoned distribution per direction"),
    ("zoned_abs:100/lots", r"^random_distribution: expected zoned_abs:<access %>/<size bytes>"),
])
def test_bad_distributions_name_the_option(value, message):
    with pytest.raises(ValueError, match=message):
        FioConfig(random_distribution=value)


def test_zoned_abs_zones_past_the_region_are_refused():
    with pytest.raises(ValueError, match=r"^random_distribution: the zones \(2097152 bytes\) "
                                         r"exceed the job's region \(1048576 bytes\)$"):
        _run(FioConfig(rw="randread", random_distribution="zoned_abs:50/1m:50/1m", size="1m"))


def test_paced_jobs_take_the_paced_job_and_the_others_the_plain_one():
    # a skewed distribution is the offsets' (fio.offsets), not a pace
    assert FioConfig().plain and FioConfig(random_distribution="zipf:1.1").plain
    for kw in ({"rate_iops": 1}, {"thinktime_us": 1}, {"fsync": 1}):
        assert not FioConfig(**kw).plain, kw


def test_size_and_offset_as_a_percentage_of_the_device():
    cap = 2**40                                   # the fake device's capacity
    cfg = FioConfig(rw="read", size="10%", offset="50%", bs="64k")
    assert cfg.region(cap) == (cap // 2, cap // 10 // 65536 * 65536)   # whole blocks
    # the size is capped at what lies beyond the offset, as fio does
    assert FioConfig(size="100%", offset="75%").region(cap) == (3 * cap // 4, cap // 4)
    _, job = _run(FioConfig(rw="randread", size="1%", offset="99%", runtime_s=0.01))
    j = job.jobs[0]
    assert j.region_start == int(cap * 0.99) // 4096 * 4096 and j.offsets.n_blocks == cap // 100 // 4096
    for bad in ({"size": "0%"}, {"size": "120%"}, {"offset": "100%"}, {"size": "x%"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            FioConfig(**bad)


def test_startdelay_starts_the_job_that_much_later_then_ramp_and_runtime():
    """fio's startdelay: nothing is issued before it; the ramp and the runtime follow."""
    res, job = _run(FioConfig(rw="randread", iodepth=1, startdelay_s=0.5, ramp_time_s=0.25,
                              runtime_s=1.0))
    served = job.queue.device.served
    assert served[0][0] == 500 * MS
    assert job.measure_from_ns == 750 * MS and job.finished_ns == 1750 * MS
    assert res["iops"] == pytest.approx(1000, abs=2)         # 1 ms per read, over 1 s
    with pytest.raises(ValueError, match="^startdelay_s: must be >= 0"):
        FioConfig(startdelay_s=-1)



def test_rate_process_poisson_issues_at_the_rate_with_exponential_gaps():
    """fio's rate_process=poisson: the same mean rate as the linear cap, but the gaps
    between I/Os are exponential (coefficient of variation ~1, not ~0)."""
    def gaps(process):
        res, job = _run(FioConfig(rw="randread", iodepth=8, rate_iops=1000, runtime_s=2.0,
                                  rate_process=process), service_ns=10_000)
        t = np.array([s[0] for s in job.queue.device.served], dtype=float)
        return res["iops"], np.diff(t)

    iops, g = gaps("poisson")
    assert iops == pytest.approx(1000, rel=0.07)
    assert 0.85 < g.std() / g.mean() < 1.15
    assert (g < 100_000).mean() == pytest.approx(1 - np.exp(-0.1), abs=0.03)  # P(gap < 0.1/rate)
    iops, g = gaps("linear")
    assert iops == pytest.approx(1000, abs=2) and g.std() / g.mean() < 0.05
    with pytest.raises(ValueError, match="^rate_process: must be linear or poisson"):
        FioConfig(rate_process="bursty")


def test_misaligned_writes_make_the_flash_drive_read_modify_write_both_end_pages():
    """fio's ba=512 with bs=4k - the random writes of a partition that does not start on
    a 4 KiB boundary: a write that starts or ends inside a 4 KiB flash page makes the
    drive read that page and merge it (read_modify_writes), so a misaligned 4 KiB write
    programs two pages; aligned, none is read and each write programs one. With read
    priority the merge's read goes ahead of the programs queued on its die, as a host
    read does: the misaligned job runs faster than with the reads queued behind them."""
    from models.device.ssd import SSD, SSDConfig

    def run(ba, read_priority=True):
        sim = Simulator()
        dev = SSD(sim, "ssd", SSDConfig(
            capacity_bytes=64 * 2**20, raw_capacity_bytes=80 * 2**20, channels=2,
            dies_per_channel=2, pages_per_block=16, precondition="sequential",
            read_priority=read_priority), rng=np.random.default_rng(1))
        sent = []
        submit = dev.submit
        dev.submit = lambda req: (sent.append((req.offset_bytes, req.size_bytes)), submit(req))
        job = FioJob(sim, FioConfig(rw="randwrite", bs="4k", ba=ba, iodepth=8, size="32m",
                                    runtime_s=1e6, number_ios=2000),
                     BlockQueue(sim, dev, BlockConfig(scheduler="noop")),
                     np.random.default_rng(1))
        job.start()
        sim.run()
        return job.results(), dev.stats(), sent

    aligned, a_st, _ = run("")
    assert a_st["read_modify_writes"] == 0 and a_st["flash_pages_written_host"] == 2000
    res, st, sent = run("512")
    partial = sum((off % 4096 != 0) + ((off + n) % 4096 != 0) for off, n in sent)
    assert partial > 1.5 * len(sent)                 # 7 in 8 offsets are misaligned
    assert st["read_modify_writes"] == partial
    assert st["flash_pages_written_host"] == sum(
        (off + n + 4095) // 4096 - off // 4096 for off, n in sent)
    assert res["iops"] < aligned["iops"]
    queued, q_st, _ = run("512", read_priority=False)
    assert q_st["read_modify_writes"] == partial
    assert res["iops"] > 1.2 * queued["iops"]
