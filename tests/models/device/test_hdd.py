"""The HDD device: exact traces on a small drive, and the data-sheet figures of the
default 15k SAS drive (the issue's acceptance checks)."""
import numpy as np
import pytest

from models.device.hdd import HDD, default_15k_sas
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Simulator

from .test_hdd_mech import REV, SMALL

KB = 1024


def closed_loop(cfg, offsets, size, qd, op=READ):
    """Keep ``qd`` commands outstanding until every offset was read; returns
    (sim, dev, completed requests in completion order)."""
    sim = Simulator()
    dev = HDD(sim, "sda", cfg)
    done = []
    it = iter(offsets)

    def issue():
        off = next(it, None)
        if off is not None:
            dev.submit(IORequest(op, int(off), size))

    def complete(req):
        done.append(req)
        issue()

    dev.on_complete = complete
    for _ in range(qd):
        issue()
    sim.run()
    return sim, dev, done


def iops(sim, done):
    return len(done) / (sim.now_ns / 1e9)


# -- exact traces on the small drive (10 ms revolution, 0.1 ms per sector) -----------
def test_first_read_waits_for_its_sector_then_streams_to_the_host():
    sim = Simulator()
    dev = HDD(sim, "d", SMALL)
    log = []
    dev.on_complete = lambda r: log.append((r.offset_bytes, r.done_ns, r.cache_hit))
    dev.submit(IORequest(READ, 0, 4 * 512))
    sim.run()
    # 0.1 ms overhead; sector 0 is at angle 0, so it comes round at 10 ms; 4 sectors
    # take 0.4 ms; the last sector crosses the 51.2 MB/s link in 10 us
    assert log == [(0, 10_000_000 + 400_000 + 10_000, False)]


def test_back_to_back_reads_without_read_ahead_lose_a_revolution():
    cfg = SMALL.__class__(**{**SMALL.__dict__, "read_ahead_max_bytes": 0, "cache_segments": 1,
                             "cache_segment_bytes": 0})
    sim, dev, done = closed_loop(cfg, [i * 4 * 512 for i in range(20)], 4 * 512, 1)
    gaps = np.diff([r.done_ns for r in done])
    # each read's sector passed during the previous transfer's tail and the overhead
    assert np.all(np.abs(gaps - (REV + 4 * 100_000)) < 0.02 * REV)


def test_read_ahead_serves_the_next_sequential_read_at_media_speed():
    sim, dev, done = closed_loop(SMALL, [i * 4 * 512 for i in range(20)], 4 * 512, 1)
    assert [r.cache_hit for r in done] == [False] + [True] * 19
    gaps = np.diff([r.done_ns for r in done])[1:]
    # 4 sectors per read at 0.1 ms a sector (track switches add the skew)
    assert np.median(gaps) == pytest.approx(400_000, abs=1_000)


def test_read_ahead_runs_while_idle_and_the_buffer_then_answers_at_once():
    sim = Simulator()
    dev = HDD(sim, "d", SMALL)
    log = []
    dev.on_complete = lambda r: log.append((r.done_ns, r.cache_hit))
    dev.submit(IORequest(READ, 0, 4 * 512))
    sim.run()
    t = sim.now_ns + 5 * int(REV)               # idle: the stream has read 32 sectors
    sim.at(t, lambda _: dev.submit(IORequest(READ, 20 * 512, 8 * 512)))
    sim.run()
    # overhead (10 us) + 8 sectors over the link (80 us)
    assert log[1] == (t + 10_000 + 80_000, True)


def test_flush_is_a_barrier_and_waits_for_destage():
    cfg = SMALL.__class__(**{**SMALL.__dict__, "write_cache": True})
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    log = []
    dev.on_complete = lambda r: log.append((r.op, r.offset_bytes, r.done_ns))
    dev.submit(IORequest(WRITE, 150 * 512, 8 * 512))
    dev.submit(IORequest(FLUSH, 0, 0))
    dev.submit(IORequest(READ, 0, 512))
    assert dev.volatile_bytes() == 0      # nothing acknowledged yet
    sim.run(until_ns=100_000)
    # the write is in the cache: acknowledged, volatile
    assert log[0][0] == WRITE and log[0][2] == 20_000 + 80_000
    assert dev.volatile_bytes() == 8 * 512
    sim.run()
    assert [op for op, _, _ in log] == [WRITE, FLUSH, READ]
    # the flush ended after the dirty sectors were written (a media access)
    assert log[1][2] > log[0][2] + 100_000
    assert dev.volatile_bytes() == 0
    assert dev.stats()["destages"] == 1


def test_idle_drive_destages_the_write_cache():
    cfg = SMALL.__class__(**{**SMALL.__dict__, "write_cache": True})
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    seen = []
    dev.on_complete = lambda r: seen.append(dev.volatile_bytes())
    for i in range(3):
        dev.submit(IORequest(WRITE, (300 + 100 * i) * 512, 4 * 512))
    sim.run()
    assert seen[0] > 0
    assert dev.volatile_bytes() == 0 and dev.stats()["destages"] == 3


def test_fua_write_goes_to_the_media():
    cfg = SMALL.__class__(**{**SMALL.__dict__, "write_cache": True})
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    log = []
    dev.on_complete = lambda r: log.append(r)
    req = IORequest(WRITE, 0, 512, fua=True)
    dev.submit(req)
    sim.run()
    assert not req.cache_hit and dev.volatile_bytes() == 0
    # overhead 0.2 ms, no movement so no settle, sector 0 at 10 ms
    assert req.done_ns == 10_000_000 + 100_000


def test_requests_beyond_the_capacity_are_rejected():
    sim = Simulator()
    dev = HDD(sim, "d", SMALL)
    with pytest.raises(ValueError):
        dev.submit(IORequest(READ, dev.capacity_bytes - 512, 1024))


# -- the default 15k SAS drive against its data sheet --------------------------------
def test_sequential_16k_reads_reach_the_zoned_media_rate():
    cfg = default_15k_sas()
    n = 3000
    outer = closed_loop(cfg, [i * 16 * KB for i in range(n)], 16 * KB, 1)
    inner_start = cfg.capacity_bytes - (n + 1) * 16 * KB
    inner = closed_loop(cfg, [inner_start + i * 16 * KB for i in range(n)], 16 * KB, 1)
    # rate from the first completion on (the first read pays a seek and a rotation)
    mb_s = [(n - 1) * 16 * KB / ((done[-1].done_ns - done[0].done_ns) / 1e9) / 1e6
            for _, _, done in (outer, inner)]
    print(f"sequential 16 KB reads, QD1: outer {mb_s[0]:.1f} MB/s, inner {mb_s[1]:.1f} MB/s")
    # data sheet: 204 MB/s outer, 122 MB/s inner
    assert mb_s[0] == pytest.approx(204, rel=0.02)
    assert mb_s[1] == pytest.approx(122, rel=0.02)


def random_offsets(cfg, n, size, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, cfg.capacity_bytes // size, n) * size


def test_random_4k_reads_qd1_match_seek_plus_half_rotation():
    cfg = default_15k_sas(queue_depth=1)
    sim, dev, done = closed_loop(cfg, random_offsets(cfg, 4000, 4 * KB), 4 * KB, 1)
    measured = iops(sim, done)
    media_s = 4 * KB / 163e6                 # ~mid-disk media rate
    bus_s = 4 * KB / (cfg.interface_mb_s * 1e6)
    expected = 1 / ((cfg.seek_avg_ms + 0.5 * 60e3 / cfg.rpm + cfg.overhead_read_miss_ms) / 1e3
                    + media_s + bus_s)
    print(f"random 4 KB reads QD1: {measured:.1f} IOPS (formula {expected:.1f})")
    assert measured == pytest.approx(expected, rel=0.05)


def test_random_4k_writes_qd1_pay_the_write_settle():
    cfg = default_15k_sas(queue_depth=1)
    offs = random_offsets(cfg, 3000, 4 * KB)
    r_sim, _, r_done = closed_loop(cfg, offs, 4 * KB, 1, READ)
    w_sim, _, w_done = closed_loop(cfg, offs, 4 * KB, 1, WRITE)
    per_read_ms = 1e3 / iops(r_sim, r_done)
    per_write_ms = 1e3 / iops(w_sim, w_done)
    # data sheet: 3.9 ms average write seek vs 3.4 ms read
    assert per_write_ms - per_read_ms == pytest.approx(0.5, abs=0.25)


def test_ncq_32_raises_random_read_iops_markedly():
    cfg = default_15k_sas()
    offs = random_offsets(cfg, 4000, 4 * KB)
    qd1 = iops(*closed_loop(cfg, offs, 4 * KB, 1)[::2])
    sim, dev, done = closed_loop(cfg, offs, 4 * KB, 32)
    qd32 = iops(sim, done)
    print(f"random 4 KB reads: QD1 {qd1:.0f} IOPS, QD32 {qd32:.0f} IOPS, x{qd32 / qd1:.2f}")
    assert qd32 / qd1 > 2.0
    # SPTF with 32 candidates cannot beat a seek-free rotation-limited service
    assert qd32 < 1e3 / (cfg.overhead_read_miss_ms + 0.2)
    # FIFO at depth 32 gains nothing over QD1: the order is the same
    fifo = iops(*closed_loop(default_15k_sas(scheduler="fifo"), offs, 4 * KB, 32)[::2])
    assert fifo == pytest.approx(qd1, rel=0.02)


def test_age_limit_bounds_the_worst_wait_under_sptf():
    offs = random_offsets(default_15k_sas(), 4000, 4 * KB, seed=2)
    worst = {}
    for limit in (0.0, 50.0):
        sim, dev, done = closed_loop(default_15k_sas(sptf_age_limit_ms=limit), offs, 4 * KB, 32)
        worst[limit] = max(r.done_ns - r.dispatch_ns for r in done) / 1e6
    assert worst[50.0] < worst[0.0]
    assert worst[50.0] < 50.0 + 32 * 12.0


def test_near_sequential_reads_hit_the_read_ahead():
    cfg = default_15k_sas()
    # 16 KB reads skipping 16 KB: every read lands in the stream being read ahead
    offs = [i * 32 * KB for i in range(500)]
    sim, dev, done = closed_loop(cfg, offs, 16 * KB, 1)
    hits = sum(r.cache_hit for r in done)
    assert hits == len(done) - 1
    # the head reads every sector including the skipped ones: half the media rate
    mb_s = len(done) * 16 * KB / (sim.now_ns / 1e9) / 1e6
    assert mb_s == pytest.approx(204 / 2, rel=0.05)


def test_sync_sequential_writes_without_write_cache_manage_one_per_revolution():
    # an fsync-after-each-append log without a write cache: each 4 KB write's sector
    # has just passed when the command arrives, so it waits a revolution (E2: "a
    # 15k RPM disk manages only a few hundred" fsyncs a second)
    cfg = default_15k_sas(queue_depth=1)
    sim, dev, done = closed_loop(cfg, [i * 4 * KB for i in range(500)], 4 * KB, 1, WRITE)
    assert iops(sim, done) == pytest.approx(cfg.rpm / 60, rel=0.03)


def test_write_cache_absorbs_random_writes_and_destages_them_sorted():
    offs = random_offsets(default_15k_sas(), 600, 4 * KB, seed=3)
    # 600 random 4 KB writes (2.4 MB) fit in the 16 MB cache: acknowledged at bus speed
    sim, dev, done = closed_loop(default_15k_sas(write_cache=True), offs, 4 * KB, 1, WRITE)
    assert all(r.cache_hit for r in done)
    ack_s = (done[-1].done_ns - done[0].dispatch_ns) / 1e9
    assert len(done) / ack_s > 5_000
    assert dev.volatile_bytes() == 0 and dev.stats()["destages"] == 600
    # idle destage picks by positioning time over the cache: faster than QD1 writes
    nocache = closed_loop(default_15k_sas(queue_depth=1), offs, 4 * KB, 1, WRITE)[0]
    assert sim.now_ns < 0.6 * nocache.now_ns


def test_overheads_after_a_write_apply_to_the_next_command():
    cfg = SMALL.__class__(**{**SMALL.__dict__, "write_cache": True,
                             "overhead_read_hit_after_write_ms": 0.5})
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    log = []
    dev.on_complete = lambda r: log.append(r.done_ns - r.dispatch_ns)
    dev.submit(IORequest(READ, 0, 512))            # miss; the stream buffers sector 1 on
    for i, op in enumerate((READ, WRITE, READ)):   # hit after read, write, hit after write
        sim.at(50_000_000 * (i + 1), lambda _, op=op: dev.submit(IORequest(op, 512, 512)))
    sim.run()
    # read hit: 10 us overhead + 10 us transfer; write hit 20 + 10; after it 500 + 10
    assert log[1:] == [20_000, 30_000, 510_000]
