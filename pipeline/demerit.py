"""The demerit figure: RMS horizontal distance between two response-time CDFs.

Ruemmler & Wilkes ("An introduction to disk drive modeling", IEEE Computer, 1994)
and DiskSim's validation compare a simulated and a measured service-time
distribution by the root-mean-square horizontal distance between their cumulative
distribution functions. As data/disksim-valid/README.md defines it: at each
probability p = 0.0001, 0.0002, ..., 1.0 take the time at which each CDF reaches p
(linear interpolation between the sorted samples, the i-th smallest of n sits at
p = i/n), and take the RMS of the differences. Units are those of the input (the
project reports ms). Identical samples give 0; a sample shifted by d gives d.

numpy only, no simulation here.
"""
from __future__ import annotations

import numpy as np

#: p = 0.0001 ... 1.0 in steps of 0.0001 (10,000 points)
PROBS = np.arange(1, 10_001, dtype=np.float64) / 10_000.0


def quantiles(samples, probs: np.ndarray = PROBS) -> np.ndarray:
    """Time at which the empirical CDF of ``samples`` reaches each p in ``probs``.

    The CDF steps to i/n at the i-th smallest sample; between those points it is
    interpolated linearly; below 1/n it is the smallest sample.
    """
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    n = x.size
    if n == 0:
        raise ValueError("samples: empty")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples: contains NaN or inf")
    levels = np.arange(1, n + 1, dtype=np.float64) / n
    return np.interp(probs, levels, x)


def demerit(measured, simulated, probs: np.ndarray = PROBS) -> float:
    """RMS horizontal distance between the two CDFs (same unit as the inputs)."""
    d = quantiles(measured, probs) - quantiles(simulated, probs)
    return float(np.sqrt(np.mean(d * d)))


def error_stats(measured, simulated) -> dict:
    """Demerit plus mean and p50/p90/p99 of both samples and their errors.

    Errors are simulated - measured; ``*_rel`` is relative to the measured value.
    The two samples need not be paired (percentiles compare distributions).
    """
    m = np.asarray(measured, dtype=np.float64)
    s = np.asarray(simulated, dtype=np.float64)
    out = {
        "demerit": demerit(m, s),
        "mean_measured": float(m.mean()),
        "mean_simulated": float(s.mean()),
    }
    out["mean_error"] = out["mean_simulated"] - out["mean_measured"]
    out["mean_error_rel"] = out["mean_error"] / out["mean_measured"]
    for q in (50, 90, 99):
        qm = float(np.percentile(m, q))
        qs = float(np.percentile(s, q))
        out[f"p{q}_measured"] = qm
        out[f"p{q}_simulated"] = qs
        out[f"p{q}_error"] = qs - qm
    out["demerit_rel"] = out["demerit"] / out["mean_measured"]
    return out


def error_columns(measured_ms, simulated_ms, sim: str = "sim") -> dict:
    """``error_stats`` of two samples in ms as result columns: ``demerit_ms``,
    ``mean_measured_ms``, ``mean_<sim>_ms``, ``mean_error_rel`` and
    ``p50/p90/p99_measured_ms`` / ``_<sim>_ms`` (``sim``: the word for the simulated
    side - ``sim`` in run summaries, ``simulated`` in ``python -m pipeline.disksim``)."""
    st = error_stats(measured_ms, simulated_ms)
    out = {"demerit_ms": st["demerit"], "mean_measured_ms": st["mean_measured"],
           f"mean_{sim}_ms": st["mean_simulated"], "mean_error_rel": st["mean_error_rel"]}
    for q in (50, 90, 99):
        out[f"p{q}_measured_ms"] = st[f"p{q}_measured"]
        out[f"p{q}_{sim}_ms"] = st[f"p{q}_simulated"]
    return out
