"""Shared link: FIFO transfers, cut-through timing, and devices behind one link sharing
its bandwidth (two SSDs capped at the link; a RAID over disks behind an expander)."""
from __future__ import annotations

import pytest

from models.device.bus import Bus, BusConfig
from models.device.hdd import HDD, default_15k_sas
from models.device.raid import RAID, RAIDConfig
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.device.ssd import SSD, SSDConfig
from models.sim import Simulator
from tests.models.fakes import FixedDevice

from .jobs import run_job

MS = 1_000_000
MB = 10**6


def _log(ports, sim, reqs):
    log = []
    for p in ports:
        p.on_complete = lambda r, p=p: log.append((p.name, r.op, sim.now_ns))
    for p, r in reqs:
        p.submit(r)
    sim.run()
    return log


def test_config_error_names_the_key():
    with pytest.raises(ValueError, match="^bandwidth_MBps:"):
        BusConfig(bandwidth_MBps=0)


def test_transfers_queue_fifo_and_overlap_with_device_work():
    sim = Simulator()
    bus = Bus(sim, "link0", BusConfig(bandwidth_MBps=100))          # 1 MB: 10 ms
    a, b = (bus.attach(FixedDevice(sim, service_ns=1 * MS, queue_depth=4, name=n))
            for n in ("a", "b"))
    log = _log([a, b], sim, [(a, IORequest(WRITE, 0, MB)), (b, IORequest(WRITE, 0, MB))])
    # a: link 0-10 ms, device 0-1 ms; b: link 10-20 ms, reaches its device at 10 ms
    assert log == [("a", WRITE, 10 * MS), ("b", WRITE, 20 * MS)]
    assert b.device.served[0][0] == 10 * MS
    log = _log([a, b], sim, [(a, IORequest(READ, 0, MB)), (b, IORequest(READ, 0, MB))])
    # both devices deliver at +1 ms; a's data streamed meanwhile, b's waits for the link
    t0 = 20 * MS
    assert log == [("a", READ, t0 + 10 * MS), ("b", READ, t0 + 20 * MS)]
    assert bus.stats()["bytes"] == 4 * MB


def test_idle_link_adds_no_latency_and_flush_passes_through():
    sim = Simulator()
    bus = Bus(sim, "link0", BusConfig(bandwidth_MBps=1000))
    dev = FixedDevice(sim, service_ns=5 * MS, queue_depth=4, name="a")
    port = bus.attach(dev)
    log = _log([port], sim, [(port, IORequest(READ, 0, 4096)), (port, IORequest(FLUSH, 0, 0))])
    assert log == [("a", READ, 5 * MS), ("a", FLUSH, 10 * MS)]


def _small_ssd(sim, name):
    cfg = SSDConfig(capacity_bytes=2**30, raw_capacity_bytes=int(2**30 * 1.1),
                    precondition="sequential")
    return SSD(sim, name, cfg)


@pytest.mark.parametrize("rw", ["read", "write"])
def test_two_ssds_behind_one_link_are_capped_at_the_link(rw):
    sim = Simulator()
    alone = run_job(sim, _small_ssd(sim, "x"), rw, 128 * 1024, 32, 1500)
    assert alone.mb_s > 180                          # one X25-E streams 190-250 MB/s
    sim = Simulator()
    bus = Bus(sim, "pmp0", BusConfig(bandwidth_MBps=300))   # SATA 3 Gb/s port multiplier
    ports = [bus.attach(_small_ssd(sim, n)) for n in ("sdb", "sdc")]
    done = {}
    # run both jobs at once: start one, then the other, one sim.run for both
    for p in ports:
        _start_job(sim, p, rw, done)
    sim.run()
    total = sum(n * 128 * 1024 for n in done.values()) / (sim.now_ns / 1e9) / MB
    assert total == pytest.approx(300, rel=0.03)
    assert total < 0.8 * 2 * alone.mb_s              # well below the sum of the two
    assert bus.busy_ns == pytest.approx(sim.now_ns, rel=0.03)    # the link is the bottleneck


def _start_job(sim, port, rw, done, n=1500, qd=32, bs=128 * 1024):
    op = READ if rw == "read" else WRITE
    state = {"i": 0}
    done[port.name] = 0

    def issue():
        if state["i"] < n:
            port.submit(IORequest(op, state["i"] * bs, bs))
            state["i"] += 1

    def complete(req):
        done[port.name] += 1
        issue()

    port.on_complete = complete
    for _ in range(qd):
        issue()


def test_raid_over_disks_behind_one_expander_link():
    sim = Simulator()
    bus = Bus(sim, "sas0", BusConfig(bandwidth_MBps=100))
    disks = [bus.attach(HDD(sim, f"sd{c}", default_15k_sas())) for c in "ab"]
    raid = RAID(sim, "md0", RAIDConfig(level=1), disks)
    r = run_job(sim, raid, "write", 2**20, 4, 200)
    # both mirror copies cross the one 100 MB/s link: at most 50 MB/s of array writes
    assert bus.stats()["bytes"] == 2 * 200 * 2**20
    assert r.mb_s < 50 * 1.05
    assert raid.member_stats()["sda"]["completed_writes"] > 0
