"""RAID controller: geometry, exact command timings with stand-in members, the
battery-backed write-back cache (cache speed until full, then destage speed), the
write-through fallback, and the acceptance test on two real 15k RPM disks."""
from __future__ import annotations

import numpy as np
import pytest

from models.device.hdd import HDD, default_15k_sas
from models.device.raid import RAID, RAIDConfig
from models.device.raid.cache import DirtyExtents
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Simulator
from tests.models.fakes import FixedDevice

US = 1000
MS = 1_000_000
KB = 1024
LAT = round(RAIDConfig().controller_latency_us * US)   # the default controller latency


def _fixed(sim, n, service_ns=1 * MS, qd=4):
    return [FixedDevice(sim, service_ns=service_ns, queue_depth=qd, capacity_bytes=2**30,
                        name=f"d{i}") for i in range(n)]


def _run_one(sim, raid, req):
    log = []
    raid.on_complete = lambda r: log.append((r.op, r.done_ns - r.dispatch_ns))
    raid.submit(req)
    sim.run()
    return log[-1][1]


# -- configuration ----------------------------------------------------------------------------

def test_raid1_with_one_member_is_a_config_error():
    with pytest.raises(ValueError, match="^members:"):
        RAIDConfig(level=1, members=("sda",))
    sim = Simulator()
    with pytest.raises(ValueError, match="^members:"):
        RAID(sim, "md0", RAIDConfig(level=1), _fixed(sim, 1))


@pytest.mark.parametrize("kw,key", [({"level": 5}, "level"),
                                    ({"level": 10, "members": ("a", "b", "c")}, "members"),
                                    ({"stripe_size_bytes": 1000}, "stripe_size_bytes"),
                                    ({"queue_depth": 0}, "queue_depth"),
                                    ({"host_MBps": 0}, "host_MBps")])
def test_config_errors_name_the_key(kw, key):
    with pytest.raises(ValueError, match=f"^{key}:"):
        RAIDConfig(**kw)


def test_members_given_as_a_list_become_a_tuple():
    assert RAIDConfig(members=["sda", "sdb"]).members == ("sda", "sdb")


# -- geometry -----------------------------------------------------------------------------------

def test_raid0_stripes_and_merges_pieces_contiguous_on_a_member():
    sim = Simulator()
    r = RAID(sim, "md0", RAIDConfig(level=0, stripe_size_bytes=64 * KB), _fixed(sim, 2))
    assert r.capacity_bytes == 2 * 2**30
    assert r.split(0, 256 * KB) == [(0, 0, 128 * KB), (1, 0, 128 * KB)]
    assert r.split(96 * KB, 160 * KB) == [(1, 32 * KB, 32 * KB), (0, 64 * KB, 32 * KB)]


def test_raid10_stripes_over_mirrored_pairs():
    sim = Simulator()
    r = RAID(sim, "md0", RAIDConfig(level=10, stripe_size_bytes=64 * KB), _fixed(sim, 4))
    assert r.groups == [[0, 1], [2, 3]]
    assert r.capacity_bytes == 2 * 2**30
    assert r.split(64 * KB, 192 * KB) == [(1, 0, 64 * KB), (0, 64 * KB, 64 * KB)]


def test_dirty_extents_merge_coalesce_and_take_in_elevator_order():
    d = DirtyExtents()
    assert d.add(0, 4096) == 4096
    assert d.add(8192, 12288) == 4096
    assert d.add(4096, 8192) == 4096                  # bridges: one extent
    assert (d.starts, d.ends) == ([0], [12288])
    assert d.add(0, 4096) == 0                        # overwrite of dirty data: no space
    d.add(100_000, 104_096)
    assert d.take(50_000, 2**20) == (100_000, 104_096)
    assert d.take(104_096, 8192) == (0, 8192)         # wraps to the lowest address
    assert d.take(8192, 2**20) == (8192, 12288)
    assert d.take(0, 2**20) is None and d.bytes == 0


# -- exact timings with stand-in members -------------------------------------------------------

def test_battery_backed_write_and_flush_complete_at_cache_speed():
    sim = Simulator()
    members = _fixed(sim, 2)
    raid = RAID(sim, "md0", RAIDConfig(), members)
    # 10 us firmware + 4 KiB at 1000 MB/s (4.096 us) + the controller latency
    assert _run_one(sim, raid, IORequest(WRITE, 0, 4096)) == 10 * US + 4096 + LAT
    assert _run_one(sim, raid, IORequest(FLUSH, 0, 0)) == 10 * US + LAT
    # destaged in the background to both mirrors; flushes never reach them
    assert [m.served for m in members] == [[(10 * US, WRITE, 0, 4096)]] * 2
    assert raid.volatile_bytes() == 0


def test_without_battery_writes_go_through_and_flush_is_forwarded():
    sim = Simulator()
    members = _fixed(sim, 2)
    raid = RAID(sim, "md0", RAIDConfig(battery_backed=False), members)
    assert not raid.write_back
    assert _run_one(sim, raid, IORequest(WRITE, 0, 4096)) == 10 * US + 1 * MS + LAT
    assert _run_one(sim, raid, IORequest(FLUSH, 0, 0)) == 10 * US + 1 * MS + LAT
    assert [len(m.served) for m in members] == [2, 2]
    assert [m.completed[FLUSH] for m in members] == [1, 1]


def test_forced_write_back_without_battery_is_volatile_until_flushed():
    sim = Simulator()
    members = _fixed(sim, 2, service_ns=5 * MS)
    raid = RAID(sim, "md0", RAIDConfig(battery_backed=False, write_back_without_battery=True),
                members)
    log = []
    raid.on_complete = lambda r: log.append((r.op, sim.now_ns))
    raid.submit(IORequest(WRITE, 0, 4096))
    raid.submit(IORequest(FLUSH, 0, 0))
    sim.run(until_ns=1 * MS)
    assert log == [(WRITE, 10 * US + 4096 + LAT)] and raid.volatile_bytes() == 4096
    sim.run()
    # flush: waits for the destage (5 ms after 10 us), then the members' flushes (5 ms)
    assert log[1] == (FLUSH, 10 * US + 5 * MS + 5 * MS + LAT)
    assert raid.volatile_bytes() == 0


def test_read_of_dirty_data_is_served_from_cache():
    sim = Simulator()
    members = _fixed(sim, 2, service_ns=50 * MS)
    raid = RAID(sim, "md0", RAIDConfig(), members)
    raid.on_complete = lambda r: None
    raid.submit(IORequest(WRITE, 8192, 8192))
    sim.run(until_ns=1 * MS)
    req = IORequest(READ, 12288, 4096)
    lat = []
    raid.on_complete = lambda r: lat.append(r.done_ns - r.dispatch_ns)
    raid.submit(req)
    sim.run()
    assert req.cache_hit and lat[0] == 10 * US + 4096 + LAT
    assert sum(op == READ for m in members for _, op, _, _ in m.served) == 0


def test_raid1_reads_go_to_the_less_busy_mirror():
    sim = Simulator()
    members = _fixed(sim, 2)
    raid = RAID(sim, "md0", RAIDConfig(), members)
    raid.on_complete = lambda r: None
    for i in range(4):
        raid.submit(IORequest(READ, i * 2**20, 4096))
    sim.run()
    assert [len(m.served) for m in members] == [2, 2]


def test_member_stats_are_kept_per_member():
    sim = Simulator()
    raid = RAID(sim, "md0", RAIDConfig(battery_backed=False), _fixed(sim, 2))
    _run_one(sim, raid, IORequest(WRITE, 0, 4096))
    st = raid.member_stats()
    assert st["d0"]["completed_writes"] == 1 and st["d1"]["completed_writes"] == 1


# -- the write-back cache under load ------------------------------------------------------------

def _sync_write_flush_loop(sim, raid, n, offsets):
    """One thread: write 4 KiB, then FLUSH, then the next write (an fsync loop)."""
    lat = []
    state = {"k": 0, "t0": 0}

    def next_write(req=None):
        if req is not None and req.op == WRITE:
            raid.submit(IORequest(FLUSH, 0, 0))
            return
        if req is not None:
            lat.append(sim.now_ns - state["t0"])
        if state["k"] < n:
            state["t0"] = sim.now_ns
            raid.submit(IORequest(WRITE, int(offsets[state["k"]]), 4096))
            state["k"] += 1

    raid.on_complete = next_write
    next_write()
    sim.run()
    return np.array(lat)


def test_cache_speed_until_full_then_destage_speed_fixed_members():
    sim = Simulator()
    members = _fixed(sim, 2, service_ns=2 * MS, qd=1)
    raid = RAID(sim, "md0", RAIDConfig(cache_size_bytes=64 * 4096, destage_max_inflight=1,
                                       cache_line_bytes=4096), members)
    offs = np.arange(400) * 1_000_000 // 4096 * 4096          # no two writes adjacent
    lat = _sync_write_flush_loop(sim, raid, 400, offs)
    # write (14.096 us + LAT) + flush (10 us + LAT) while there is room ...
    assert lat[:60].max() == 10 * US + 4096 + LAT + 10 * US + LAT
    # ... then each write waits for one 2 ms destage (one destage at a time)
    assert np.mean(lat[100:]) == pytest.approx(2 * MS, rel=0.1)
    assert raid.cache_full_waits > 300 and raid.stats()["cache_max_used_bytes"] == 64 * 4096


def test_cache_space_is_taken_in_whole_cache_lines():
    """A 256 KB cache of 64 KB lines holds 4 scattered 4 KB writes, but 64 adjacent ones
    (16 per line); a line is free again once everything dirty in it is destaged."""
    for adjacent, fit in ((False, 4), (True, 64)):
        sim = Simulator()
        members = _fixed(sim, 2, service_ns=500 * MS, qd=1)       # destage: 0.5 s each
        raid = RAID(sim, "md0", RAIDConfig(cache_size_bytes=4 * 65536, destage_max_inflight=1,
                                           cache_line_bytes=65536), members)
        step = 4096 if adjacent else 1_048_576
        offs = np.arange(100) * step
        lat = _sync_write_flush_loop(sim, raid, 100, offs)
        assert int(np.argmax(lat > 100 * MS)) == fit, adjacent
        sim.run()
        assert raid.stats()["cache_lines_used"] == 0 and raid.volatile_bytes() == 0


def test_destage_in_address_order_is_sorted_sweeps():
    sim = Simulator()
    members = _fixed(sim, 2, service_ns=1 * MS, qd=1)
    raid = RAID(sim, "md0", RAIDConfig(destage_max_inflight=1, destage_order="address"),
                members)
    raid.on_complete = lambda r: None
    rng = np.random.default_rng(0)
    for off in rng.permutation(200) * 65536:
        raid.submit(IORequest(WRITE, int(off), 4096))
    sim.run()
    offs = [o for _, op, o, _ in members[0].served if op == WRITE]
    assert len(offs) == 200
    # the first destage starts at once; the rest is one ascending sweep and its wrap
    descents = sum(b < a for a, b in zip(offs[1:], offs[2:]))
    assert descents <= 1


def test_destage_by_age_writes_oldest_data_first_coalescing_later_neighbours():
    """The default: destage in the order data was written (no elevator over the cache);
    an extent's age is that of its oldest byte, so a later write adjacent to an older
    one is destaged with it."""
    sim = Simulator()
    members = _fixed(sim, 2, service_ns=1 * MS, qd=1)
    raid = RAID(sim, "md0", RAIDConfig(destage_max_inflight=1), members)
    raid.on_complete = lambda r: None
    order = [int(o) for o in np.random.default_rng(0).permutation(50) * 65536]
    for off in order:
        raid.submit(IORequest(WRITE, off, 4096))
    raid.submit(IORequest(WRITE, order[-1] + 4096, 4096))    # joins the newest extent
    raid.submit(IORequest(WRITE, order[5] + 4096, 4096))     # joins an old one
    sim.run()
    served = [(o, n) for _, op, o, n in members[0].served if op == WRITE]
    # the first write goes at once; the rest in age order, order[5]'s extent now 8 KB
    assert [o for o, _ in served] == order
    sizes = dict(served)
    assert sizes[order[5]] == 8192 and sizes[order[-1]] == 8192


# -- acceptance: two 15k RPM disks behind a battery-backed cache -------------------------------

def test_raid1_hdds_sync_writes_at_cache_speed_until_full_then_destage_speed():
    sim = Simulator()
    disks = [HDD(sim, f"sd{c}", default_15k_sas()) for c in "ab"]
    raid = RAID(sim, "md0", RAIDConfig(level=1, cache_size_bytes=2 * 2**20,
                                       cache_line_bytes=4096), disks)
    n = 3000
    offs = np.random.default_rng(1).integers(0, raid.capacity_bytes // 4096, n) * 4096
    lat = _sync_write_flush_loop(sim, raid, n, offs)
    full = int(np.argmax(lat > 1 * MS))                # first commit that waited
    # 2 MiB of 4 KiB writes fit before the first wait (destage drains a little meanwhile)
    assert full >= 512
    assert lat[:full].mean() == pytest.approx(10 * US + 4096 + LAT + 10 * US + LAT, rel=0.05)
    # afterwards each commit waits for room: the rate is the destage rate
    tail = lat[full + 500:]
    rate = len(tail) / (tail.sum() / 1e9)
    destage_rate = raid.destage_ops / (sim.now_ns / 1e9)
    assert rate == pytest.approx(destage_rate, rel=0.15)
    # sorted destage of a full cache with 32-deep NCQ beats random single writes
    # on a 15k disk (~250/s) but is far below cache speed (~6,000/s)
    assert 250 < rate < 2000
    for name, st in raid.member_stats().items():
        assert st["completed_writes"] == raid.destage_ops


@pytest.mark.parametrize("op", [READ, WRITE])
def test_host_link_is_shared_and_caps_the_array(op):
    """Many members in parallel cannot move data faster than the one host link."""
    sim = Simulator()
    members = _fixed(sim, 4, service_ns=100_000, qd=32)
    raid = RAID(sim, "r0", RAIDConfig(level=0, members=("a", "b", "c", "d"), host_MBps=100.0,
                                      cache_size_bytes=1 << 30), members)
    done = []
    raid.on_complete = done.append
    for i in range(40):
        raid.submit(IORequest(op, i * 2**20, 2**20))
    sim.run()
    assert len(done) == 40
    # 40 MB over a 100 MB/s link: at least 0.4 s, and not much more
    assert 0.4e9 <= max(r.done_ns for r in done) <= 0.45e9
