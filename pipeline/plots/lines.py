"""Line charts: a metric against a numeric parameter (throughput vs concurrency,
scan time vs innodb_lra_size), one line per configuration of the other varying
parameters, published values as black crosses at their run's x."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

from .common import (Overlay, axis_label, finish, label_by, panel_title, pyplot, save, short,
                     sort_key, units_with, varying)


def draw(rows: list[dict], x: str, metrics: Sequence[str], path: str | Path, title: str,
         overlays: Sequence[Overlay] = (), series: Callable[[dict], str] | None = None,
         logx: bool = False, units: dict | None = None, xlabel: str | None = None,
         notes: Sequence[str] = (), levels: dict | None = None) -> Path:
    """``levels``: metric -> ``(value, label)``, a published figure that belongs to no
    one run (the runs vary what the publication did not give), drawn as a dashed
    horizontal line across that metric's panel."""
    plt = pyplot()
    levels = levels or {}
    units = units_with(units, overlays)
    others = [c for c in varying(rows) if c != x]
    if series is None:
        series = label_by(others)
    order: dict[str, tuple] = {}
    for r in rows:
        order.setdefault(series(r), tuple(sort_key(r.get(c)) for c in others))
    n = len(metrics)
    fig, axes = plt.subplots(1, n, figsize=(6.5 * n, 4.8 + 0.25 * len(notes)), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        lines: dict = defaultdict(lambda: defaultdict(list))
        hashes: dict = defaultdict(set)
        for r in rows:
            if r.get(metric) is None or r.get(x) is None:
                continue
            key = sort_key(r[x])[1]
            lines[series(r)][key].append(float(r[metric]))
            hashes[r.get("config_hash")] = (series(r), key)
        for name in sorted(lines, key=lambda k: (order.get(k, ()), k)):
            pts = sorted((k, sum(v) / len(v)) for k, v in lines[name].items())
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o", label=name)
        marked = False
        for o in overlays:
            if o.metric == metric and o.config_hash in hashes:
                _, xv = hashes[o.config_hash]
                ax.plot([xv], [o.published], marker="X", ms=10, color="black", ls="none",
                        label=None if marked else "published")
                marked = True
        if metric in levels:
            value, text = levels[metric]
            ax.axhline(value, color="black", ls="--", lw=1, label=text)
        ax.set_xlabel(xlabel or short(x))
        ax.set_ylabel(axis_label(metric, units.get(metric, "")), fontsize=9)
        if logx:
            from matplotlib.ticker import FuncFormatter

            ax.set_xscale("log", base=2)
            # 1, 2, 4 ... as the x values are written (threads, connections), 0.5 as 0.5
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.set_title(panel_title(metric, units.get(metric, "")), fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return save(finish(fig, title, notes), path)
