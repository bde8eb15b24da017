"""sysbench's random numbers (``sb_rand.c``): the distributions ``--rand-type`` picks
for ``sysbench.rand.default(a, b)`` - the ids every OLTP statement reads or changes -
and ``sysbench.rand.uniform`` (the table a statement group goes to).

Modelled, formula for formula (sysbench 1.0.20, ``zipfian`` from 1.1):

- ``uniform``: ``a + u * (b - a + 1)``.
- ``gaussian``: the mean of ``rand_spec_iter`` uniforms over ``[a, b]`` (a bell around
  the middle of the range).
- ``special`` (1.0's default): with probability ``rand_spec_res`` % a uniform id from
  the ``rand_spec_pct`` % of the range at its centre (the hot set), otherwise the
  gaussian above. With the defaults, 75 % of the ids fall in the middle 1 % of rows.
- ``pareto``: ``a + (b - a + 1) * u ** (log h / log(1 - h))``, ``h = rand_pareto_h``
  (small ids are hot: h=0.2 puts 80 % of the accesses on the first 20 % of ids).
- ``zipfian``: P(a + k - 1) proportional to ``1 / k ** rand_zipfian_exp``, drawn by
  rejection-inversion (Hormann and Derflinger, "Rejection-inversion to generate
  variates from monotone discrete distributions", 1996), as sysbench 1.1 draws it.
- ``unique()``: sysbench's unique 32-bit sequence (a quadratic-residue permutation of
  a counter), for ``oltp_insert --auto_inc=off``.

The uniforms are numpy draws taken in blocks (one generator per client thread, so a
thread's ids do not depend on how the server interleaves the threads); sysbench's own
xoroshiro128+ stream is not reproduced, only its distributions.
"""
from __future__ import annotations

import math

import numpy as np

BLOCK = 4096                 # uniforms drawn per numpy call
_PRIME = 4294967291          # sb_rand.c rand_unique_permute


def _h_integral(x: float, e: float) -> float:
    log_x = math.log(x)
    return _helper2((1.0 - e) * log_x) * log_x


def _h(x: float, e: float) -> float:
    return math.exp(-e * math.log(x))


def _h_integral_inverse(x: float, e: float) -> float:
    t = max(x * (1.0 - e), -1.0)
    return math.exp(_helper1(t) * x)


def _helper1(x: float) -> float:
    """log1p(x) / x, continuous at 0."""
    if abs(x) > 1e-8:
        return math.log1p(x) / x
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))


def _helper2(x: float) -> float:
    """expm1(x) / x, continuous at 0."""
    if abs(x) > 1e-8:
        return math.expm1(x) / x
    return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))


def _permute(x: int) -> int:
    if x >= _PRIME:
        return x
    residue = (x * x) % _PRIME
    return residue if x <= _PRIME // 2 else _PRIME - residue


class SbRand:
    """One client thread's random numbers, by the run's ``cfg`` (a ``SysbenchConfig``)."""

    __slots__ = ("rng", "_buf", "_i", "default", "iters", "pct", "res_mult", "pareto_power",
                 "zipf_exp", "zipf_s", "zipf_x1", "rand_type", "_ids", "_ids_i", "_ids_ab")

    def __init__(self, cfg, rng: np.random.Generator) -> None:
        self.rng = rng
        self._buf: list[float] = []
        self._i = 0
        self.iters = cfg.rand_spec_iter
        self.pct = cfg.rand_spec_pct / 100.0
        self.res_mult = 100.0 / (100.0 - cfg.rand_spec_res)
        h = cfg.rand_pareto_h
        self.pareto_power = math.log(h) / math.log(1.0 - h)
        e = self.zipf_exp = cfg.rand_zipfian_exp
        self.zipf_s = 2 - _h_integral_inverse(_h_integral(2.5, e) - _h(2, e), e)
        self.zipf_x1 = _h_integral(1.5, e) - 1
        self.rand_type = cfg.rand_type
        self.default = getattr(self, cfg.rand_type)
        self._ids: list[int] = []
        self._ids_i = 0
        self._ids_ab = (0, 0)

    def next_id(self, a: int, b: int) -> int:
        """``default(a, b)``, from blocks drawn with numpy (``default_block``): the hot
        path of the OLTP tests, whose ids all come from one range."""
        i = self._ids_i
        if i >= len(self._ids) or self._ids_ab != (a, b):
            self._ids = self.default_block(a, b, BLOCK).tolist()
            self._ids_ab = (a, b)
            i = 0
        self._ids_i = i + 1
        return self._ids[i]

    def default_block(self, a: int, b: int, n: int) -> np.ndarray:
        """``n`` draws of ``default(a, b)`` at once (the same formulas on arrays)."""
        rng, kind = self.rng, self.rand_type
        if kind == "uniform":
            v = rng.random(n) * (b - a + 1)
        elif kind == "gaussian":
            v = rng.random((n, self.iters)).sum(axis=1) * (b - a + 1) / self.iters
        elif kind == "special":
            t = b - a
            rnd = rng.random(n)
            gauss = rnd * t * self.res_mult < t
            v = rnd * (t * self.pct + 1) + t / 2 - t * self.pct / 2
            k = int(gauss.sum())
            v[gauss] = rng.random((k, self.iters)).sum(axis=1) * t / self.iters
        elif kind == "pareto":
            v = (b - a + 1) * rng.random(n) ** self.pareto_power
        else:
            return np.array([self.zipfian(a, b) for _ in range(n)], dtype=np.int64)
        return a + v.astype(np.int64)

    def u01(self) -> float:
        """A uniform double in [0, 1)."""
        i = self._i
        if i >= len(self._buf):
            self._buf = self.rng.random(BLOCK).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]

    def uniform(self, a: int, b: int) -> int:
        return a + int(self.u01() * (b - a + 1))

    def gaussian(self, a: int, b: int) -> int:
        t = b - a + 1
        s = 0.0
        for _ in range(self.iters):
            s += self.u01()
        return a + int(s * t / self.iters)

    def special(self, a: int, b: int) -> int:
        t = b - a
        rnd = self.u01()
        if rnd * t * self.res_mult < t:
            s = 0.0
            for _ in range(self.iters):
                s += self.u01()
            return a + int(s * t / self.iters)
        return a + int(rnd * (t * self.pct + 1) + t / 2 - t * self.pct / 2)

    def pareto(self, a: int, b: int) -> int:
        return a + int((b - a + 1) * self.u01() ** self.pareto_power)

    def zipfian(self, a: int, b: int) -> int:
        n, e = b - a + 1, self.zipf_exp
        h_n = _h_integral(n + 0.5, e)
        while True:
            u = h_n + self.u01() * (self.zipf_x1 - h_n)
            x = _h_integral_inverse(u, e)
            k = min(max(int(x + 0.5), 1), n)
            if k - x <= self.zipf_s or u >= _h_integral(k + 0.5, e) - _h(k, e):
                return a + k - 1


class UniqueSequence:
    """``sysbench.rand.unique()``: distinct 32-bit values from a seeded counter."""

    def __init__(self, rng: np.random.Generator) -> None:
        index, offset = (int(v) for v in rng.integers(0, 2**31, size=2))
        self.index = _permute((_permute(index) + 0x682F0161) % 2**32)
        self.offset = _permute((_permute(offset) + 0x46790905) % 2**32)

    def next(self) -> int:
        i = self.index
        self.index = (i + 1) % 2**32
        return _permute(((_permute(i) + self.offset) % 2**32) ^ 0x5BF03635)
