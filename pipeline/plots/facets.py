"""The plot of an experiment without a style of its own (an ad-hoc sweep, a user's
experiment): one row of panels per metric, one column per value of a facet parameter,
bars labelled by the other parameters that vary - each by its short name
(``bs=16k``, not ``workload.bs=16k``; ``pipeline.naming``).

The facet is the varying parameter with the fewest values (2 to 6) when two or more
vary; the figure stays within ``MAX_PX`` pixels each way (at most 4 metric rows, at
most 6 facet columns; more bars get narrower, with slanted labels).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .common import axis_label, category_labels, finish, panel_title, pyplot, save, sort_key

MAX_PX = 2000
DPI = 110          # common.save
MAX_ROWS = 4
MAX_FACETS = 6


def _pick_facet(rows: list[dict], keys: list[str]) -> str | None:
    if len(keys) < 2:
        return None
    counts = {k: len({str(r.get(k)) for r in rows}) for k in keys}
    fit = [k for k in keys if 2 <= counts[k] <= MAX_FACETS]
    return min(fit, key=lambda k: counts[k]) if fit else None


def draw(rows: list[dict], metrics: Sequence[str], path: str | Path, title: str,
         keys: Sequence[str], notes: Sequence[str] = ()) -> Path:
    from ..naming import short_names, value_text

    plt = pyplot()
    keys = list(keys)
    metrics = list(metrics)[:MAX_ROWS]
    short = short_names(keys)
    facet = _pick_facet(rows, keys)
    inner = [k for k in keys if k != facet]
    facet_values = (sorted({r.get(facet) for r in rows}, key=sort_key) if facet else [None])

    def label(r: dict) -> str:
        return "\n".join(f"{short[k]}={value_text(r.get(k))}" for k in inner) or "(one run)"

    cats = []
    for r in sorted(rows, key=lambda r: tuple(sort_key(r.get(k)) for k in inner)):
        if label(r) not in cats:
            cats.append(label(r))
    ncol, nrow = len(facet_values), len(metrics)
    max_in = MAX_PX / DPI - 0.2
    width = min(max_in, 1.2 + ncol * max(2.6, 0.45 * len(cats) + 1.0))
    height = min(max_in, 1.4 + 2.5 * nrow + 0.25 * len(notes)
                 + 0.12 * max(len(c.split("\n")) for c in cats))
    fig, axes = plt.subplots(nrow, ncol, figsize=(width, height), squeeze=False, sharey="row")
    tilt = max(len(line) for c in cats for line in c.split("\n")) * len(cats) * ncol > 9 * width
    for i, metric in enumerate(metrics):
        for j, fv in enumerate(facet_values):
            ax = axes[i][j]
            vals: dict[str, list[float]] = {}
            for r in rows:
                if (facet is None or r.get(facet) == fv) and r.get(metric) is not None:
                    vals.setdefault(label(r), []).append(float(r[metric]))
            ys = [sum(vals[c]) / len(vals[c]) if c in vals else 0.0 for c in cats]
            ax.bar(range(len(cats)), ys, 0.7, color=plt.get_cmap("tab10")(0))
            ax.set_xticks(range(len(cats)))
            category_labels(ax, cats if i == nrow - 1 else [""] * len(cats), tilt)
            ax.grid(True, axis="y", alpha=0.3)
            if j == 0:
                ax.set_ylabel(axis_label(metric), fontsize=8)
            head = panel_title(metric)
            if facet is not None and i == 0:
                head = f"{short[facet]}={value_text(fv)}\n{head}"
            ax.set_title(head, fontsize=9)
    return save(finish(fig, title, notes), path)
