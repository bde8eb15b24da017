"""CDF overlays: measured and simulated service-time distributions of a trace replay,
one panel per run, the way DiskSim's validation (and Ruemmler & Wilkes) shows them.

Reads each run's ``requests`` detail table (``measured_ns`` and the simulated
``response_ns``) from the results tree; the panel title gives the demerit (RMS
horizontal distance of the two CDFs, ``pipeline.demerit``) and DiskSim's own figure
when the summary row has them (``trace.demerit_ms``, ``trace.disksim_demerit_ms``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

from .common import finish, label_of, pyplot, save, varying

MEASURED = "measured_ns"
SIMULATED = ("response_ns", "service_ns")


def _samples(results_dir: str | Path, row: dict):
    import duckdb

    from ..sink import detail_file, run_dir

    p = run_dir(results_dir, row["experiment"], row["config_hash"]) / detail_file("requests")
    if not p.exists():
        return None, None
    con = duckdb.connect()
    cols = [c[0] for c in con.execute("DESCRIBE SELECT * FROM read_parquet($p)", {"p": str(p)}).fetchall()]
    sim = next((c for c in SIMULATED if c in cols), None)
    if MEASURED not in cols or sim is None:
        return None, None
    m, s = con.execute(f'SELECT list("{MEASURED}"), list("{sim}") FROM read_parquet($p) '
                       f'WHERE "{sim}" >= 0', {"p": str(p)}).fetchone()
    return m, s


def draw(rows: list[dict], path: str | Path, title: str, results_dir: str | Path | None = None,
         label: Callable[[dict], str] | None = None, notes=()) -> Path:
    import numpy as np

    from ..demerit import PROBS, quantiles

    if results_dir is None:
        raise ValueError("a CDF plot needs the runs' detail tables (results directory)")
    if label is None:
        cols = varying(rows)
        label = lambda r: label_of(r, cols)  # noqa: E731
    panels = []
    for r in sorted(rows, key=label):
        m, s = _samples(results_dir, r)
        if m:
            panels.append((r, np.asarray(m, float) / 1e6, np.asarray(s, float) / 1e6))
    if not panels:
        raise ValueError("no run has a requests table with measured_ns (results.details=true)")
    plt = pyplot()
    ncol = min(4, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow + 0.6), squeeze=False)
    for ax, (r, m, s) in zip(axes.flat, panels):
        ax.plot(quantiles(m), PROBS, lw=1.6, label="measured")
        ax.plot(quantiles(s), PROBS, lw=1.2, ls="--", label="simulated")
        head = label(r)
        dem, ref = r.get("trace.demerit_ms"), r.get("trace.disksim_demerit_ms")
        if dem is not None:
            head += f"\ndemerit {dem:.3f} ms" + (f" (DiskSim {ref:.3f} ms)" if ref else "")
        ax.set_title(head, fontsize=9)
        ax.set_xlabel("service time (ms)")
        ax.set_ylabel("fraction of requests")
        ax.set_xlim(0, float(np.percentile(np.concatenate([m, s]), 99.5)) * 1.05)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    return save(finish(fig, title, notes), path)
