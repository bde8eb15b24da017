"""TPC-C's random numbers (clause 2.1.6): ``NURand(A, x, y) = (((random(0, A) |
random(x, y)) + C) % (y - x + 1)) + x``, the non-uniform choice of customer last
names (A = 255), customer ids (A = 1023) and item ids (A = 8191), and the uniform
``random(x, y)``.

``C`` is a run-time constant per A, drawn once per run (clause 2.1.6.1); the
load-time C of C_LAST and the delta rule between the two are not modelled (the
loaded names are not generated). Uniforms are numpy draws taken in blocks, one
generator per client connection (so a connection's choices do not depend on how the
server interleaves them).
"""
from __future__ import annotations

import numpy as np

BLOCK = 4096
A_C_LAST, A_C_ID, A_OL_I_ID = 255, 1023, 8191


def run_constants(rng: np.random.Generator) -> dict[int, int]:
    """The run's C for each A: uniform in 0..A."""
    return {a: int(rng.integers(0, a + 1)) for a in (A_C_LAST, A_C_ID, A_OL_I_ID)}


class TpccRand:
    """One connection's random numbers."""

    def __init__(self, rng: np.random.Generator, constants: dict[int, int]) -> None:
        self.rng = rng
        self.c = constants
        self._u = rng.random(BLOCK)
        self._i = 0

    def u01(self) -> float:
        i = self._i
        if i == BLOCK:
            self._u = self.rng.random(BLOCK)
            i = 0
        self._i = i + 1
        return float(self._u[i])

    def uniform(self, x: int, y: int) -> int:
        """random(x, y): an integer uniform in x..y."""
        return x + int(self.u01() * (y - x + 1))

    def nurand(self, a: int, x: int, y: int) -> int:
        return (((self.uniform(0, a) | self.uniform(x, y)) + self.c[a]) % (y - x + 1)) + x
