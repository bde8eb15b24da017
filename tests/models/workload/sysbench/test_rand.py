"""--rand-type distributions, by the properties sb_rand.c's formulas give them."""
import numpy as np
import pytest

from models.workload.sysbench import SysbenchConfig
from models.workload.sysbench.rand import SbRand, UniqueSequence

N = 1_000_000      # ids 1..N


def _draw(n=40_000, **kw):
    """Draws of ``default(1, N)``: half one at a time, half from numpy blocks (both
    paths must give the same distribution)."""
    rnd = SbRand(SysbenchConfig(**kw), np.random.default_rng(7))
    one = [rnd.default(1, N) for _ in range(n // 2)]
    block = [rnd.next_id(1, N) for _ in range(n // 2)]
    for half in (one, block):       # each half on its own is within the tolerances too
        assert min(half) >= 1 and max(half) <= N
    return np.array(one + block)


@pytest.mark.parametrize("rand_type", ["uniform", "gaussian", "special", "pareto"])
def test_block_draws_match_one_at_a_time(rand_type):
    rnd = SbRand(SysbenchConfig(rand_type=rand_type), np.random.default_rng(1))
    one = np.array([rnd.default(1, N) for _ in range(20_000)])
    block = rnd.default_block(1, N, 20_000)
    for q in (5, 25, 50, 75, 95):
        assert np.percentile(block, q) == pytest.approx(np.percentile(one, q), rel=0.05,
                                                        abs=N / 200)


def test_uniform_covers_the_range_evenly():
    x = _draw(rand_type="uniform")
    assert x.min() >= 1 and x.max() <= N
    counts = np.histogram(x, bins=10, range=(1, N + 1))[0]
    assert counts.min() > 0.9 * counts.mean() and counts.max() < 1.1 * counts.mean()


def test_special_defaults_put_three_quarters_in_the_middle_percent():
    x = _draw()                              # sysbench 1.0's default: special 1 % / 75 %
    hot = (x >= N / 2 - N * 0.005) & (x <= N / 2 + N * 0.005 + 1)
    assert hot.mean() == pytest.approx(0.75, abs=0.02)
    assert x.min() >= 1 and x.max() <= N
    wider = _draw(rand_spec_pct=10, rand_spec_res=50)
    hot = (wider >= N * 0.45) & (wider <= N * 0.55 + 1)
    # the gaussian part also lands there sometimes: 50 % + its share
    assert 0.5 < hot.mean() < 0.75


def test_gaussian_is_the_mean_of_rand_spec_iter_uniforms():
    x = _draw(rand_type="gaussian")
    assert x.mean() == pytest.approx(N / 2, rel=0.01)
    assert x.std() == pytest.approx(N / np.sqrt(12 * 12), rel=0.03)
    x4 = _draw(rand_type="gaussian", rand_spec_iter=4)
    assert x4.std() == pytest.approx(N / np.sqrt(12 * 4), rel=0.03)


def test_pareto_h_02_puts_80_percent_on_the_first_20_percent():
    x = _draw(rand_type="pareto")
    assert (x <= 0.2 * N).mean() == pytest.approx(0.8, abs=0.01)
    x = _draw(rand_type="pareto", rand_pareto_h=0.1)
    assert (x <= 0.1 * N).mean() == pytest.approx(0.9, abs=0.01)


@pytest.mark.parametrize("e", [0.8, 1.2])
def test_zipfian_probability_falls_as_k_to_the_minus_exp(e):
    rnd = SbRand(SysbenchConfig(rand_type="zipfian", rand_zipfian_exp=e),
                 np.random.default_rng(5))
    x = np.array([rnd.default(1, 1000) for _ in range(60_000)])
    c = np.bincount(x, minlength=1001)
    assert c[0] == 0 and x.max() <= 1000
    assert c[1] / c[2] == pytest.approx(2 ** e, rel=0.06)
    assert c[1] / c[4] == pytest.approx(4 ** e, rel=0.1)
    h = np.sum(1.0 / np.arange(1, 1001) ** e)
    assert c[1] / x.size == pytest.approx(1 / h, rel=0.05)


def test_unique_sequence_has_no_repeats():
    u = UniqueSequence(np.random.default_rng(0))
    xs = [u.next() for _ in range(100_000)]
    assert len(set(xs)) == len(xs) and all(0 <= v < 2**32 for v in xs)


def test_a_threads_draws_depend_only_on_its_generator():
    a = SbRand(SysbenchConfig(), np.random.default_rng(11))
    b = SbRand(SysbenchConfig(), np.random.default_rng(11))
    assert [a.default(1, N) for _ in range(5000)] == [b.default(1, N) for _ in range(5000)]
