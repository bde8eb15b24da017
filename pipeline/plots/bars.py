"""Bar charts: one bar per configuration and metric panel, the way placement, fsync/s
per case, scan time per read-ahead mode and the async-I/O table are published.

Without a hue parameter each configuration gets its simulated bar and, where a
published value exists for that run and metric, a grey published bar beside it (the
ratio simulated/published above the pair). With a hue parameter (e.g. the table's
insert history) the configurations sharing every other parameter form a group of
coloured bars, and published values are black marks on their bars.
"""
from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

from .common import (Overlay, axis_label, category_labels, finish, label_by, panel_title,
                     pyplot, save, short, sort_key, units_with, value_text, varying)

PUBLISHED_COLOR = "0.6"


def _groups(rows: list[dict], metric: str, label: Callable[[dict], str], hue: str | None):
    """{category: {hue value: (mean value, config hashes)}} in sorted order."""
    vary = [c for c in varying(rows) if c != hue]
    ordered = sorted(rows, key=lambda r: tuple(sort_key(r.get(c)) for c in vary))
    acc: dict = defaultdict(lambda: defaultdict(list))
    for r in ordered:
        v = r.get(metric)
        if v is None:
            continue
        acc[label(r)][r.get(hue) if hue else None].append((float(v), r.get("config_hash")))
    out = {}
    for cat, by_hue in acc.items():
        out[cat] = {h: (sum(v for v, _ in vals) / len(vals), {c for _, c in vals})
                    for h, vals in sorted(by_hue.items(), key=lambda kv: sort_key(kv[0]))}
    return out


def _published(overlays: Sequence[Overlay], metric: str, hashes: set) -> Overlay | None:
    return next((o for o in overlays if o.metric == metric and o.config_hash in hashes), None)


MAX_COLUMNS = 4


def draw(rows: list[dict], metrics: Sequence[str], path: str | Path, title: str,
         overlays: Sequence[Overlay] = (), label: Callable[[dict], str] | None = None,
         hue: str | None = None, log: bool = False, units: dict | None = None,
         xlabel: str = "", notes: Sequence[str] = ()) -> Path:
    plt = pyplot()
    units = units_with(units, overlays)
    if label is None:
        label = label_by([c for c in varying(rows) if c != hue])
    n = len(metrics)
    groups = [_groups(rows, m, label, hue) for m in metrics]
    n_cat = max((len(g) for g in groups), default=1)
    width = min(10.0, max(6.0, 0.8 * n_cat * (1.6 if hue else 1.0) + 2.0))
    cols = n if n <= MAX_COLUMNS else MAX_COLUMNS       # many panels: wrapped in rows
    nrows = -(-n // cols)
    fig, grid = plt.subplots(nrows, cols, figsize=(width * cols, 4.8 * nrows + 0.25 * len(notes)),
                             squeeze=False)
    axes = [list(grid.flat)]
    for ax in axes[0][n:]:
        ax.set_visible(False)
    cmap = plt.get_cmap("tab10")
    # fs.type -> "fs", workload.insert_pattern -> "insert_pattern"
    hue_name = (hue.split(".")[-2] if short(hue) == "type" and "." in hue else short(hue)) if hue else ""
    for ax, metric, grp in zip(axes[0], metrics, groups):
        cats = list(grp)
        hues = sorted({h for g in grp.values() for h in g}, key=sort_key)
        paired = any(_published(overlays, metric, hs) for g in grp.values() for _, hs in g.values())
        slots = len(hues) if hue else (2 if paired else 1)
        w = 0.8 / slots
        marked = False
        for i, cat in enumerate(cats):
            for j, h in enumerate(hues):
                if h not in grp[cat]:
                    continue
                value, hashes = grp[cat][h]
                pub = _published(overlays, metric, hashes)
                if hue:
                    x = i - 0.4 + w * (j + 0.5)
                    ax.bar(x, value, w, color=cmap(j % 10), label=f"{hue_name}={value_text(h)}" if i == 0 or
                           not any(h in grp[c] for c in cats[:i]) else None)
                    if pub is not None:
                        ax.plot([x - w / 2, x + w / 2], [pub.published] * 2, color="black", lw=2.5,
                                label=None if marked else "published")
                        marked = True
                else:
                    ax.bar(i - w / 2 if paired else i, value, w, color=cmap(0),
                           label="simulated" if i == 0 and paired else None)
                    if pub is not None:
                        ax.bar(i + w / 2, pub.published, w, color=PUBLISHED_COLOR, hatch="//",
                               edgecolor="0.3", label=None if marked else "published")
                        marked = True
                        top = max(value, pub.published)
                        ax.annotate(f"{value / pub.published:.2f}x", (i, top), xytext=(0, 3),
                                    textcoords="offset points", ha="center", fontsize=8)
        ax.set_xticks(range(len(cats)))
        # wrapped between name=value parts, never inside a name (innodb_flush_method)
        cats = ["\n".join(textwrap.fill(part, 24, break_long_words=False, break_on_hyphens=False)
                          for part in c.split("\n")) for c in cats]
        longest = max((max(map(len, c.split("\n"))) for c in cats), default=0)
        tilt = longest * n_cat > 12 * width
        category_labels(ax, cats, tilt)
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(axis_label(metric, units.get(metric, "")), fontsize=9)
        if log:
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi * 1.6)   # room for the ratio labels
        else:
            ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(panel_title(metric, units.get(metric, "")), fontsize=10)
        handles, _ = ax.get_legend_handles_labels()
        if handles:
            ax.legend(fontsize=8)
    return save(finish(fig, title, notes), path)
