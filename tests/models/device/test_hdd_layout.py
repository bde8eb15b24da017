"""HDD layout: reserved zone fronts, spares per range of cylinders, slipped sectors and
tracks, serpentine surface order, track boundaries and transfers over a slip.

One zone of 10 cylinders, 2 surfaces, 100 sectors a track (6000 RPM: 0.1 ms a
sector), no skew unless said.
"""
import dataclasses

import pytest

from models.device.hdd import HDDConfig, HDDZone
from models.device.hdd.mech import build_state, locate, track_run, track_span, xfer


def drive(surface_order="forward", **zone):
    return HDDConfig(rpm=6000.0, surfaces=2, zones=(HDDZone(0, 9, 100, **zone),),
                     seek_curve_cyl=(1, 9), seek_curve_ms=(1.0, 2.0),
                     surface_order=surface_order, cache_segments=1, cache_segment_bytes=0)


def chs(S, lba):
    c, h, s, spt, ang = locate(S, float(lba))
    return int(c), int(h), int(s)


def test_reserved_front_shifts_every_lba():
    S = build_state(drive(front_sectors=250))
    assert chs(S, 0) == (1, 0, 50)
    assert chs(S, 50) == (1, 1, 0)
    assert drive(front_sectors=250).sectors == 2000 - 250


def test_spares_at_the_end_of_each_range_of_cylinders():
    # ranges of 2 cylinders (400 sectors), the last 30 of each are spares
    cfg = drive(spare_range_cylinders=2, spare_sectors_per_range=30)
    S = build_state(cfg)
    assert cfg.sectors == 2000 - 5 * 30
    assert chs(S, 369) == (1, 1, 69)
    assert chs(S, 370) == (2, 0, 0)           # the next range starts at cylinder 2
    # the track holding the spares ends early for the LBAs
    assert track_span(S, 350.0) == (300.0, 370.0)


def test_slipped_sectors_push_later_lbas_on_within_the_zone_or_range():
    S = build_state(drive(slipped=((5, 1), (7, 2))))
    assert [chs(S, lba)[2] for lba in (4, 5, 6, 7)] == [4, 6, 9, 10]
    # with ranges, a slip only moves LBAs of its own range (into its spares)
    S = build_state(drive(spare_range_cylinders=2, spare_sectors_per_range=30,
                          slipped=((5, 1),)))
    assert chs(S, 5)[2] == 6 and chs(S, 369) == (1, 1, 70) and chs(S, 370) == (2, 0, 0)


def test_track_sparing_skips_a_whole_slipped_track():
    S = build_state(drive(slipped=((100, 100),)))     # track 1 (cylinder 0, head 1)
    assert chs(S, 99) == (0, 0, 99) and chs(S, 100) == (1, 0, 0)


def test_serpentine_reverses_the_surfaces_on_odd_cylinders():
    S = build_state(drive("alternate_in_zone"))
    assert [chs(S, lba)[:2] for lba in (0, 100, 200, 300, 400)] == [
        (0, 0), (0, 1), (1, 1), (1, 0), (2, 0)]


def test_a_slip_inside_a_track_costs_one_sector_of_transfer():
    plain = build_state(drive())
    slipped = build_state(drive(slipped=((50, 1),)))
    # 20 sectors from sector 40: the run passes over the slipped sector 50
    assert track_run(slipped, 40.0, 20.0)[5:] == (20.0, 21.0)
    t0 = xfer(plain, 40.0, 20.0, 0.0, 0.0, 0.0, False, 0.0)
    t1 = xfer(slipped, 40.0, 20.0, 0.0, 0.0, 0.0, False, 0.0)
    assert t1[2] - t0[2] == pytest.approx(100_000)


def test_zone_lbas_beyond_its_sectors_are_rejected():
    with pytest.raises(ValueError, match="zones: zone 0 lbas"):
        drive(lbas=1999, front_sectors=2)
    with pytest.raises(ValueError, match="slipped"):
        dataclasses.replace(drive(), zones=(HDDZone(0, 9, 100, slipped=((7, 2), (8, 1))),))
