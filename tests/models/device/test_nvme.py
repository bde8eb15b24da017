"""The NVMe SSD (models/device/ssd/nvme.py): the PCIe link, the controller cores, FLUSH and
FUA with and without power-loss protection, and the shared flash back end."""
import dataclasses

import numpy as np
import pytest

from models.device.ssd import kernels as K
from models.device.ssd.nvme import NVMe, NVMeConfig
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Simulator
from tests.models.fs.helpers import CacheDevice, run_thread, stack

from .jobs import run_job

KB = 1024
SMALL = NVMeConfig(capacity_bytes=1 << 30, raw_capacity_bytes=(1 << 30) * 9 // 8,
                   channels=4, dies_per_channel=2, pages_per_block=64,
                   write_cache_bytes=1 << 20, precondition="sequential")


def drive(**kw):
    sim = Simulator()
    return sim, NVMe(sim, "nvme0", dataclasses.replace(SMALL, **kw), rng=np.random.default_rng(1))


def one(sim, dev, req):
    done = []
    dev.on_complete = done.append
    t0 = sim.now_ns
    dev.submit(req)
    sim.run()
    assert done == [req]
    return sim.now_ns - t0


def test_pcie_link_rate_by_generation_and_lanes():
    # Gen3: 8 GT/s x 128/130 = 984.6 MB/s a lane; 256-byte payloads behind 24 bytes
    assert SMALL.link_MBps == pytest.approx(8e3 / 8 * 128 / 130 * 4 * 256 / 280)
    gen4 = dataclasses.replace(SMALL, pcie_gen=4, pcie_lanes=4)
    gen2x1 = dataclasses.replace(SMALL, pcie_gen=2, pcie_lanes=1)
    assert gen4.link_MBps == pytest.approx(2 * SMALL.link_MBps)
    assert gen2x1.link_MBps == pytest.approx(500 * 256 / 280)
    with pytest.raises(ValueError, match="^pcie_lanes"):
        dataclasses.replace(SMALL, pcie_lanes=3)
    with pytest.raises(ValueError, match="^pcie_gen"):
        dataclasses.replace(SMALL, pcie_gen=6)


def test_a_large_read_is_bounded_by_the_link():
    # 8 MiB from fast flash over one Gen1 lane: the transfer dominates
    sim, dev = drive(pcie_gen=1, pcie_lanes=1, channel_MBps=4000.0, read_us=1.0)
    ns = one(sim, dev, IORequest(READ, 0, 8 << 20))
    assert ns == pytest.approx((8 << 20) / (dev.cfg.link_MBps * 1e6) * 1e9, rel=0.02)


def test_full_duplex_reads_and_writes_do_not_share_the_link():
    # a link-bound read and a link-bound write at once take as long as either alone
    kw = dict(pcie_gen=1, pcie_lanes=1, channel_MBps=4000.0, read_us=1.0, program_us=1.0,
              write_cache_bytes=16 << 20)
    sim, dev = drive(**kw)
    alone = one(sim, dev, IORequest(READ, 0, 4 << 20))
    sim, dev = drive(**kw)
    done = []
    dev.on_complete = done.append
    dev.submit(IORequest(READ, 0, 4 << 20))
    dev.submit(IORequest(WRITE, 64 << 20, 4 << 20))
    sim.run()
    assert len(done) == 2
    assert sim.now_ns < 1.1 * alone


def test_controller_cores_bound_small_reads():
    # fast flash and link: IOPS = cores / read_cmd_us
    kw = dict(read_us=0.5, channel_MBps=40000.0, read_cmd_us=10.0, dies_per_channel=8)
    for cores in (1, 4):
        sim, dev = drive(controller_cores=cores, **kw)
        r = run_job(sim, dev, "randread", 4096, 64, 4000)
        assert r.iops == pytest.approx(cores / 10e-6, rel=0.05)


def test_commands_are_counted_per_queue_of_their_thread():
    sim, dev = drive(nr_queues=4)
    for issuer in (0, 1, 5, 5):
        dev.submit(IORequest(READ, 0, 4096, issuer=issuer))
    sim.run()
    assert dev.per_queue == [1, 3, 0, 0]
    s = dev.stats()
    assert (s["queues_used"], s["busiest_queue_commands"]) == (2, 3)
    assert dev.queue_depth == 4 * SMALL.queue_depth


def _write_then_flush(**kw):
    sim, dev = drive(**kw)
    w = one(sim, dev, IORequest(WRITE, 0, 8 * KB))
    vol = dev.volatile_bytes()
    f = one(sim, dev, IORequest(FLUSH, 0, 0))
    return w, f, vol, dev


def test_flush_with_power_loss_protection_completes_at_once():
    w, f, vol, dev = _write_then_flush(power_loss_protection=True)
    assert vol == 0                               # the buffer is durable
    assert f == pytest.approx(dev.cfg.flush_cmd_us * 1e3, abs=1)


def test_flush_without_power_loss_protection_programs_the_cache_and_the_map():
    w, f, vol, dev = _write_then_flush(power_loss_protection=False, flush_metadata_pages=2)
    assert vol == 8 * KB
    # at least the two pages' programs and the map pages' programs, one after another
    assert f >= 2 * dev.cfg.program_us * 1e3
    _, f0, _, _ = _write_then_flush(power_loss_protection=False, flush_metadata_pages=0)
    assert f - f0 >= 2 * dev.cfg.program_us * 1e3
    assert dev.volatile_bytes() == 0


@pytest.mark.parametrize("units_per_nand_page", [1, 4])
def test_flush_programs_each_map_page_as_a_whole_nand_page(units_per_nand_page):
    # a lone map-page program holds its die for the NAND page's tPROG (units per page x
    # the effective per-unit program_us), after the page's units cross the channel -
    # not one unit's share of a stream's program
    kw = dict(power_loss_protection=False, nand_page_bytes=units_per_nand_page * 4 * KB)
    _, f3, _, dev = _write_then_flush(flush_metadata_pages=3, **kw)
    _, f0, _, _ = _write_then_flush(flush_metadata_pages=0, **kw)
    cfg = dev.cfg
    page_ns = units_per_nand_page * (cfg.program_us * 1e3
                                     + cfg.page_bytes / (cfg.channel_MBps * 1e6) * 1e9)
    assert f3 - f0 == pytest.approx(3 * page_ns, abs=3)


def _one_4k(fua=False, flush=False, padded=None, **kw):
    sim, dev = drive(flush_metadata_pages=0, **kw)
    w = one(sim, dev, IORequest(WRITE, 0, 4 * KB, fua=fua))
    ns = one(sim, dev, IORequest(FLUSH, 0, 0)) if flush else w
    assert dev.stats().get("flash_pages_padded") == padded
    return ns


# padding one 4 KiB unit's NAND page of 4 units: 3 units over the channel and programmed
PAD_NS = 3 * (60_000 + 10_240)          # program_us 60, 4 KiB at 400 MB/s


@pytest.mark.parametrize("plp", [False, True])
@pytest.mark.parametrize("what", ["flush", "fua"])
def test_a_flush_or_fua_write_pads_a_lone_writes_nand_page_only_without_plp(what, plp):
    # without power-loss protection the unit's page must be on flash (after the FLUSH,
    # or when the FUA write completes): the rest of it is padded, so the page costs its
    # whole program time; with it the buffer keeps gathering and both cost nothing more
    kw = dict(power_loss_protection=plp, **{what: True})
    t4 = _one_4k(nand_page_bytes=16 * KB, padded=0 if plp else 3, **kw)
    t1 = _one_4k(nand_page_bytes=0, **kw)          # no padding, nor its counter
    assert t4 - t1 == (0 if plp else PAD_NS)


@pytest.mark.parametrize("read_priority", [True, False])
def test_the_padding_goes_in_before_the_work_queued_behind_its_page(read_priority):
    # a unit programmed on a die, ten map pages booked on that die behind it (work such
    # as foreground GC): with read priority the padding goes in right after the unit's
    # program, as a read would, the queued work moving back by it; without, after the
    # queue
    sim, dev = drive(nand_page_bytes=16 * KB, power_loss_protection=False,
                     read_priority=read_priority)
    i32, i64, ftl = dev._i32, dev._i64, dev.ftl
    end = int(K.write(i32, i64, dev._ch_bpns, dev._link_bpns, 0, 4 * KB, 0, 0))
    assert ftl.fill[K.FILL_UNITS] == 1
    die = int(ftl.fill[K.FILL_DIE])
    queued = int(K.program_serial(i32, i64, dev._ch_bpns, die, 10, end, 0))
    padded = int(K.pad_open_pages(i32, i64, dev._ch_bpns, end, 0))
    if read_priority:
        # its transfer waits at most for the map page's transfer under way (4 units)
        assert end + PAD_NS <= padded <= end + PAD_NS + 4 * 10_240
        assert ftl.die_free[die] == queued + (padded - end)
    else:
        assert padded == queued + PAD_NS
    assert ftl.fill[K.FILL_UNITS] == 0


@pytest.mark.parametrize("die_busy", [True, False])
def test_data_in_before_the_padded_page_goes_to_its_die_takes_the_paddings_place(die_busy):
    # one die; a unit written and its page padded at once (a FUA write). If the die was
    # busy (ten map pages queued before the unit), the page goes to it when it is free:
    # units whose data is in the controller by then fill the page in place of padding -
    # mapped to its die, durable with it, no program of their own - and a unit that
    # comes later starts a new page. If the die was free, the page went at once and
    # nothing joins it.
    sim, dev = drive(nand_page_bytes=16 * KB, power_loss_protection=False,
                     read_priority=False, channels=1, dies_per_channel=1)
    i32, i64, ftl, ch, link = dev._i32, dev._i64, dev.ftl, dev._ch_bpns, dev._link_bpns
    queued = int(K.program_serial(i32, i64, ch, 0, 10, 0, 0)) if die_busy else 0
    end = int(K.write(i32, i64, ch, link, 0, 4 * KB, 0, 0))
    padded = int(K.pad_open_pages(i32, i64, ch, end, 0))
    assert padded == end + PAD_NS and ftl.fill[K.FILL_PADDED] == 3
    for lpn in (1, 2):                  # coming 1 us after the first unit
        durable = int(K.write(i32, i64, ch, link, lpn * 4 * KB, 4 * KB, 1000, 0))
        assert (durable == padded) == die_busy
    assert ftl.fill[K.FILL_PADDED] == (1 if die_busy else 3)
    assert ftl.fill[K.FILL_UNITS] == (0 if die_busy else 2)
    if die_busy:
        assert ftl.die_free[0] == padded
        late = int(K.write(i32, i64, ch, link, 3 * 4 * KB, 4 * KB, queued, 0))
        assert late == padded + 10_240 + 60_000 and ftl.fill[K.FILL_UNITS] == 1
        assert ftl.fill[K.FILL_PADDED] == 1 and ftl.fill[K.FILL_PAD_LEFT] == 0


def test_fua_write_completes_in_the_buffer_only_with_power_loss_protection():
    sim, dev = drive(power_loss_protection=True)
    plp = one(sim, dev, IORequest(WRITE, 0, 8 * KB, fua=True))
    sim, dev = drive(power_loss_protection=False)
    no_plp = one(sim, dev, IORequest(WRITE, 0, 8 * KB, fua=True))
    assert no_plp - plp >= dev.cfg.program_us * 1e3


def test_flush_is_queued_commands_after_it_are_not_held_back():
    # a fresh drive: the read of an unwritten LBA needs no flash, so nothing but a
    # barrier could hold it behind the FLUSH that waits for the write's programs
    sim, dev = drive(power_loss_protection=False, flush_metadata_pages=8,
                     precondition="fresh")
    done = []
    dev.on_complete = done.append
    dev.submit(IORequest(WRITE, 0, 64 * KB))
    dev.submit(IORequest(FLUSH, 0, 0))
    assert dev.can_accept()
    dev.submit(IORequest(READ, 1 << 20, 4 * KB))
    sim.run()
    assert sorted(r.op for r in done[:2]) == [READ, WRITE] and done[2].op == FLUSH


def _fdatasync_ns(device) -> int:
    sim, d, q, fs = stack("ext4", device=device)
    f = fs.create("f", 1024 * KB, "zero_fill")
    out = {}

    def thread():
        yield fs.pwrite(f, 0, 8192)
        t0 = sim.now_ns
        yield fs.fdatasync(f)
        out["ns"] = sim.now_ns - t0

    run_thread(sim, thread())
    return out["ns"]


@pytest.mark.parametrize("plp", [True, False])
def test_fdatasync_after_an_8k_overwrite(plp):
    """ext4 fdatasync of an 8 KB overwrite: data write + FLUSH. With power-loss
    protection it costs the write alone (the FLUSH only its command time); without,
    it pays for programming the cache and the FTL map. The filesystem's own time is
    measured on a device that takes none."""
    base = _fdatasync_ns(lambda sim: CacheDevice(sim, service_ns=0, flush_ns=0))
    cfg = dataclasses.replace(SMALL, power_loss_protection=plp, flush_metadata_pages=2)
    device_ns = _fdatasync_ns(lambda sim: NVMe(sim, "nvme0", cfg, rng=np.random.default_rng(1))) - base
    write_ns = cfg.write_cmd_us * 1e3 + 8192 / (cfg.link_MBps * 1e6) * 1e9
    if plp:
        assert device_ns == pytest.approx(write_ns + cfg.flush_cmd_us * 1e3, abs=100)
    else:
        # the write, then two data pages and two map pages programmed
        assert device_ns > write_ns + 3 * cfg.program_us * 1e3
