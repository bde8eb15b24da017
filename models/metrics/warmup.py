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
unless a window is given, the window doubles (up to half the series) while the warm-up
it finds ends in the series' second half: a 60 s run whose dips recur every ~10 s is
not "warming up" to its last second because a 6 s window (a tenth of it) cannot hold a
period, nor is a 900 s run whose dips recur every ~6 minutes (E8 at full size) because
a 60 s window cannot. A wider window counts only if its warm-up ends in the first half
(the settled level then holds for longer than the warm-up); otherwise the first
window's answer stands. A series whose moving mean is out of the band at its very end
never settled: ``warmup_s`` is its length and ``sustained_tps`` the mean of its last
half (the level the rule measures against), not the mean of its last second.
"""
from __future__ import annotations

import numpy as np

WINDOW_S = 60
BURST_S = 300
BAND = 0.10


def warmup(values, window: int | None = None, band: float = BAND) -> int:
    """Index (seconds) where the warm-up of the per-second ``values`` ends (rule above;
    ``window`` given: that window only); the series' length if it never settles."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n < 2:
        return 0
    if window:
        return min(_settled(x, window, band), n)
    w = max(1, min(WINDOW_S, n // 10))
    first = end = _settled(x, w, band)
    while end > n // 2 and 2 * w <= n // 2:
        w *= 2
        end = _settled(x, w, band)
    # a wider window that still ends the warm-up in the second half has not seen the
    # settled level repeat: no evidence of a pattern (a single late stall averaged away)
    return min(end if end <= n // 2 else first, n)


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
    """``warmup_s``, ``burst_tps``, ``sustained_tps`` of a per-second throughput series;
    an empty one (a run that ended before its first whole second) measured none of
    them: no columns (not 0 tps; not NaN, which no result equals)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return {}
    n = len(x)
    w = warmup(x)
    burst = x[:max(1, min(BURST_S, n // 4))]
    if w >= n:                  # never settled: the level the rule measured against
        return {"warmup_s": n, "burst_tps": float(burst.mean()),
                "sustained_tps": float(x[n // 2:].mean())}
    return {"warmup_s": w, "burst_tps": float(burst.mean()),
            "sustained_tps": float(x[w:].mean())}
