"""The HDD data-sheet builder (models/device/hdd/datasheet.py): the zone table and
seek points it derives, the presets it builds, and the figures of each sheet that were
not inputs (README "Data-sheet presets")."""
import dataclasses

import pytest

from models.device.hdd import HDD, default_15k_sas
from models.device.hdd.datasheet import (CHEETAH_15K7, CONSTELLATION_ES3, SAVVIO_10K4,
                                         HDDDataSheet, hdd_from_datasheet)
from models.device.hdd.mech import build_state
from models.sim import Simulator

from .jobs import run_job


def test_the_15k_sheet_gives_the_published_experiments_drive():
    """default_15k_sas is the Cheetah sheet through the builder; the geometry the
    published experiments ran on (the config before the builder existed) is pinned."""
    cfg = default_15k_sas()
    assert cfg == hdd_from_datasheet(CHEETAH_15K7)
    assert default_15k_sas(queue_depth=1) == dataclasses.replace(cfg, queue_depth=1)
    assert (cfg.cylinders, len(cfg.zones), cfg.capacity_bytes) == (109_400, 20, 300_000_000_000)
    first, last = cfg.zones[0], cfg.zones[-1]
    assert (first.first_cyl, first.last_cyl, first.sectors_per_track, first.track_skew_sectors) \
        == (0, 5_469, 1_675, 85)
    assert (last.first_cyl, last.last_cyl, last.sectors_per_track, last.track_skew_sectors) \
        == (103_930, 109_399, 1_003, 52)
    assert (cfg.seek_single_cyl_ms, cfg.seek_avg_ms, cfg.seek_full_stroke_ms,
            cfg.write_settle_ms, cfg.head_switch_ms) == (0.2, 3.4, 7.0, 0.5, 0.2)
    assert (cfg.rpm, cfg.surfaces, cfg.queue_depth, cfg.write_cache) == (15_000, 4, 32, False)


@pytest.mark.parametrize("sheet", [SAVVIO_10K4, CONSTELLATION_ES3])
def test_zones_hold_the_capacity_and_run_at_the_sheet_rates(sheet):
    cfg = hdd_from_datasheet(sheet)
    assert cfg.sectors * 512 == sheet.capacity_bytes
    assert cfg.zone_sectors >= cfg.sectors
    assert cfg.rpm == sheet.rpm and cfg.surfaces == sheet.heads
    rev_s = 60.0 / sheet.rpm
    outer, inner = cfg.zones[0], cfg.zones[-1]
    # sustained rate of a zone: one track per revolution plus the skewed switch
    for z, mb_s in ((outer, sheet.sustained_outer_MBps), (inner, sheet.sustained_inner_MBps)):
        rate = z.sectors_per_track * 512 / rev_s / 1e6
        sustained = rate * z.sectors_per_track / (z.sectors_per_track + z.track_skew_sectors)
        assert sustained == pytest.approx(mb_s, rel=0.01)
    assert cfg.write_settle_ms == pytest.approx(sheet.seek_avg_write_ms - sheet.seek_avg_read_ms)
    assert cfg.cache_segments * cfg.cache_segment_bytes == sheet.cache_bytes
    build_state(cfg)                   # the seek curve fits the three sheet points


def test_bad_sheet_values_name_the_key():
    with pytest.raises(ValueError, match="^sustained_inner_MBps"):
        dataclasses.replace(SAVVIO_10K4, sustained_inner_MBps=300.0)
    with pytest.raises(ValueError, match="^heads"):
        dataclasses.replace(SAVVIO_10K4, heads=0)
    with pytest.raises(ValueError, match="^capacity_bytes"):
        HDDDataSheet(rpm=7200, heads=1, capacity_bytes=1000, seek_track_to_track_ms=1,
                     seek_avg_read_ms=8, seek_full_stroke_ms=16, sustained_outer_MBps=100,
                     sustained_inner_MBps=50, cache_bytes=1 << 20)


# Figures of the sheets that were not inputs. Tracks per surface: the manual's
# user-accessible tracks against the cylinders the builder derives from capacity,
# heads and the sustained rates. QD1 4 KB random read over the whole drive against
# the manual's access time (with controller overhead) plus the average rotational
# latency: the average seek is an input, but over random LBAs (zoned: outer
# cylinders hold more) rather than random cylinders.
PREDICTED = [
    (SAVVIO_10K4, 147_620, (4.0 + 3.0)),
    (CONSTELLATION_ES3, 320_800, (8.5 + 0.1 + 60e3 / 7200 / 2)),
]


@pytest.mark.parametrize("sheet,tracks,access_ms", PREDICTED)
def test_sheet_figures_not_used_as_inputs_within_25_percent(sheet, tracks, access_ms):
    cfg = hdd_from_datasheet(sheet)
    assert cfg.n_cylinders == pytest.approx(tracks, rel=0.25)
    sim = Simulator()
    r = run_job(sim, HDD(sim, "sda", cfg), "randread", 4096, 1, 1000)
    assert r.lat_us / 1e3 == pytest.approx(access_ms, rel=0.25)
