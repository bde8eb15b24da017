"""HDD buffer: where read-ahead stops (DiskSim's "Buffer continuous read" schemes), the
circular segment, hits on the part of the window not yet read, read-ahead on idle hit.

The small drive of test_hdd_mech: 10 ms revolution, 100 sectors a track on 2
surfaces in zone 0 (0.1 ms a sector), 10 us a sector over the link, read miss
overhead 0.1 ms, read hit overhead 0.01 ms, 64-sector segments.
"""
import dataclasses

from models.device.hdd import HDD
from models.device.hdd.cache import ra_stop
from models.device.hdd.mech import build_state
from models.device.request import READ, IORequest
from models.sim import Simulator

from .test_hdd_mech import SMALL

MS = 1_000_000


def reads_at(cfg, reads):
    """Submit ``(time_ns, first sector, sectors)`` reads; returns [(done_ns, hit)]."""
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    log = []
    dev.on_complete = lambda r: log.append((r.done_ns, r.cache_hit))
    for t, a, n in reads:
        sim.at(t, lambda _, a=a, n=n: dev.submit(IORequest(READ, a * 512, n * 512)))
    sim.run()
    return log


def test_read_ahead_stop_per_scheme():
    def stop(scheme, lo, a, b):
        return ra_stop(build_state(dataclasses.replace(SMALL, read_ahead_scheme=scheme)), lo, a, b)
    # bytes: read_ahead_max (32 sectors) past the read
    assert stop("bytes", 0.0, 0.0, 90.0) == 122.0
    # track / cylinder: no further than the track / cylinder the read ended on
    assert stop("track", 0.0, 0.0, 90.0) == 100.0
    assert stop("track", 0.0, 0.0, 10.0) == 42.0
    assert stop("cylinder", 0.0, 0.0, 190.0) == 200.0
    # track_stream: the end of the track holding the next sector, whatever the max ...
    assert stop("track_stream", 10.0, 10.0, 14.0) == 100.0
    assert stop("track_stream", 100.0, 100.0, 104.0) == 200.0
    # ... and one track more once the segment holds sectors from an earlier track
    assert stop("track_stream", 98.0, 98.0, 102.0) == 300.0
    assert stop("track_stream", 10.0, 10.0, 100.0) == 300.0


def test_track_stream_reads_to_the_track_end_and_the_segment_scrolls():
    cfg = dataclasses.replace(SMALL, read_ahead_scheme="track_stream")
    log = reads_at(cfg, [(0, 0, 4), (50 * MS, 96, 4), (100 * MS, 100, 4), (150 * MS, 4, 4)])
    assert [hit for _, hit in log] == [False, True, False, False]
    # the read-ahead reached the track end: [96, 100) is in the 64-sector segment
    assert log[1][0] == 50 * MS + 10_000 + 4 * 10_000
    # sector 4 was read ahead, then scrolled out of the segment by sectors 36..99;
    # the bytes scheme (32 sectors ahead) keeps it
    log = reads_at(SMALL, [(0, 0, 4), (150 * MS, 4, 4)])
    assert [hit for _, hit in log] == [False, True]


def test_a_read_spanning_a_track_switch_starts_a_stream_one_track_further():
    cfg = dataclasses.replace(SMALL, read_ahead_scheme="track_stream")
    log = reads_at(cfg, [(0, 98, 4), (100 * MS, 290, 4), (150 * MS, 300, 4)])
    assert [hit for _, hit in log] == [False, True, False]


def test_window_hits_wait_for_the_media_strict_hits_reposition():
    # the read-ahead starts at sector 4 at 10.4 ms; at 10.91 ms it has read 4..8;
    # [10, 14) is in the window but not yet read
    reads = [(0, 0, 4), (10_910_000, 10, 4)]
    log = reads_at(SMALL, reads)
    assert log[1] == (10_400_000 + 10 * 100_000 + 10_000, True)   # sector 13 read at 11.4 ms
    log = reads_at(dataclasses.replace(SMALL, read_ahead_window_hits=False), reads)
    # a miss: 0.1 ms overhead, sector 10 (at 11.0 ms) just passed: one more turn
    assert log[1] == (21_000_000 + 400_000 + 10_000, False)


def test_read_ahead_on_idle_hit_restarts_the_stream():
    # the stream stops at 4 + 32 = 36; a hit on [8, 12) later extends the target to 44
    reads = [(0, 0, 4), (100 * MS, 8, 4), (200 * MS, 40, 4)]
    log = reads_at(SMALL, reads)
    assert [hit for _, hit in log] == [False, True, True]
    log = reads_at(dataclasses.replace(SMALL, read_ahead_on_idle_hit=False), reads)
    assert [hit for _, hit in log] == [False, True, False]


def test_a_write_empties_the_segments_holding_its_sectors():
    from models.device.request import WRITE

    def run(cfg, with_write):
        sim = Simulator()
        dev = HDD(sim, "d", cfg)
        log = []
        dev.on_complete = lambda r: log.append((r.op, r.cache_hit))
        sim.at(0, lambda _: dev.submit(IORequest(READ, 0, 4 * 512)))
        if with_write:
            sim.at(50 * MS, lambda _: dev.submit(IORequest(WRITE, 10 * 512, 2 * 512)))
        sim.at(100 * MS, lambda _: dev.submit(IORequest(READ, 20 * 512, 4 * 512)))
        sim.run()
        return log[-1]
    cached = dataclasses.replace(SMALL, write_cache=True)
    assert run(cached, False) == (READ, True)
    # the read-ahead segment [0, 36) held sector 10: emptied by the write
    assert run(cached, True) == (READ, False)
    assert run(SMALL, True) == (READ, False)


def test_read_hits_on_write_data_follow_the_drive():
    from models.device.request import WRITE
    for allowed in (True, False):
        cfg = dataclasses.replace(SMALL, write_cache=True, read_hits_on_write_data=allowed)
        sim = Simulator()
        dev = HDD(sim, "d", cfg)
        log = []
        dev.on_complete = lambda r: log.append(r.cache_hit)
        sim.at(0, lambda _: dev.submit(IORequest(WRITE, 200 * 512, 4 * 512)))
        sim.at(50 * MS, lambda _: dev.submit(IORequest(READ, 200 * 512, 4 * 512)))
        sim.run()
        assert log == [True, allowed]


def test_read_any_free_blocks_buffers_the_sectors_passing_before_the_read():
    # the arm is on the track; after the 0.1 ms overhead sector 1 is the first to come
    # round, sector 50 at 5 ms: sectors 1..49 pass under the head first
    cfg = dataclasses.replace(SMALL, read_ahead_max_bytes=0, read_any_free_blocks=True)
    reads = [(0, 50, 4), (50 * MS, 10, 4), (60 * MS, 0, 1)]
    assert [hit for _, hit in reads_at(cfg, reads)] == [False, True, False]
    off = dataclasses.replace(cfg, read_any_free_blocks=False)
    assert [hit for _, hit in reads_at(off, reads)] == [False, False, False]
