"""HDD layout and mechanics: LBA mapping, seek curve, rotation, transfer, SPTF."""
import numpy as np
import pytest

from models.device.hdd import HDDConfig, HDDZone, default_15k_sas
from models.device.hdd.mech import (O_Q, Q_ANG, Q_CAND, Q_CYL, Q_HEAD, Q_HIT0, Q_NS, Q_OP,
                                    Q_SEQ, QCOLS,
                                    build_state, locate, reach, seek_table_ns, sptf_pick,
                                    xfer)

# 6000 RPM -> 10 ms per revolution, 100 sectors per track in zone 0 -> 0.1 ms a sector
SMALL = HDDConfig(
    rpm=6000.0, surfaces=2,
    zones=(HDDZone(0, 9, 100, track_skew_sectors=5, cylinder_skew_sectors=10),
           HDDZone(10, 19, 50, track_skew_sectors=3, cylinder_skew_sectors=6)),
    seek_curve_cyl=(1, 10, 19), seek_curve_ms=(1.0, 2.0, 3.0),
    head_switch_ms=0.2, write_settle_ms=0.3,
    overhead_read_hit_ms=0.01, overhead_read_miss_ms=0.1, overhead_write_hit_ms=0.02,
    overhead_write_miss_ms=0.2, overhead_flush_ms=0.05, interface_mb_s=51.2,
    cache_segments=2, cache_segment_bytes=64 * 512, read_ahead_max_bytes=32 * 512,
    queue_depth=4)
REV = 10_000_000.0


def test_locate_fills_surfaces_of_a_cylinder_then_the_next_cylinder():
    S = build_state(SMALL)
    assert locate(S, 0.0) == (0.0, 0.0, 0.0, 100.0, 0.0)
    c, h, s, spt, ang = locate(S, 100.0)          # head 1, one track skew
    assert (c, h, s) == (0.0, 1.0, 0.0) and ang == pytest.approx(5 / 100)
    c, h, s, spt, ang = locate(S, 200.0)          # cylinder 1: track skew + cylinder skew
    assert (c, h, s) == (1.0, 0.0, 0.0) and ang == pytest.approx(15 / 100)
    c, h, s, spt, ang = locate(S, 2000.0 + 7)     # zone 1 (50 sectors a track)
    assert (c, h, s, spt) == (10.0, 0.0, 7.0, 50.0) and ang == pytest.approx(7 / 50)
    c, h, s, spt, ang = locate(S, 2000.0 + 57)    # its second surface
    assert (c, h, s) == (10.0, 1.0, 7.0) and ang == pytest.approx((7 + 3) / 50)


def test_three_point_seek_curve_hits_the_points_and_the_average():
    n = 50_000
    tbl = seek_table_ns(n, 0.2, 3.4, 7.0) / 1e6
    d = np.arange(n)
    w = 2.0 * (n - d) / n ** 2
    w[0] = 0
    assert tbl[0] == 0.0
    assert tbl[1] == pytest.approx(0.2)
    assert tbl[-1] == pytest.approx(7.0)
    assert (w * tbl).sum() / w.sum() == pytest.approx(3.4, rel=1e-3)
    assert np.all(np.diff(tbl[1:]) >= -1e-12)
    # short seeks grow like sqrt(distance), long ones linearly
    assert tbl[400] - tbl[100] > tbl[40_000] / 40_000 * 300


def test_measured_seek_curve_is_interpolated():
    tbl = seek_table_ns(20, 0, 0, 0, (1, 10, 19), (1.0, 2.0, 3.0))
    assert tbl[0] == 0 and tbl[1] == 1e6 and tbl[10] == 2e6
    assert tbl[5] == pytest.approx(1e6 + 4 / 9 * 1e6)


def test_default_config_three_point_fit_is_feasible():
    cfg = default_15k_sas()
    S = build_state(cfg)
    assert S.size > cfg.n_cylinders


def test_rotational_wait_follows_absolute_time():
    S = build_state(SMALL)
    # target sector at angle 0.5 on the current track: at t=0 the wait is half a turn
    assert reach(S, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, False, 0.0) == pytest.approx(0.5 * REV)
    # the sector just passed: almost a whole revolution
    t = 0.5 * REV + 1000.0
    assert reach(S, 0.0, 0.0, t, 0.0, 0.0, 0.5, False, 0.0) == pytest.approx(1.5 * REV)
    # the same target 7 revolutions later: same angle, same wait
    assert reach(S, 0.0, 0.0, 7 * REV, 0.0, 0.0, 0.5, False, 0.0) == pytest.approx(7.5 * REV)
    # a seek of 10 cylinders (2 ms) then the wait to angle 0.5
    assert reach(S, 0.0, 0.0, 0.0, 10.0, 0.0, 0.5, False, 0.0) == pytest.approx(0.5 * REV)
    # writes settle: 2 ms + 0.3 ms, still before 5 ms
    assert reach(S, 0.0, 0.0, 0.0, 10.0, 0.0, 0.5, True, 0.0) == pytest.approx(0.5 * REV)
    # a head switch (0.2 ms) on the same cylinder to angle 0.01 (0.1 ms) misses it
    assert reach(S, 0.0, 0.0, 0.0, 0.0, 1.0, 0.01, False, 0.0) == pytest.approx(1.01 * REV)


def test_transfer_across_a_track_switch_waits_for_the_skew():
    S = build_state(SMALL)
    sect = REV / 100
    # 101 sectors from LBA 0 at t=0: one revolution, the 5-sector skew, one sector
    ts, tf, te, c, h = xfer(S, 0.0, 101.0, 0.0, 0.0, 0.0, False, 0.0)
    assert ts == 0.0 and tf == pytest.approx(sect)
    assert te == pytest.approx(REV + 5 * sect + sect)
    assert (c, h) == (0.0, 1.0)
    # across a cylinder switch (head 1 -> cylinder 1 head 0): the 10-sector cylinder
    # skew covers less than the 1 ms seek (10 sectors = 1 ms exactly: on time)
    ts, tf, te, c, h = xfer(S, 199.0, 2.0, 0.0, 1.0, 0.0, False, 0.0)
    assert (c, h) == (1.0, 0.0)
    assert te - ts == pytest.approx(sect + 10 * sect + sect)


def test_sptf_prefers_the_nearest_sector_and_hits():
    S = build_state(SMALL)
    oq = int(S[O_Q])
    rows = [(10.0, 0.0, 0.0), (0.0, 0.0, 0.3), (0.0, 0.0, 0.1)]
    for i, (cyl, head, ang) in enumerate(rows):
        r = oq + i * QCOLS
        S[r + Q_CYL], S[r + Q_HEAD], S[r + Q_ANG], S[r + Q_OP], S[r + Q_NS] = cyl, head, ang, 0, 8
        S[r + Q_CAND], S[r + Q_SEQ] = 1.0, i
    assert sptf_pick(S, 0.0, 0.0, 0.0, 0.0, 0.0, np.inf) == 2
    S[oq + 2 * QCOLS + Q_CAND] = 0.0           # not a candidate
    assert sptf_pick(S, 0.0, 0.0, 0.0, 0.0, 0.0, np.inf) == 1
    S[oq + 2 * QCOLS + Q_CAND] = 1.0
    # from t = 0.2 rev the sector at 0.1 has passed: 0.3 is next
    assert sptf_pick(S, 0.0, 0.0, 0.2 * REV, 0.2 * REV, 0.0, np.inf) == 1
    # queued behind a barrier (a FLUSH with arrival number 1): only row 0 may go
    assert sptf_pick(S, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0) == 0
    S[oq + 1 * QCOLS + Q_HIT0] = 1.0
    assert sptf_pick(S, 0.0, 0.0, 0.0, 0.0, 0.0, np.inf) == 1


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="^rpm:"):
        default_15k_sas(rpm=0)
    with pytest.raises(ValueError, match="^scheduler:"):
        default_15k_sas(scheduler="elevator")
    with pytest.raises(ValueError, match="^zones:"):
        default_15k_sas(zones=(HDDZone(0, 10, 100), HDDZone(5, 20, 90)))
    with pytest.raises(ValueError, match="^sectors_per_track:"):
        HDDZone(0, 10, 0)
    with pytest.raises(ValueError, match="^seek_avg_ms:"):
        default_15k_sas(seek_avg_ms=8.0)
    with pytest.raises(ValueError, match="^read_ahead_max_bytes:"):
        default_15k_sas(read_ahead_max_bytes=4 << 20)


def test_write_cache_bytes_is_at_most_the_drives_buffer():
    """The dirty data waits in the buffer: ``cache_segments`` x ``cache_segment_bytes``
    bounds it (DiskSim's write segments are some of the buffer's segments)."""
    from models.device.hdd.datasheet import constellation_es3

    cfg = constellation_es3()                    # 4 TB, a 128 MB buffer
    buffer = cfg.cache_segments * cfg.cache_segment_bytes
    assert buffer == 128 << 20
    assert constellation_es3(write_cache_bytes=buffer).write_cache_bytes == buffer
    for too_much in (buffer + 512, 8 << 40):    # 8 TB: more than the whole drive
        with pytest.raises(ValueError, match=r"^write_cache_bytes: must be at most the drive's "
                                             rf"buffer, cache_segments x cache_segment_bytes = "
                                             rf"16 x 8388608 = {buffer} bytes \(0: all of it\), "
                                             rf"got {too_much}$"):
            constellation_es3(write_cache_bytes=too_much)
    with pytest.raises(ValueError, match="^write_cache_bytes: "):
        SMALL.__class__(**{**SMALL.__dict__, "write_cache_bytes": 129 * 512})


def test_zones_given_as_dicts_are_converted():
    cfg = HDDConfig(rpm=7200, surfaces=1, zones=[{"first_cyl": 0, "last_cyl": 9,
                                                  "sectors_per_track": 10}],
                    seek_single_cyl_ms=1, seek_avg_ms=2, seek_full_stroke_ms=3)
    assert cfg.zones == (HDDZone(0, 9, 10),) and cfg.sectors == 100
