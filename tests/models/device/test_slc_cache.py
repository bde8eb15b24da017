"""The flash back end's SLC cache (models/device/ssd/kernels.py, "The SLC cache"): host
writes program in SLC mode while the cache has room, then straight to TLC; idle time
folds it back; its size by how much of the drive is written; the FTL map's pages in
SLC mode."""
import dataclasses

import numpy as np
import pytest

from models.device.request import FLUSH, WRITE, IORequest
from models.device.ssd.flash import slc_cache_bytes
from models.device.ssd.nvme import NVMe, NVMeConfig
from models.sim import Simulator

from .jobs import run_job

UNIT = 4096
# one die: every program is on the same die, so a write-through write's latency is a
# constant plus its program time
ONE_DIE = NVMeConfig(capacity_bytes=1 << 28, raw_capacity_bytes=(1 << 28) * 9 // 8,
                     channels=1, dies_per_channel=1, pages_per_block=64,
                     write_cache=False, precondition="fresh", program_us=100.0,
                     slc_cache_bytes=16 * UNIT, slc_program_us=40.0)


def drive(**kw):
    sim = Simulator()
    return sim, NVMe(sim, "nvme0", dataclasses.replace(ONE_DIE, **kw),
                     rng=np.random.default_rng(1))


def latencies_ns(sim, dev, n, offset_bytes=0):
    lat = []
    run_job(sim, dev, "write", UNIT, 1, n, offset_bytes=offset_bytes,
            on_done=lambda req: lat.append(req.done_ns - req.submit_ns))
    return lat


def test_writes_program_in_slc_mode_until_the_cache_is_full_then_in_tlc():
    sim, dev = drive()
    lat = latencies_ns(sim, dev, 40)
    fast = lat[0]
    assert lat[:16] == [fast] * 16
    assert lat[16:] == [fast + 60_000] * 24          # program_us - slc_program_us
    assert dev.stats()["flash_pages_written_slc"] == 16


def test_without_a_cache_every_write_programs_at_program_us():
    sim, dev = drive(slc_cache_bytes=0, slc_program_us=0.0)
    lat = latencies_ns(sim, dev, 20)
    sim2, dev2 = drive()
    cached = latencies_ns(sim2, dev2, 20)
    assert lat == [cached[-1]] * 20
    assert "flash_pages_written_slc" not in dev.stats()


def test_idle_time_folds_the_cache_at_the_tlc_program_rate():
    sim, dev = drive()
    latencies_ns(sim, dev, 20)                       # the cache is full
    # 5.3 units' worth of TLC programs on the one die: 5 units fold
    sim.after(530_000, lambda _arg=None: None)
    sim.run()
    lat = latencies_ns(sim, dev, 10, offset_bytes=20 * UNIT)
    fast = lat[0]
    assert lat == [fast] * 5 + [fast + 60_000] * 5
    assert dev.stats()["flash_pages_written_slc"] == 16 + 5


def test_a_busy_drive_does_not_fold():
    # queued writes keep the die busy: no command finds it idle, nothing folds
    sim, dev = drive(write_cache=True, write_cache_bytes=1 << 20)
    run_job(sim, dev, "write", UNIT, 8, 64)
    assert dev.stats()["flash_pages_written_slc"] == 16


def test_the_dynamic_part_shrinks_with_the_share_of_the_drive_written():
    cfg = dataclasses.replace(ONE_DIE, slc_cache_bytes=6 << 20, slc_cache_dynamic_bytes=36 << 20)
    assert slc_cache_bytes(cfg) == 42 << 20                          # fresh: all of it
    full = dataclasses.replace(cfg, precondition="sequential")
    assert slc_cache_bytes(full) == 6 << 20                          # every LBA written
    quarter = dataclasses.replace(full, precondition_span_fraction=0.25)
    assert slc_cache_bytes(quarter) == (6 << 20) + 27 * (1 << 20)


def test_the_ftl_map_is_programmed_in_slc_mode():
    # a FLUSH after a write commits the map: 2 pages of one unit each, at slc_program_us
    def flush_ns(slc_program_us):
        sim, dev = drive(write_cache=True, power_loss_protection=False, flush_metadata_pages=2,
                         slc_program_us=slc_program_us)
        done = []
        dev.on_complete = done.append
        dev.submit(IORequest(WRITE, 0, UNIT))
        sim.run()
        t0 = sim.now_ns
        dev.submit(IORequest(FLUSH, 0, 0))
        sim.run()
        return sim.now_ns - t0
    assert flush_ns(70.0) - flush_ns(40.0) == 2 * 30_000 + 30_000   # the write's own program too


def test_a_cache_needs_both_program_times():
    with pytest.raises(ValueError, match="^slc_program_us: must be > 0 with an SLC cache"):
        dataclasses.replace(ONE_DIE, slc_program_us=0.0)
    with pytest.raises(ValueError, match="^slc_cache_dynamic_bytes: must be >= 0"):
        dataclasses.replace(ONE_DIE, slc_cache_dynamic_bytes=-1)
