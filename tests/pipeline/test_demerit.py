"""The demerit (RMS horizontal CDF distance) against hand-computed cases."""
import math

import numpy as np
import pytest

from pipeline.demerit import PROBS, demerit, error_columns, error_stats, quantiles


def test_probability_grid_is_the_readme_one():
    assert PROBS.size == 10_000
    assert PROBS[0] == pytest.approx(0.0001) and PROBS[-1] == 1.0


def test_identical_distributions_give_zero():
    x = np.random.default_rng(1).exponential(5.0, 1000)
    assert demerit(x, x.copy()) == 0.0
    assert demerit(x, x[::-1]) == 0.0  # order does not matter


def test_shift_by_one_ms_gives_one():
    x = np.random.default_rng(2).uniform(0.5, 20.0, 777)
    assert demerit(x, x + 1.0) == pytest.approx(1.0, abs=1e-12)
    assert demerit(x + 1.0, x) == pytest.approx(1.0, abs=1e-12)


def test_two_point_case_by_hand():
    # measured {1, 2}, simulated {1, 3}: both CDFs sit at 1 up to p = 0.5, then rise
    # linearly to 2 resp. 3 at p = 1, so the gap at p = 0.5 + k/10000 is 2k/10000.
    expected = math.sqrt(sum((2 * k / 10_000) ** 2 for k in range(1, 5001)) / 10_000)
    assert demerit([1, 2], [1, 3]) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(math.sqrt(1 / 6), rel=1e-3)


def test_quantiles_interpolate_between_sorted_samples():
    q = quantiles([4.0, 0.0, 2.0, 6.0], np.array([0.1, 0.25, 0.375, 0.5, 1.0]))
    assert q.tolist() == [0.0, 0.0, 1.0, 2.0, 6.0]


def test_different_sample_sizes_and_scale():
    a = np.arange(1, 101, dtype=float)          # 100 samples 1..100
    b = np.repeat(np.arange(1, 101, dtype=float), 3)  # same distribution, 300 samples
    assert demerit(a, b) < 0.7                  # only the interpolation differs
    assert demerit(a, 2 * a) == pytest.approx(math.sqrt(np.mean(quantiles(a) ** 2)))


def test_error_stats_fields():
    m = np.array([1.0, 2.0, 3.0, 4.0])
    s = m * 1.1
    st = error_stats(m, s)
    assert st["mean_measured"] == 2.5
    assert st["mean_error_rel"] == pytest.approx(0.1)
    assert st["p50_error"] == pytest.approx(0.25)
    assert st["demerit"] > 0


def test_error_columns_name_the_simulated_side():
    m = np.array([1.0, 2.0, 3.0, 4.0])
    cols = error_columns(m, m * 1.1, sim="sim")
    assert list(cols) == ["demerit_ms", "mean_measured_ms", "mean_sim_ms", "mean_error_rel",
                          "p50_measured_ms", "p50_sim_ms", "p90_measured_ms", "p90_sim_ms",
                          "p99_measured_ms", "p99_sim_ms"]
    assert cols["mean_sim_ms"] == pytest.approx(2.75)
    assert "mean_simulated_ms" in error_columns(m, m, sim="simulated")


def test_rejects_empty_and_nan():
    with pytest.raises(ValueError):
        demerit([], [1.0])
    with pytest.raises(ValueError):
        demerit([1.0, float("nan")], [1.0])
