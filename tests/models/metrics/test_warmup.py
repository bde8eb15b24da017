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
