"""RAM (tmpfs) device: microsecond commands, shared memory bandwidth, free FLUSH, and
durability: everything stored is volatile."""
from __future__ import annotations

import pytest

from models.device.ram import RAM, RAMConfig
from models.device.request import DISCARD, FLUSH, READ, WRITE, IORequest
from models.sim import Simulator

from .jobs import run_job


def _trace(dev, sim, reqs):
    log = []
    dev.on_complete = lambda r: log.append((r.op, r.offset_bytes, r.done_ns))
    for r in reqs:
        dev.submit(r)
    sim.run()
    return log


@pytest.mark.parametrize("key,value", [("capacity_bytes", 0), ("op_latency_us", -1),
                                       ("bandwidth_MBps", 0), ("queue_depth", 0)])
def test_config_errors_name_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        RAMConfig(**{key: value})


def test_exact_trace_latency_overlaps_copies_share_bandwidth():
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig(op_latency_us=1.0, bandwidth_MBps=4096))  # 4 KiB: 1 us
    log = _trace(dev, sim, [IORequest(WRITE, 0, 4096), IORequest(READ, 0, 4096),
                            IORequest(FLUSH, 0, 0), IORequest(READ, 8192, 8192)])
    assert log == [(FLUSH, 0, 0), (WRITE, 0, 2000), (READ, 0, 3000), (READ, 8192, 5000)]


def test_small_ops_are_microseconds_and_big_ones_run_at_memory_bandwidth():
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig())
    r = run_job(sim, dev, "randwrite", 4096, 1, 2000)
    assert 1.0 < r.lat_us < 3.0
    r = run_job(sim, dev, "read", 2**20, 8, 500)
    assert r.mb_s == pytest.approx(5000, rel=0.02)


def test_everything_stored_is_volatile_and_fsync_does_not_change_it():
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig(capacity_bytes=2**20))
    _trace(dev, sim, [IORequest(WRITE, 0, 4096), IORequest(WRITE, 0, 4096),
                      IORequest(WRITE, 6000, 100), IORequest(FLUSH, 0, 0)])
    assert dev.volatile_bytes() == 2 * 4096          # whole pages; the overwrite is free
    _trace(dev, sim, [IORequest(DISCARD, 0, 4096)])
    assert dev.volatile_bytes() == 4096


def test_out_of_range_is_an_error():
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig(capacity_bytes=2**20))
    with pytest.raises(ValueError, match="outside"):
        _trace(dev, sim, [IORequest(WRITE, 2**20, 4096)])


def test_busy_time_counts_overlapping_commands_once():
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig(op_latency_us=1.0, bandwidth_MBps=4096))
    _trace(dev, sim, [IORequest(WRITE, 0, 4096), IORequest(READ, 0, 4096)])
    assert dev.stats()["busy_ns"] == 3000


def test_busy_time_includes_the_busy_period_in_progress():
    """As the SSD's and as Linux reads io_ticks up to now: a run that ends with a
    command in service counts the time it has been outstanding so far."""
    sim = Simulator()
    dev = RAM(sim, "ram0", RAMConfig(op_latency_us=1.0, bandwidth_MBps=4096))
    dev.on_complete = lambda r: None
    dev.submit(IORequest(WRITE, 0, 4096))            # 1 us + 4096 B at 4.096 B/ns: 2 us
    sim.run(until_ns=1500)
    assert dev.stats()["busy_ns"] == 1500
    sim.run()
    assert dev.stats()["busy_ns"] == 2000
