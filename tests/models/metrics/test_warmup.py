"""Burst vs sustained throughput: the warm-up is found from the series (metrics.warmup)."""
import numpy as np
import pytest

from models.metrics.warmup import burst_sustained, warmup


def test_warm_up_ends_where_the_moving_mean_enters_the_final_band_for_good():
    # 200 s at 1000 tps, then 800 s at 600: the 60 s window's mean is 1000 - 400 k / 60
    # with k seconds of the lower level in it, within 10 % of 600 from k = 51
    x = np.r_[np.full(200, 1000.0), np.full(800, 600.0)]
    assert warmup(x) == 251
    r = burst_sustained(x)
    assert r["burst_tps"] == pytest.approx((200 * 1000 + 50 * 600) / 250)   # first quarter
    assert r["sustained_tps"] == pytest.approx(600.0)


def test_a_flat_series_has_no_warm_up_and_a_late_dip_moves_it():
    flat = np.full(600, 500.0)
    assert warmup(flat) == 0
    assert burst_sustained(flat) == {"warmup_s": 0, "burst_tps": 500.0, "sustained_tps": 500.0}
    dip = flat.copy()
    dip[400:430] = 0.0                                   # a 30 s stall late in the run
    assert warmup(dip) > 430


def test_repeating_dips_shorter_than_the_window_settle():
    x = np.tile(np.r_[np.full(50, 700.0), np.full(10, 200.0)], 20)   # a dip every minute
    assert warmup(x, window=60) == 0                     # every window holds one period
    assert warmup(x, window=5) > len(x) - 60


def test_without_a_window_it_widens_until_the_dips_fit():
    """60 s with a dip every 10 s after a 15 s climb (the E8 runs at 1/64): a tenth of
    the series (6 s) cannot hold a period and calls the last dip the end of the
    warm-up; doubling the window to 12 s finds its end after the climb."""
    x = np.r_[np.linspace(0.0, 800.0, 15),
              np.tile(np.r_[np.full(8, 800.0), np.full(2, 300.0)], 4), np.full(5, 800.0)]
    assert warmup(x, window=6) > 50                      # the last dip's end
    w = warmup(x)
    assert 15 <= w <= 30                                 # after the climb
    r = burst_sustained(x)
    assert r["sustained_tps"] == pytest.approx(x[w:].mean())
    assert r["sustained_tps"] > 650


def _full_size_e8():
    """E8's published row at full size (README): a 270 s first flush from the warm
    start, then ~2,200 trx/s for 230 s and ~350 for 140 s, over 900 s."""
    return np.r_[np.full(270, 300.0), np.tile(np.r_[np.full(230, 2200.0),
                                                      np.full(140, 350.0)], 2)[:630]]


def test_a_dip_cycle_longer_than_a_minute_widens_the_window_past_it():
    # 1,800 s: the first flush, then a 370 s cycle; the 60 s window reports the last
    # dip's end, the widened one (240 s) an end within the first cycle (by 640 s)
    x = np.r_[np.full(270, 300.0), np.tile(np.r_[np.full(230, 2200.0),
                                                np.full(140, 1800.0)], 5)[:1530]]
    assert warmup(x, window=60) > 1500
    assert 270 <= warmup(x) <= 640
    assert burst_sustained(x)["sustained_tps"] == pytest.approx(x[warmup(x):].mean())


def test_a_series_that_never_settles_says_so():
    x = _full_size_e8()
    assert warmup(x) == len(x)
    r = burst_sustained(x)
    assert r["warmup_s"] == 900
    assert r["sustained_tps"] == pytest.approx(x[450:].mean())     # not the last second's
    assert r["burst_tps"] == pytest.approx(x[:225].mean())


def test_an_empty_series_measured_no_rate():
    """A run shorter than its first whole second has no per-second row: no burst or
    sustained column (not 0 tps)."""
    assert burst_sustained([]) == {}
