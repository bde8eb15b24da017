"""The fused fio -> block -> drive loops are the event path, only faster: same
results, same iostat, same drive state, same simulator state, for every
configuration they take; and the comparison used here does notice a difference when
there is one."""
from __future__ import annotations

import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.device.request import READ, WRITE
from models.device.ssd import SSD, SSDConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio_fast import FusedLoop, code_fingerprint, mirrored_code_unchanged

NOOP = BlockConfig(scheduler="noop", nr_requests=128)
DEADLINE = BlockConfig(scheduler="deadline", nr_requests=128)
# an X25-E-like drive, smaller so that preconditioning is quick
SMALL_SSD = dict(capacity_bytes=1 << 30, raw_capacity_bytes=(1 << 30) + (80 << 20))


def _drive(sim, name="sda", kind="hdd", **overrides):
    if kind == "ssd":
        return SSD(sim, name, SSDConfig(**{**SMALL_SSD, **overrides}))
    return HDD(sim, name, default_15k_sas(**overrides))


def _request(r):
    return None if r is None else (r.op, r.offset_bytes, r.size_bytes, r.submit_ns, r.queue_ns,
                                   r.dispatch_ns, r.cache_hit, r.deadline_ns,
                                   r.parts[0].submit_ns, r.parts[0].size_bytes)


def _elevator(sched):
    out = [sched.count, {k: _request(r) for k, r in sched.by_end.items()},
           {k: _request(r) for k, r in sched.by_start.items()}]
    if sched.name == "deadline":
        out += [sched.batch_dir, sched.batching, sched.starved, dict(sched.last_key)]
        for q in sched.queues.values():
            out += [q._seq, list(q.keys), {k: _request(r) for k, r in q.by_key.items()},
                    [_request(r) for r in q.fifo]]
    elif sched.name == "noop":
        out.append([_request(r) for r in sched.fifo])
    return out


def _state(sim, job, blk, dev):
    """Everything observable after a run, as plain values."""
    res = job.results()
    st = job.iostat()
    heap = sorted((t, s, getattr(fn, "__name__", ""), _request(arg)) for t, s, fn, arg in sim._heap)
    c = blk.counters
    j = job.jobs[0]
    out = {
        "results": res, "iostat": st, "devstats": dev.stats(), "volatile": dev.volatile_bytes(),
        "dev": (dev.inflight, dev.free_servers, list(dev.completed), list(dev.bytes_done),
                dev.busy_ns, dev.cache_hits, len(dev.queue)),
        "blk": (blk.allocated, tuple(c.ios), tuple(c.sectors), tuple(c.ticks_ns), c.in_flight,
                c.io_ticks_ns, c.time_in_queue_ns, c.last_ns, tuple(c.merges)),
        "elevator": _elevator(blk.sched),
        "job": (j.in_flight, j.issued, j.reaped, j._pos, j.next_block,
                job.lat[READ].samples.tolist(), job.lat[WRITE].samples.tolist(),
                dict(job.bytes_done), job.finished_ns, job.measure_from_ns),
        "sim": (sim.now_ns, sim.events_processed, sim._seq, heap),
        "rng": j.rng.bit_generator.state,
    }
    if isinstance(dev, HDD):
        out["S"] = dev.S.copy()
        out["hdd"] = ([_request(r) for r in dev._slots], list(dev._free), dev._bg_destage,
                      dev._destaging_bytes, dev._unacked_bytes, dev._bg_destaging_bytes)
    else:
        out["i32"] = dev._i32.copy()
        out["i64"] = dev._i64.copy()
        out["ssd"] = (list(dev._volatile), dev._ctrl_free, dev._last_done, dev._last_durable,
                      dev._meta_dirty, dev._busy_since, dev._busy_total, dev.cache_full_waits,
                      dev.cache_wait_ns, list(dev._waits), dev._flush_pending)
    return out


def _run(fused, cfg, dev=None, block=NOOP, seed=1, until_ns=None):
    sim = Simulator()
    drive = _drive(sim, **(dev or {}))
    blk = BlockQueue(sim, drive, block)
    job = FioJob(sim, cfg, blk, np.random.default_rng(seed), fused=fused)
    job.start()
    sim.run(until_ns=until_ns)
    return _state(sim, job, blk, drive), job.fused


def assert_same(a, b):
    """Exact equality, floats to 1e-12 relative; names the first field that differs."""
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f"{key}: state vectors differ"
        elif isinstance(x, dict):
            assert x.keys() == y.keys(), key
            for k in x:
                if isinstance(x[k], float):
                    assert x[k] == pytest.approx(y[k], rel=1e-12, abs=0.0), f"{key}.{k}"
                else:
                    assert x[k] == y[k], f"{key}.{k}: {x[k]!r} != {y[k]!r}"
        else:
            assert x == y, f"{key} differs"


def _compare(cfg, dev=None, block=NOOP, seed=1, until_ns=None):
    event, none = _run(False, cfg, dev, block, seed, until_ns)
    fused, loop = _run(True, cfg, dev, block, seed, until_ns)
    assert none is None
    assert_same(event, fused)
    return event, loop


# -- the fused loop is taken, and it changes nothing --------------------------------
@pytest.mark.parametrize("name", ["host", "deadline", "HDD", "SSD"])
def test_the_mirrored_python_code_is_the_one_the_loops_were_written_against(name):
    # if this fails, a method a compiled loop mirrors (fio_fast._host_mirrored,
    # _deadline_mirrored, or the device loop's MIRRORED) changed: update closed_loop_host / hdd_closed_loop /
    # ssd_closed_loop to match, then MIRRORED_FINGERPRINTS. Until then the fast path
    # switches itself off and every run takes the event path.
    assert mirrored_code_unchanged(name), code_fingerprint(name)


CASES = {
    "randread_qd32": (FioConfig(rw="randread", bs="4k", iodepth=32, size="8g", runtime_s=100,
                                number_ios=5000), {}),
    "randread_qd1_ramp": (FioConfig(rw="randread", bs="4k", iodepth=1, size="8g", runtime_s=0.6,
                                    ramp_time_s=0.2), {}),
    "randwrite_qd4_wce_ramp": (FioConfig(rw="randwrite", bs="8k", iodepth=4, size="2g",
                                         runtime_s=0.5, ramp_time_s=0.1), {"write_cache": True}),
    "randwrite_qd1_wce": (FioConfig(rw="randwrite", bs="4k", iodepth=1, size="64m",
                                    runtime_s=10, number_ios=1500), {"write_cache": True}),
    "randrw_qd32_wce_ramp": (FioConfig(rw="randrw", rwmixread=70, bs="4k", iodepth=32,
                                       size="4g", runtime_s=1.5, ramp_time_s=0.3),
                             {"write_cache": True}),
    "randrw_qd4_nowce": (FioConfig(rw="randrw", bs="16k", iodepth=4, size="1g", runtime_s=100,
                                   number_ios=2000), {}),
    "randrw_psync_after_write_overheads": (
        FioConfig(rw="randrw", ioengine="psync", iodepth=8, size="1g", runtime_s=0.4),
        {"overhead_read_miss_after_write_ms": 0.3, "overhead_write_miss_after_write_ms": 0.2}),
    "seqread_qd4_readahead": (FioConfig(rw="read", bs="64k", iodepth=4, size="1g",
                                        runtime_s=0.3), {}),
    "readwrite_qd8_reap4": (FioConfig(rw="readwrite", bs="4k", iodepth=8,
                                      iodepth_batch_complete_min=4, size="256m", runtime_s=0.3),
                            {"write_cache": True}),
    "randread_qd32_sptf_age_limit": (FioConfig(rw="randread", iodepth=32, size="8g",
                                               runtime_s=0.8, ramp_time_s=0.1),
                                     {"sptf_age_limit_ms": 30.0}),
    "randread_qd16_fifo_ncq": (FioConfig(rw="randread", iodepth=16, size="8g", runtime_s=0.3),
                               {"scheduler": "fifo"}),
    "ssd_randread_qd32": (FioConfig(rw="randread", iodepth=32, size="512m", runtime_s=100,
                                    number_ios=6000), {"kind": "ssd"}),
    "ssd_randread_qd1_fresh_ramp": (FioConfig(rw="randread", iodepth=1, size="512m",
                                              runtime_s=0.03, ramp_time_s=0.01),
                                    {"kind": "ssd", "precondition": "fresh"}),
    "ssd_randwrite_qd32_wce_full_buffer": (FioConfig(rw="randwrite", iodepth=32, size="512m",
                                                     runtime_s=0.3, ramp_time_s=0.02),
                                           {"kind": "ssd"}),
    "ssd_randwrite_qd4_nowce": (FioConfig(rw="randwrite", bs="8k", iodepth=4, size="256m",
                                          runtime_s=100, number_ios=2000),
                                {"kind": "ssd", "write_cache": False}),
    "ssd_write_512k_qd4_streams_through_the_buffer": (
        FioConfig(rw="write", bs="512k", iodepth=4, size="256m", runtime_s=0.3,
                  ramp_time_s=0.01), {"kind": "ssd", "precondition": "sequential"}),
    "ssd_randrw_qd8_2k_rmw": (FioConfig(rw="randrw", rwmixread=60, bs="2k", iodepth=8,
                                        size="256m", runtime_s=0.1),
                              {"kind": "ssd", "precondition": "sequential"}),
    "ssd_readwrite_qd4_reap2": (FioConfig(rw="readwrite", bs="16k", iodepth=4,
                                          iodepth_batch_complete_min=2, size="64m",
                                          runtime_s=0.05),
                                {"kind": "ssd", "precondition": "sequential"}),
}


DEADLINE_CASES = {
    # mixed directions: batches, write starvation, the sort position per direction
    "deadline_randrw_qd32_wce": (FioConfig(rw="randrw", rwmixread=70, iodepth=32, size="4g",
                                           runtime_s=0.6, ramp_time_s=0.1),
                                 {"write_cache": True}),
    "deadline_readwrite_qd4": (FioConfig(rw="readwrite", bs="8k", iodepth=4, size="64m",
                                         runtime_s=0.2), {}),
    "deadline_randread_qd1": (FioConfig(rw="randread", iodepth=1, size="8g", runtime_s=0.3), {}),
    "deadline_ssd_randrw_qd16": (FioConfig(rw="randrw", iodepth=16, size="512m", runtime_s=0.05,
                                           ramp_time_s=0.01), {"kind": "ssd"}),
}


@pytest.mark.parametrize("name", list(CASES) + list(DEADLINE_CASES))
def test_fused_loop_reproduces_the_event_path(name):
    cfg, dev = CASES[name] if name in CASES else DEADLINE_CASES[name]
    event, loop = _compare(cfg, dev, NOOP if name in CASES else DEADLINE)
    assert loop.reason is None and loop.handovers >= 1
    # nearly every completion ran inside the compiled loop
    assert loop.events >= 0.9 * sum(event["devstats"][k] for k in
                                     ("completed_reads", "completed_writes"))


def test_more_than_one_chunk_of_random_draws():
    # 4096 draws per chunk: 9000 I/Os need three chunks, drawn when the event path would
    cfg = FioConfig(rw="randrw", bs="4k", iodepth=16, size="512m", runtime_s=100, number_ios=9000)
    event, loop = _compare(cfg, {"write_cache": True})
    assert event["job"][3] == 9000 - 2 * 4096
    _compare(cfg, {"kind": "ssd"})


def test_latency_buffer_refills(monkeypatch):
    monkeypatch.setattr(FusedLoop, "LAT_CAPACITY", 37)
    cfg = FioConfig(rw="randrw", bs="4k", iodepth=8, size="1g", runtime_s=100, number_ios=700)
    _compare(cfg)
    _compare(cfg, {"kind": "ssd"})


@pytest.mark.parametrize("kind, scale", [("hdd", 1.0), ("ssd", 0.02)])
def test_run_until_stops_at_the_same_point_and_can_continue(kind, scale):
    cfg = FioConfig(rw="randread", iodepth=16, size="512m", runtime_s=2.0 * scale,
                    ramp_time_s=0.1 * scale)
    _compare(cfg, {"kind": kind}, until_ns=int(432_100_000 * scale))   # mid-run, I/Os in flight

    def two_steps(fused):
        sim = Simulator()
        dev = _drive(sim, kind=kind, write_cache=True)
        blk = BlockQueue(sim, dev, NOOP)
        job = FioJob(sim, FioConfig(rw="randwrite", iodepth=4, size="512m", runtime_s=scale),
                     blk, np.random.default_rng(5), fused=fused)
        job.start()
        sim.run(until_ns=int(300_000_000 * scale))
        mid = (blk.snapshot(), dev.stats(), dev.volatile_bytes())
        sim.run()
        return mid, _state(sim, job, blk, dev)

    (mid_e, end_e), (mid_f, end_f) = two_steps(False), two_steps(True)
    assert mid_e == mid_f
    assert_same(end_e, end_f)


def test_other_activity_interleaves_exactly():
    """Three jobs on three drives (two HDDs, an SSD) in one simulation, and a sampler
    reading every queue every 7 ms: each fused loop stops before the others' events."""
    def run(fused):
        sim = Simulator()
        out = []
        queues, jobs = [], []
        for i, (rw, qd, kind) in enumerate((("randread", 32, "hdd"), ("randwrite", 2, "hdd"),
                                             ("randrw", 8, "ssd"))):
            dev = _drive(sim, f"sd{i}", kind, write_cache=True)
            blk = BlockQueue(sim, dev, NOOP)
            job = FioJob(sim, FioConfig(rw=rw, iodepth=qd, size="512m", runtime_s=0.4),
                         blk, np.random.default_rng(10 + i), fused=fused)
            queues.append(blk)
            jobs.append(job)

        def sample(_arg=None):
            out.append((sim.now_ns, [q.snapshot() for q in queues]))
            if sim.now_ns < 300_000_000:
                sim.after(7_000_000, sample)

        sim.after(1_000_000, sample)
        for job in jobs:
            job.start()
        sim.run()
        return out, [_state(sim, j, q, q.device) for j, q in zip(jobs, queues)], jobs

    out_e, st_e, _ = run(False)
    out_f, st_f, jobs = run(True)
    assert out_e == out_f
    for a, b in zip(st_e, st_f):
        assert_same(a, b)
    assert all(j.fused.handovers > 1 for j in jobs)


# -- when the loop does not apply ---------------------------------------------------
@pytest.mark.parametrize("cfg, block, reason", [
    (FioConfig(iodepth=4, numjobs=2, runtime_s=0.1), NOOP, "numjobs"),
    (FioConfig(iodepth=8, iodepth_batch_submit=4, runtime_s=0.1), NOOP, "batch"),
    (FioConfig(iodepth=4, runtime_s=0.1), BlockConfig(scheduler="cfq"), "elevator"),
    (FioConfig(bs="1m", iodepth=2, runtime_s=0.1), BlockConfig(max_sectors_kb=256), "split"),
])
def test_ineligible_jobs_run_the_event_path(cfg, block, reason):
    event, loop = _compare(cfg, block=block)
    assert reason in loop.reason and loop.handovers == 0


def test_a_loop_that_does_not_compile_leaves_the_event_path(monkeypatch):
    from models.device import hdd_closed_loop
    monkeypatch.setattr(hdd_closed_loop, "_entry", lambda: (None, None, "hdd_fio_loop does "
                                                            "not compile: TypingError"))
    event, loop = _compare(FioConfig(iodepth=4, runtime_s=0.1))
    assert "does not compile" in loop.reason and loop.handovers == 0


@pytest.mark.parametrize("cfg, block, dev", [
    (FioConfig(iodepth=8, runtime_s=0.2), BlockConfig(nr_requests=4), {}),   # waits for requests
    (FioConfig(iodepth=8, runtime_s=0.2), NOOP, {"queue_depth": 4}),         # waits in the elevator
    (FioConfig(iodepth=8, runtime_s=0.01), NOOP, {"kind": "ssd", "queue_depth": 4}),
])
def test_jobs_that_would_queue_in_the_block_layer_stay_on_the_event_path(cfg, block, dev):
    event, loop = _compare(cfg, dev, block)
    assert loop.reason is None and loop.handovers == 0


# -- the comparison can fail ----------------------------------------------------------
def test_a_different_seed_is_noticed():
    cfg = FioConfig(rw="randread", iodepth=4, size="1g", runtime_s=0.2)
    a, _ = _run(True, cfg, seed=1)
    b, _ = _run(True, cfg, seed=2)
    with pytest.raises(AssertionError):
        assert_same(a, b)


def test_a_deliberately_wrong_hand_back_is_noticed(monkeypatch):
    """One nanosecond more on the iostat start of the requests in flight at a
    hand-over shows in the comparison."""
    cfg = FioConfig(rw="randread", iodepth=8, size="1g", runtime_s=0.3, ramp_time_s=0.1)
    event, _ = _run(False, cfg)
    orig = FusedLoop._request

    def shifted(self, job, op, off, sub, qns, disp):
        return orig(self, job, op, off, sub, qns + 1, disp)

    monkeypatch.setattr(FusedLoop, "_request", shifted)
    fused, loop = _run(True, cfg)
    assert loop.handovers >= 2
    with pytest.raises(AssertionError, match="blk|iostat"):
        assert_same(event, fused)


def test_the_order_at_a_completion_matters_and_is_the_event_paths(monkeypatch):
    """Were the new command queued before the drive picks its next one (fio's
    resubmission first), SPTF would choose among more commands and the run would
    differ: the fused loop's equality with the event path is not an accident of
    the order not mattering."""
    assert mirrored_code_unchanged("HDD")   # fingerprint taken before the patch below
    cfg = FioConfig(rw="randread", iodepth=8, size="8g", runtime_s=0.3)
    fused, loop = _run(True, cfg)
    assert loop.handovers >= 1

    def resubmit_first(self, req):
        self._unacked_bytes = 0
        self._destaging_bytes = 0
        self.free_servers = 1
        self.inflight -= 1
        req.done_ns = self.sim.now_ns
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        if req.cache_hit:
            self.cache_hits += 1
        self.on_complete(req)        # fio refills: the new command joins the queue
        if self.free_servers:
            self._start_next()       # ... and only then does the drive pick

    with monkeypatch.context() as m:
        m.setattr(HDD, "_finish", resubmit_first)
        other, _ = _run(False, cfg)
    with pytest.raises(AssertionError):
        assert_same(other, fused)
