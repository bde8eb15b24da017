"""The Universal Scalability Law fit of a sweep (``pipeline.usl``): the measured
points, the fitted curve of each configuration, and its predicted peak N* as a
dotted line with X(N*) written beside it."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from .common import axis_label, finish, pyplot, save, short


def draw(series: Sequence, x: str, metric: str, path: str | Path, title: str,
         xlabel: str | None = None, notes: Sequence[str] = ()) -> Path:
    """``series``: ``pipeline.usl.Series`` (points and fit per configuration)."""
    from ..usl import predict

    plt = pyplot()
    fig, ax = plt.subplots(1, 1, figsize=(8.0, 5.2 + 0.25 * len(notes)))
    n_max = max(max(s.n) for s in series)
    peaks = [s.fit.peak_n for s in series if math.isfinite(s.fit.peak_n)]
    # the curve runs past the measured N far enough to show a predicted peak beyond it
    right = max([n_max] + [min(p * 1.25, 4 * n_max) for p in peaks])
    grid = np.linspace(1.0, right, 400)
    for i, s in enumerate(series):
        f = s.fit
        colour = f"C{i % 10}"
        peak = (f"N*={f.peak_n:.3g}, X(N*)={f.peak_x:.4g}" if math.isfinite(f.peak_n)
                else "no peak (kappa=0)")
        name = "" if s.config == "(one configuration)" else f"{s.config}: "
        ax.plot(s.n, s.x, ls="none", marker="o", color=colour, label=f"{name}measured")
        ax.plot(grid, predict(f, grid), color=colour, lw=1.6,
                label=f"{name}USL: lambda={f.lambda_:.4g}, sigma={f.sigma:.3g}, "
                      f"kappa={f.kappa:.3g}; {peak}; R2={f.r2:.3f}")
        if math.isfinite(f.peak_n) and f.peak_n <= right:
            ax.axvline(f.peak_n, color=colour, ls=":", lw=1.2)
            ax.annotate(f"N*={f.peak_n:.3g}", (f.peak_n, f.peak_x), xytext=(4, 6),
                        textcoords="offset points", color=colour, fontsize=8)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel or short(x))
    ax.set_ylabel(axis_label(metric), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5, loc="best")
    return save(finish(fig, title, notes), path)
