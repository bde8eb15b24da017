"""SSD model: exact timings of single commands, the FTL mechanism (write amplification
from over-provisioning), the write buffer and FLUSH, and the Intel X25-E data sheet."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.device.ssd import kernels as K
from models.device.request import DISCARD, FLUSH, READ, WRITE, IORequest
from models.device.ssd import SSD, SSDConfig
from models.device.ssd.ftl import FTLState, precondition
from models.sim import Simulator

from .jobs import run_job

# round numbers: 4 KiB over the channel = 100 us, over the host link = 10 us
SIMPLE = SSDConfig(capacity_bytes=64 * 2**20, raw_capacity_bytes=80 * 2**20, channels=2,
                   dies_per_channel=1, pages_per_block=16, read_us=20, program_us=200,
                   erase_us=1000, channel_MBps=40.96, host_MBps=409.6, read_cmd_us=10,
                   write_cmd_us=30, flush_cmd_us=5, write_cache_bytes=64 * 1024,
                   flush_metadata_pages=2, precondition="sequential")
US = 1000


def _one(dev, sim, op, off, size, fua=False):
    log = []
    dev.on_complete = lambda r: log.append((r.op, r.done_ns - r.dispatch_ns))
    dev.submit(IORequest(op, off, size, fua=fua))
    sim.run()
    return log[0][1]


# -- configuration ------------------------------------------------------------------------

@pytest.mark.parametrize("key,value", [("channels", 0), ("program_us", -1),
                                       ("channel_MBps", 0), ("precondition", "used"),
                                       ("die_allocation", "rr"),
                                       ("precondition_span_fraction", 1.5),
                                       ("page_bytes", 1000)])
def test_config_rejects_bad_values_naming_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        dataclasses.replace(SIMPLE, **{key: value})


def test_config_needs_spare_area():
    with pytest.raises(ValueError, match="^raw_capacity_bytes:"):
        dataclasses.replace(SIMPLE, raw_capacity_bytes=64 * 2**20)


def test_default_is_x25e_geometry():
    cfg = SSDConfig()
    assert cfg.channels == 10 and cfg.queue_depth == 32
    assert 0.06 < cfg.spare_fraction < 0.08          # 64 GiB of flash behind 64 GB


# -- exact single-command timings -----------------------------------------------------------

def test_read_is_command_sense_channel_and_link():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    assert _one(dev, sim, READ, 0, 4096) == (10 + 20 + 100 + 10) * US
    # 512 B: only the piece crosses the channel and the link
    assert _one(dev, sim, READ, 8192, 512) == 10 * US + 20 * US + 12_500 + 1_250


def test_unwritten_pages_read_without_touching_flash():
    sim = Simulator()
    dev = SSD(sim, "ssd0", dataclasses.replace(SIMPLE, precondition="fresh"))
    assert _one(dev, sim, READ, 0, 4096) == (10 + 10) * US
    assert dev.stats()["flash_pages_read"] == 0


def test_cached_write_completes_in_buffer_fua_at_program_end():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    assert _one(dev, sim, WRITE, 0, 4096) == (30 + 10) * US
    sim2 = Simulator()
    dev2 = SSD(sim2, "ssd0", SIMPLE)
    # FUA: + channel transfer in + tPROG
    assert _one(dev2, sim2, WRITE, 0, 4096, fua=True) == (30 + 10 + 100 + 200) * US
    sim3 = Simulator()
    dev3 = SSD(sim3, "ssd0", dataclasses.replace(SIMPLE, write_cache=False))
    assert _one(dev3, sim3, WRITE, 0, 4096) == (30 + 10 + 100 + 200) * US


def test_partial_page_write_reads_the_old_page_first():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    _one(dev, sim, WRITE, 512, 512, fua=True)
    assert dev.stats()["read_modify_writes"] == 1


def test_flush_drains_buffer_and_commits_metadata_only_after_writes():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    assert _one(dev, sim, FLUSH, 0, 0) == 5 * US                 # nothing written: cheap
    log = []
    dev.on_complete = lambda r: log.append((r.op, r.done_ns))
    dev.submit(IORequest(WRITE, 0, 4096))
    sim.run()
    t_ack = log[0][1]
    assert dev.volatile_bytes() == 4096                          # acked, not programmed
    dev.submit(IORequest(FLUSH, 0, 0))
    assert not dev.can_accept()                                  # non-queued command
    sim.run()
    # flush command, wait for the page's program (100 + 200 us after its data arrived),
    # then 2 metadata pages serially on one die (each 100 + 200 us)
    program_end = t_ack + 100 * US + 200 * US
    assert log[1] == (FLUSH, program_end + 2 * 300 * US)
    assert dev.volatile_bytes() == 0 and dev.can_accept()


def test_fua_and_uncached_writes_are_never_volatile():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    dev.on_complete = lambda r: None
    dev.submit(IORequest(WRITE, 0, 4096, fua=True))
    sim.run()
    assert dev.volatile_bytes() == 0


def test_discard_unmaps_whole_pages():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    _one(dev, sim, DISCARD, 1024, 3 * 4096)      # pages 1 and 2 are whole, 0 and 3 are not
    assert list(dev.ftl.l2p[:4] >= 0) == [True, False, False, True]


# -- the calendar ------------------------------------------------------------------------------

def test_channel_gap_is_backfilled():
    s = np.zeros((1, 8), dtype=np.int64)
    e = np.zeros((1, 8), dtype=np.int64)
    n = np.zeros(1, dtype=np.int64)
    assert K._reserve(s, e, n, 0, 1000, 100, 0) == 1000       # a transfer waiting for its die
    assert K._reserve(s, e, n, 0, 0, 100, 0) == 0             # fits before it
    assert K._reserve(s, e, n, 0, 50, 950, 0) == 1100         # does not fit in the gap
    assert K._reserve(s, e, n, 0, 100, 900, 0) == 100         # exactly fills it: merged
    assert (int(n[0]), list(s[0, :1]), list(e[0, :1])) == (1, [0], [2050])
    assert K._reserve(s, e, n, 0, 2500, 10, 2500) == 2500     # ended intervals dropped
    assert int(n[0]) == 1


# -- the FTL mechanism --------------------------------------------------------------------------

def _ftl(user_pages=40_000, dies=4, spare=0.0733, ppb=64, dynamic=False):
    bpd = int(user_pages * (1 + spare) / dies / ppb)
    return FTLState(user_pages, dies, 2, bpd, ppb, 2, 4096, False, dynamic, (1, 1, 1), 64)


def _wa(st, lpns):
    c0 = st.counters.copy()
    K.write_pages(st.i32, st.i64, lpns.astype(np.int32))
    c = st.counters - c0
    return (c[K.C_HOST_PAGES] + c[K.C_GC_PAGES]) / c[K.C_HOST_PAGES]


def test_sequential_overwrites_need_no_copies_random_ones_do():
    st = _ftl()
    precondition(st, "sequential", np.random.default_rng(0))
    assert _wa(st, np.tile(np.arange(40_000), 2)) == 1.0
    rng = np.random.default_rng(1)
    _wa(st, rng.integers(0, 40_000, 200_000))                  # age into steady state
    wa = _wa(st, rng.integers(0, 40_000, 100_000))
    # greedy GC with ~5 % usable spare (the free-block reserve and the two open blocks
    # of each die hold no data in so small a drive): several copies per host page
    assert 6 < wa < 11


@pytest.mark.parametrize("spare,lo,hi", [(0.15, 3.0, 5.0), (0.30, 1.8, 3.0)])
def test_write_amplification_falls_with_over_provisioning(spare, lo, hi):
    st = _ftl(spare=spare)
    precondition(st, "random", np.random.default_rng(0))
    assert lo < _wa(st, np.random.default_rng(1).integers(0, 40_000, 100_000)) < hi


def test_synthetic_steady_state_matches_aging_by_simulation():
    rng = np.random.default_rng(3)
    aged = _ftl()
    precondition(aged, "sequential", rng)
    _wa(aged, rng.integers(0, 40_000, 300_000))
    synth = _ftl()
    precondition(synth, "random", rng)
    assert (synth.l2p >= 0).all() and (np.sort(synth.p2l[synth.p2l >= 0]) == np.arange(40_000)).all()
    w_aged = _wa(aged, rng.integers(0, 40_000, 60_000))
    w_synth = _wa(synth, rng.integers(0, 40_000, 60_000))
    assert w_synth == pytest.approx(w_aged, rel=0.12)


def test_unwritten_span_acts_as_spare_area():
    st = _ftl()
    precondition(st, "random", np.random.default_rng(0), span_pages=10_000)
    assert (st.l2p[10_000:] < 0).all()
    assert _wa(st, np.random.default_rng(1).integers(0, 10_000, 60_000)) < 1.3


def test_dynamic_allocation_keeps_gc_room_on_every_die():
    st = _ftl(dynamic=True)
    precondition(st, "random", np.random.default_rng(0))
    # hammer a region that static striping would put on one die only
    _wa(st, np.tile(np.arange(0, 40_000, 4), 10))
    assert (st.free_n >= 1).all()
    assert int(st.dvalid.sum()) == 40_000


# -- data sheet: Intel X25-E 64 GB ------------------------------------------------------------

@pytest.fixture(scope="module")
def x25e():
    sim = Simulator()
    return sim, SSD(sim, "x25e", SSDConfig())


def test_x25e_random_read_iops_and_latency(x25e):
    sim, dev = x25e
    r = run_job(sim, dev, "randread", 4096, 32, 20_000)
    assert r.iops == pytest.approx(35_000, rel=0.10)              # data sheet: 35,000
    r = run_job(sim, dev, "randread", 512, 1, 2_000)
    assert r.lat_us == pytest.approx(75, rel=0.10)                # data sheet: 75 us


def test_x25e_sequential_read(x25e):
    sim, dev = x25e
    r = run_job(sim, dev, "read", 128 * 1024, 32, 3_000)
    assert r.mb_s == pytest.approx(250, rel=0.10)                 # data sheet: 250 MB/s


def test_x25e_write_latency_and_steady_random_writes(x25e):
    sim, dev = x25e
    r = run_job(sim, dev, "randwrite", 512, 1, 20, seed=5)
    assert r.lat_us == pytest.approx(85, rel=0.10)                # data sheet: 85 us
    r = run_job(sim, dev, "randwrite", 4096, 32, 20_000, seed=7)
    assert r.iops == pytest.approx(3_300, rel=0.25)               # data sheet: 3,300
    assert dev.stats()["write_amplification"] > 5


def test_x25e_sequential_write_on_a_sequentially_written_drive():
    sim = Simulator()
    dev = SSD(sim, "x25e", SSDConfig(precondition="sequential"))
    r = run_job(sim, dev, "write", 128 * 1024, 32, 2_000)
    assert r.mb_s == pytest.approx(170, rel=0.20)                 # data sheet: 170 MB/s
    assert dev.stats()["write_amplification"] == 1.0


def test_x25e_flush_is_about_10_ms_cached_write_a_tenth(x25e):
    """XFS on an X25-E: ~50 commits/s with barriers vs ~5,300 with nobarrier; the FLUSH
    after writes costs ~10 ms (flush_metadata_pages, calibrated on the former)."""
    sim, dev = x25e
    log = []

    def commit_loop(barrier, n):
        state = {"k": 0}

        def go(req=None):
            if req is not None:
                log.append((req.op, req.done_ns - req.dispatch_ns))
                if req.op == WRITE and barrier:
                    dev.submit(IORequest(FLUSH, 0, 0))
                    return
            state["k"] += 1
            if state["k"] <= n:                    # a redo-log-like 2 MB region
                dev.submit(IORequest(WRITE, (state["k"] % 512) * 4096, 4096))

        dev.on_complete = go
        t0 = sim.now_ns
        go()
        sim.run()
        return n / (sim.now_ns - t0) * 1e9

    with_barriers = commit_loop(True, 100)
    without = commit_loop(False, 20_000)
    flushes = [ns for op, ns in log if op == FLUSH]
    assert 8e6 < np.mean(flushes) < 12e6                         # ~10 ms
    assert 25 < with_barriers < 100
    assert without > 5_000
    assert without / with_barriers > 50


def test_busy_time_is_time_with_a_command_outstanding():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    dev.on_complete = lambda r: None
    dev.submit(IORequest(READ, 0, 4096))
    dev.submit(IORequest(READ, 4096, 4096))       # overlaps the first on the other die
    sim.run()
    assert dev.stats()["busy_ns"] == sim.now_ns < 2 * 140 * US


def test_out_of_range_command_is_an_error():
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    with pytest.raises(ValueError, match="outside"):
        dev.submit(IORequest(READ, SIMPLE.capacity_bytes - 4096, 8192))


# -- the write buffer and time accounting -----------------------------------------------------

def test_write_larger_than_the_buffer_is_acknowledged_only_once_it_fits():
    """A write of 4x the buffer: its last 3/4 can only come in as its own first pages
    are programmed (2 dies, 100 us channel + 200 us program per page each), so the
    acknowledgement is at flash speed, not link speed (64 pages x 10 us)."""
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    size = 4 * SIMPLE.write_cache_bytes
    ack = _one(dev, sim, WRITE, 0, size)
    pages_behind = (size - SIMPLE.write_cache_bytes) // SIMPLE.page_bytes
    assert ack >= pages_behind // SIMPLE.n_dies * 300 * US
    assert dev.stats()["cache_wait_ns"] <= ack


def test_cache_wait_counts_only_time_that_has_passed():
    """Eight buffer-sized writes at once: each waits for the one before to be
    programmed. At any moment the counter can hold at most (waiters x elapsed time),
    and once all are done no more than their summed latencies."""
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    lat = []
    dev.on_complete = lambda r: lat.append(r.done_ns - r.dispatch_ns)
    for k in range(8):
        dev.submit(IORequest(WRITE, k * SIMPLE.write_cache_bytes, SIMPLE.write_cache_bytes))
    sim.run(until_ns=1_000 * US)
    s = dev.stats()
    assert s["cache_full_waits"] == 7
    assert 0 < s["cache_wait_ns"] <= 7 * sim.now_ns
    assert s["busy_ns"] == sim.now_ns           # the busy period in progress counts
    sim.run()
    assert len(lat) == 8
    assert dev.stats()["cache_wait_ns"] <= sum(lat)
    assert dev.stats()["busy_ns"] == sim.now_ns


# -- the random steady state ----------------------------------------------------------------

def test_random_steady_state_dies_are_mid_cycle_not_all_at_the_gc_threshold():
    """Between collections a die has gc_min_free free blocks plus its two open blocks,
    at some point of its cycle. A few writes per die then cost the steady state's write
    amplification, not one big collection on every die at once."""
    st = _ftl(dies=16, spare=0.2, dynamic=True)
    precondition(st, "random", np.random.default_rng(0))
    assert (st.free_n == 2).all() and (st.active >= 0).all()
    assert len(set(st.wptr[0::2].tolist())) > 4                 # host blocks at spread fills
    rng = np.random.default_rng(1)
    first = _wa(st, rng.integers(0, 40_000, 16 * 16))           # 16 pages per die
    steady = _wa(st, rng.integers(0, 40_000, 100_000))
    assert first < 2 * steady


# -- read priority at the die ------------------------------------------------------------------

def test_read_waits_for_the_program_in_progress_not_the_queue():
    # static striping: LPNs 0, 2, 4 are on die 0. Two FUA writes book programs on it
    # (the first ends at 340 us, the second's transfer is on the channel 340-440 and it
    # ends at 640 us); a read arriving at 0 (its command ends at 70 us):
    done = {}
    for prio in (True, False):
        cfg = dataclasses.replace(SIMPLE, die_allocation="static", read_priority=prio)
        sim = Simulator()
        dev = SSD(sim, "s", cfg)
        log = {}
        dev.on_complete = lambda r: log.__setitem__(r.op, r.done_ns) if r.op == READ else None
        for op, lpn in ((WRITE, 0), (WRITE, 2), (READ, 4)):
            dev.submit(IORequest(op, lpn * 4096, 4096, fua=True))
        sim.run()
        done[prio] = log[READ]
    # with priority it starts when the first program ends: tR to 360, the channel
    # after the booked 340-440 transfer (440-540), the link 10 us
    assert done[True] == 550 * US
    # without, behind both programs: 640 + tR 20 + channel 100 + link 10
    assert done[False] == 770 * US


def _mixed(prio: bool, rw_mix_read: float, n: int = 3000, qd: int = 4):
    """Closed-loop 16 KiB random mix on a small steady-state drive: read latencies (ns)
    and the drive's final state."""
    cfg = SSDConfig(capacity_bytes=2**30, raw_capacity_bytes=2**30 + 80 * 2**20,
                    read_priority=prio)
    sim = Simulator()
    dev = SSD(sim, "s", cfg, rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    span = dev.capacity_bytes // 16384
    lat = []
    left = [n]

    def issue():
        if left[0] == 0:
            return
        left[0] -= 1
        op = READ if rng.random() < rw_mix_read else WRITE
        req = IORequest(op, int(rng.integers(0, span)) * 16384, 16384)
        req.submit_ns = sim.now_ns
        dev.submit(req)

    def done(req):
        if req.op == READ:
            lat.append(req.done_ns - req.submit_ns)
        issue()

    dev.on_complete = done
    for _ in range(qd):
        issue()
    sim.run()
    return np.array(lat), dev


def test_reads_do_not_wait_behind_a_foreground_gc_with_priority():
    on, dev_on = _mixed(True, 0.5)
    off, _ = _mixed(False, 0.5)
    assert dev_on.stats()["flash_pages_written_gc"] > 0          # GC ran during the mix
    erase_ns = SSDConfig().erase_us * US
    # a read waits for one program, copy or erase (and reads queued ahead), never for
    # the copies of a whole victim block: tens of ms without priority
    assert np.percentile(on, 99) < 2 * erase_ns
    assert np.percentile(off, 99) > 5 * erase_ns
    assert off.mean() > 3 * on.mean()


@pytest.mark.parametrize("mix", [1.0, 0.0])
def test_read_priority_changes_nothing_for_pure_reads_or_pure_writes(mix):
    a, dev_a = _mixed(True, mix, n=1500)
    b, dev_b = _mixed(False, mix, n=1500)
    assert np.array_equal(a, b)
    assert dev_a.stats() == dev_b.stats()
    assert dev_a.sim.now_ns == dev_b.sim.now_ns
