"""An SSD under fio through the block layer: the figures a run reports must agree with
each other (queueing identities), whatever the drive's state makes the rates.

On a drive preconditioned to the random-overwrite steady state writes are slow (GC),
but a request's latency still covers its wait for buffer space, the busy time and the
buffer-wait counter never exceed what the window allows, and fio and iostat count the
same completions."""
from __future__ import annotations

import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.ssd import SSD, SSDConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob

# an X25-E-like drive, smaller so that preconditioning is quick
SMALL = dict(capacity_bytes=1 << 30, raw_capacity_bytes=(1 << 30) + (80 << 20))


def _fio(rw, bs, iodepth, runtime_s=0.2, **dev):
    sim = Simulator()
    drive = SSD(sim, "sda", SSDConfig(**{**SMALL, **dev}))
    blk = BlockQueue(sim, drive, BlockConfig(scheduler="deadline"))
    job = FioJob(sim, FioConfig(rw=rw, bs=bs, iodepth=iodepth, size="512m",
                                runtime_s=runtime_s), blk, np.random.default_rng(1))
    job.start()
    sim.run()
    return job.results(), job.iostat(), drive.stats(), sim.now_ns


@pytest.mark.parametrize("rw", ["write", "randwrite"])
def test_qd1_writes_obey_littles_law(rw):
    r, io, st, window = _fio(rw, "4k", 1)
    assert r["iops"] > 1_000
    assert r["iops"] == pytest.approx(io["w_s"], abs=1 / 0.2)
    # one request in flight all the time: the completed ones' latencies fill the window
    assert io["avgqu_sz"] == pytest.approx(io["w_s"] * io["await_ms"] / 1e3, rel=0.05)
    assert r["write_clat_mean_ms"] == pytest.approx(io["await_ms"], rel=0.01)
    assert st["busy_ns"] <= window
    assert io["util_pct"] == pytest.approx(st["busy_ns"] / window * 100, rel=0.01)
    assert io["svctm_ms"] <= 1.05 * io["await_ms"]
    assert st["write_amplification"] < 15        # the steady state's, not a GC backlog


@pytest.mark.parametrize("rw,bs,iodepth", [("write", "1m", 32), ("write", "4k", 256),
                                           ("randrw", "4k", 256), ("write", "512k", 8)])
def test_counters_stay_within_the_window(rw, bs, iodepth):
    r, io, st, window = _fio(rw, bs, iodepth)
    split = bs == "1m"                         # max_sectors_kb 512: two requests per I/O
    requests = 2 * iodepth if split else iodepth
    ios = io["r_s"] + io["w_s"]
    assert ios > 0
    # the block layer holds at most nr_requests (128) per request list - reads and
    # writes each (2.6.18), 3/2 of it to a batcher - the drive at most its NCQ depth
    lists = 2 if rw == "randrw" else 1
    assert io["avgqu_sz"] <= min(requests, lists * 3 * 128 // 2) + 1e-9
    # every completed request spent its whole latency inside the window (no ramp), and
    # requests still in flight at the end add to the queue but not to await
    assert io["avgqu_sz"] >= ios * io["await_ms"] / 1e3 * (1 - 1e-9)
    assert st["busy_ns"] <= window
    assert io["util_pct"] == pytest.approx(st["busy_ns"] / window * 100, rel=1e-9)
    assert 0 < st["cache_wait_ns"] <= min(requests, 32) * window or rw == "randrw"
    # fio and iostat count the same data (sequential 4k bios merge: fewer requests)
    mb = io["rMB_s"] + io["wMB_s"]
    if split:              # a half done counts in iostat, its I/O not yet in fio
        assert r["MB_s"] <= mb <= r["MB_s"] + iodepth * 0.5 / 0.2
    else:
        assert r["MB_s"] == pytest.approx(mb, rel=1e-9)
        # merges count when they happen, the merged I/Os when their request completes
        assert ios <= r["iops"] <= ios + io["rrqm_s"] + io["wrqm_s"]


def test_big_writes_on_a_sequentially_written_drive_stream_at_flash_speed():
    r, io, st, window = _fio("write", "1m", 32, precondition="sequential")
    assert 120 < r["MB_s"] < 200
    assert st["write_amplification"] == 1.0
    assert st["cache_wait_ns"] <= 32 * window
