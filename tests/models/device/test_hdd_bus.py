"""HDD host-side controller costs (DiskSim disksim_diskctlr.c): the read watermark at
which a disconnected read reconnects, reselect / data preparation / completion
overheads, a separate write link rate, write data gating the media write, and the
minimum seek delay of media writes.

The small drive of test_hdd_mech: 10 ms revolution, 100 sectors a track (0.1 ms a
sector), read miss overhead 0.1 ms, read hit 0.01 ms, write miss 0.2 ms.
"""
import dataclasses

import pytest

from models.device.request import WRITE

from .test_hdd_cache import reads_at
from .test_hdd_mech import SMALL

# a slow link: 0.2 ms a sector (2.56 MB/s), slower than the media
SLOW = dataclasses.replace(SMALL, interface_mb_s=2.56, overhead_reselect_ms=0.15,
                           overhead_data_prep_ms=0.02, overhead_read_complete_ms=0.05,
                           overhead_write_complete_ms=0.04, read_ahead_max_bytes=0)


def test_a_read_miss_reconnects_at_its_watermark_then_streams_at_the_link_rate():
    # sector 0 passes at 10 ms; sectors end at 10.1 .. 10.8 ms
    (done, hit), = reads_at(SLOW, [(0, 0, 8)])
    # watermark 0: reconnect after the first sector (10.1 ms), reselect and data
    # preparation, 8 sectors over the link, status
    assert not hit and done == pytest.approx(10.1e6 + 0.17e6 + 8 * 0.2e6 + 0.05e6, abs=2)
    (done, hit), = reads_at(dataclasses.replace(SLOW, read_watermark=0.75), [(0, 0, 8)])
    # 0.75 of 8: the 6th sector is buffered at 10.6 ms
    assert done == pytest.approx(10.6e6 + 0.17e6 + 8 * 0.2e6 + 0.05e6, abs=2)
    # of the segment (64 sectors) instead: the whole request, buffered at 10.8 ms
    (done, hit), = reads_at(dataclasses.replace(SLOW, read_watermark=0.75,
                                                watermark_by_request=False), [(0, 0, 8)])
    assert done == pytest.approx(10.8e6 + 0.17e6 + 8 * 0.2e6 + 0.05e6, abs=2)


def test_a_read_hit_pays_its_overhead_data_preparation_and_status():
    cfg = dataclasses.replace(SLOW, read_ahead_max_bytes=32 * 512)
    log = reads_at(cfg, [(0, 0, 4), (100_000_000, 8, 4)])
    assert log[1] == (100_000_000 + 10_000 + 20_000 + 4 * 200_000 + 50_000, True)


def _write(cfg, sector, n):
    from models.device.hdd import HDD
    from models.device.request import IORequest
    from models.sim import Simulator
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    req = IORequest(WRITE, sector * 512, n * 512)
    dev.submit(req)
    sim.run()
    return req.done_ns


def test_a_media_write_waits_for_its_data_and_the_minimum_seek_delay():
    # sector 8 passes at 0.8 ms; the 0.2 ms overhead, then the data
    fast = dataclasses.replace(SMALL, overhead_reselect_ms=0.15, overhead_write_complete_ms=0.05)
    # a fast link: the data is in at 0.21 ms; with a 0.6 ms minimum seek the arm is
    # ready at 0.8 ms, just in time: 4 sectors, then reselect and status
    assert _write(dataclasses.replace(fast, min_seek_ms=0.6), 8, 4) == pytest.approx(
        0.8e6 + 0.4e6 + 0.2e6, abs=2)
    # 0.7 ms: the sector has passed - one more turn
    assert _write(dataclasses.replace(fast, min_seek_ms=0.7), 8, 4) == pytest.approx(
        10.8e6 + 0.4e6 + 0.2e6, abs=2)
    # a write link of 0.25 ms a sector: the last of 4 sectors is in at
    # 0.2 + 4 * 0.25 = 1.2 ms, so the write may start at 1.2 - 3 * 0.1 = 0.9 ms
    slow_w = dataclasses.replace(fast, interface_write_mb_s=2.048)
    assert _write(slow_w, 8, 4) == pytest.approx(10.8e6 + 0.4e6 + 0.2e6, abs=2)
    assert _write(slow_w, 9, 4) == pytest.approx(0.9e6 + 0.4e6 + 0.2e6, abs=2)


def test_a_cached_write_pays_data_preparation_the_write_link_and_status():
    cfg = dataclasses.replace(SLOW, write_cache=True, interface_write_mb_s=2.048)
    assert _write(cfg, 8, 4) == 20_000 + 20_000 + 4 * 250_000 + 40_000
