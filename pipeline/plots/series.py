"""Time-series panels of E8 (``flushing``, ``bp_ratio``; of any experiment on the InnoDB
server with ``pipeline.report --series``): per run, the server's per-second ``engine``
detail table (``models/engine/innodb/server/series.py``). One column of panels per
group (``group``: the device, by default): throughput on top, the pages flushed per
second (flush list + LRU + single-page) in the middle - with ``lru``, the share of
them written from the LRU list (LRU batches + single-page flushes) dashed beside it;
dotted, where there are any, the flush-list pages user threads wrote themselves (5.1 /
5.5's preflush past the async point, batches at the sync point) -,
the checkpoint age below as a share of ``max_checkpoint_age`` with the async (7/8) and
sync (15/16) points drawn; one line per series (the flushing algorithm, by default),
named in one legend under the panels. Time in minutes, in seconds when every run is
shorter than two minutes."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from .common import finish, pyplot, save, sort_key


# a number, with a size suffix when one follows it ('520M', '2g', '64KiB'), or other text
_TOKEN = re.compile(r"\d+(?:\.\d+)?(?:[kmgt]i?b?(?![a-z]))?|\D+", re.I)


def _natural(name: str) -> list:
    """Sort key: the numbers and sizes in a label by magnitude (``common.sort_key``):
    'pool 520M' before 'pool 1440M' and 'pool 2G'."""
    return [sort_key(t) for t in _TOKEN.findall(name)]


def _series(results_dir: str | Path, row: dict):
    import duckdb

    from ..sink import detail_file, run_dir

    p = run_dir(results_dir, row["experiment"], row["config_hash"]) / detail_file("engine")
    if not p.exists():
        return None
    con = duckdb.connect()
    cols = {c[0] for c in con.execute("DESCRIBE SELECT * FROM read_parquet($p)",
                                      {"p": str(p)}).fetchall()}
    # user threads' own flush-list batches (columns of runs since 0602bc2)
    threads = ("list(flushed_preflush + flushed_sync ORDER BY t_s)"
               if {"flushed_preflush", "flushed_sync"} <= cols else "NULL")
    return con.execute(
        "SELECT list(t_s ORDER BY t_s), list(trx ORDER BY t_s), list(flushed_list + "
        "flushed_lru + flushed_single ORDER BY t_s), list(checkpoint_age ORDER BY t_s), "
        "max(max_checkpoint_age), list(flushed_lru + flushed_single ORDER BY t_s), "
        f"{threads} FROM read_parquet($p)", {"p": str(p)}).fetchone()


def draw(rows: list[dict], path: str | Path, title: str, results_dir: str | Path | None,
         series: Callable[[dict], str], group: Callable[[dict], str], notes=(),
         lru: bool = False) -> Path:
    import numpy as np

    if results_dir is None:
        raise ValueError("a time-series plot needs the runs' detail tables (results directory)")
    groups: dict[str, list] = {}
    for r in sorted(rows, key=series):
        s = _series(results_dir, r)
        if s is not None and s[0]:
            groups.setdefault(group(r), []).append((series(r), *s))
    if not groups:
        raise ValueError("no run has an engine table (results.details=true)")
    plt = pyplot()
    names = sorted({line[0] for lines in groups.values() for line in lines}, key=_natural)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {n: cycle[i % len(cycle)] for i, n in enumerate(names)}   # same in every column
    # minutes, or seconds for runs shorter than two minutes
    longest = max(max(line[1]) for lines in groups.values() for line in lines)
    per, unit = (60.0, "min") if longest >= 120 else (1.0, "s")
    ncol = len(groups)
    fig, axes = plt.subplots(3, ncol, figsize=(6.5 * ncol, 9.5), squeeze=False, sharex="col")
    for j, (g, lines) in enumerate(sorted(groups.items())):
        top, middle, bottom = axes[0][j], axes[1][j], axes[2][j]
        dotted = False
        for name, t, trx, flushed, age, m, from_lru, by_threads in lines:
            t = np.asarray(t) / per
            top.plot(t, trx, lw=1.0, label=name, color=colour[name])
            middle.plot(t, flushed, lw=0.8, label=name, color=colour[name])
            if lru:
                middle.plot(t, from_lru, lw=0.8, ls="--", color=colour[name],
                            label=f"{name}: from the LRU list")
            if by_threads is not None and any(by_threads):
                dotted = True
                middle.plot(t, by_threads, lw=0.9, ls=":", color=colour[name],
                            label=f"{name}: by user threads")
            bottom.plot(t, 100.0 * np.asarray(age) / m, lw=1.0, label=name, color=colour[name])
        for frac, txt in ((7 / 8, "async point"), (15 / 16, "sync point")):
            bottom.axhline(100 * frac, color="0.4", ls=":", lw=0.8)
            bottom.text(0.01, 100 * frac, txt, fontsize=7, va="bottom", color="0.3",
                        transform=bottom.get_yaxis_transform())
        top.set_title(g, fontsize=10)
        top.set_ylabel("transactions committed (trx/s)")
        middle.set_ylabel("pages flushed (pages/s)" + ("\ndashed: from the LRU list" if lru else ""))
        if dotted:
            middle.text(0.01, 0.97, "dotted: of the flush list, what user threads wrote "
                        "(preflush at the async point, batches at the sync point)",
                        fontsize=7, va="top", color="0.3", transform=middle.transAxes)
        middle.set_ylim(bottom=0)
        bottom.set_ylabel("checkpoint age\n(% of max_checkpoint_age)")
        bottom.set_xlabel(f"simulated time ({unit})")
        bottom.set_ylim(0, 105)
        top.set_ylim(bottom=0)
        for ax in (top, middle, bottom):
            ax.grid(alpha=0.3)
    # one legend for every column (the colours are the same in each), under the panels:
    # inside a panel it covered the lines where throughput drops
    from matplotlib.lines import Line2D

    finish(fig, title, notes)
    # as many names a row as fit the figure's width at the legend's 8 pt (~15 characters
    # an inch, a few more for the line's handle)
    fits = int(fig.get_figwidth() * 15 / (max(len(n) for n in names) + 6))
    per_row = max(1, min(len(names), 6, fits))
    n_rows = -(-len(names) // per_row)
    fig.legend([Line2D([], [], color=colour[n], lw=1.5) for n in names], names,
               loc="lower center", ncol=per_row, fontsize=8, frameon=False)
    fig.subplots_adjust(bottom=0.065 + 0.022 * n_rows)
    return save(fig, path)
