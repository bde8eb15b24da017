"""Burst vs sustained throughput from a per-second series, with the warm-up found from
the series itself, not assumed.

Rule (``warmup``): the final level ``f`` is the mean of the series' last half; a
trailing moving mean over ``window`` seconds (``WINDOW_S`` = 60, at most a tenth of the
series, at least 1); the warm-up ends at the first second after which that moving mean
stays within ``BAND`` (10 %) of ``f`` to the end of the series (0 if it always does).
``burst``: the mean of the first ``BURST_S`` = 300 s (the "first minutes"; the first
quarter of a shorter series); ``sustained``: the mean after the warm-up.

A series that settles into a repeating pattern (sync-point dips) settles by this rule
when its window spans the pattern; a shorter window reports the last dip's end. So,
unless a window is given, a window shorter than ``WINDOW_S`` doubles (up to
``WINDOW_S`` and half the series) while the warm-up it finds ends in the series' second
half: a 60 s run whose dips recur every ~10 s is not "warming up" to its last second
because a 6 s window (a tenth of it) cannot hold a period. A series that settles under
no such window keeps the widest window's answer.
"""
from __future__ import annotations

import numpy as np

WINDOW_S = 60
BURST_S = 300
BAND = 0.10


def warmup(values, window: int | None = None, band: float = BAND) -> int:
    """Index (seconds) where the warm-up of the per-second ``values`` ends (rule above;
    ``window`` given: that window only)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n < 2:
        return 0
    if window:
        return _settled(x, window, band)
    w = max(1, min(WINDOW_S, n // 10))
    end = _settled(x, w, band)
    while end > n // 2 and 2 * w <= min(WINDOW_S, n // 2):
        w *= 2
        end = _settled(x, w, band)
    return end


def _settled(x, w: int, band: float) -> int:
    """The end of the first ``w``-second window after which the moving mean stays within
    ``band`` of the last half's mean."""
    n = len(x)
    final = x[n // 2:].mean()
    c = np.concatenate(([0.0], np.cumsum(x)))
    ends = np.arange(w, n + 1)
    ma = (c[ends] - c[ends - w]) / w               # mean of x[end - w:end]
    out = np.abs(ma - final) > band * abs(final)
    if not out.any():
        return 0
    return int(ends[np.nonzero(out)[0][-1]]) + 1    # the end of the first window in for good


def burst_sustained(values) -> dict:
    """``warmup_s``, ``burst_tps``, ``sustained_tps`` of a per-second throughput series."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return {"warmup_s": 0, "burst_tps": 0.0, "sustained_tps": 0.0}
    w = min(warmup(x), len(x) - 1)
    burst = x[:max(1, min(BURST_S, len(x) // 4))]
    return {"warmup_s": w, "burst_tps": float(burst.mean()),
            "sustained_tps": float(x[w:].mean())}
