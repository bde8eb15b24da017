"""What every plot style shares: overlays of published values, which parameters vary
among the rows, labels and units of metric columns, saving a PNG atomically."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..columns import is_param

SKIP_VARYING = ("run.seed", "run.below_valid_scale")   # the latter follows run.scale


@dataclass(frozen=True)
class Overlay:
    """A published value to draw beside the simulated one of run ``config_hash``."""

    config_hash: str
    metric: str
    published: float
    label: str = ""
    unit: str = ""
    within: bool | None = None


# (pattern on the metric column, axis label, unit)
_UNITS = (
    (r"rMB_s$", "read throughput", "MB/s"),
    (r"wMB_s$", "write throughput", "MB/s"),
    (r"MB_s(?:_read)?$", "throughput", "MB/s"),
    (r"\.r_s$", "reads completed", "r/s"),
    (r"\.w_s$", "writes completed", "w/s"),
    (r"\.f_s$", "flushes completed", "f/s"),
    (r"\.d_s$", "discards completed", "d/s"),
    (r"rrqm_s$", "read merges", "/s"),
    (r"wrqm_s$", "write merges", "/s"),
    (r"\.iops$", "I/O operations", "IOPS"),
    (r"\.tps$", "transactions", "trx/s"),
    (r"\.notpm$", "New-Order transactions", "per minute"),
    (r"syncs_per_s$", "sync calls", "per s"),
    (r"fsyncs_per_trx", "fsyncs per transaction", ""),
    (r"fsyncs_redo_s$", "redo log fsyncs", "fsync/s"),
    (r"fsyncs_binlog_s$", "binlog fsyncs", "fsync/s"),
    (r"scan_s$", "scan time", "s"),
    (r"rows_per_s$", "rows", "per s"),
    (r"util_pct$", "%util", "%"),
    (r"_pct$", "", "%"),
    (r"_ms$", "", "ms"),
    (r"(?:^|[._])seconds$|_s$", "", "s"),
)


def unit_of(metric: str) -> tuple[str, str]:
    """(what, unit) of a metric column, guessed from its name (``iostat.sda.rMB_s`` ->
    ("read throughput", "MB/s"))."""
    for pat, what, unit in _UNITS:
        if re.search(pat, metric):
            return what, unit
    return "", ""


def axis_label(metric: str, unit: str = "") -> str:
    what, guessed = unit_of(metric)
    unit = unit or guessed
    return f"{metric}" + (f"\n{what}" if what else "") + (f" ({unit})" if unit else "")


def panel_title(metric: str, unit: str = "") -> str:
    m = re.search(r"(?:^|\.)(\w+?)_lat_(p\d+|mean|max)_ms$", metric)
    if m:
        return f"{m.group(1)}() {m.group(2)} latency (ms)"
    what, guessed = unit_of(metric)
    unit = unit or guessed
    dev = re.match(r"iostat\.([^.]+)\.", metric)     # which device, as iostat names it
    return ((f"{dev.group(1)} " if dev else "") + (what or short(metric))
            + (f" ({unit})" if unit else ""))


def finish(fig, title: str, notes=()):
    """Title (and notes, e.g. published ratios, under it) wrapped to the figure's
    width; layout tightened around them."""
    import textwrap

    chars = max(40, int(fig.get_figwidth() * 11))
    text = [textwrap.fill(part, chars) for part in title.split("\n")]
    text += [textwrap.fill(n, int(chars * 1.1)) for n in notes]
    fig.suptitle("\n".join(text), fontsize=10.5)
    fig.tight_layout()
    return fig


def scale_note(rows: list[dict]) -> str:
    """``run.scale`` of the rows for a figure's title ('run.scale 0.1'), saying when
    some ran below their experiment's valid scale (``run.below_valid_scale``)."""
    scales = sorted({float(r["run.scale"]) for r in rows if r.get("run.scale") is not None})
    if not scales:
        return ""
    text = "run.scale " + ", ".join(f"{s:g}" for s in scales)
    if len(scales) == 1 and scales[0] == 1:
        text += " (full size)"
    if any(r.get("run.below_valid_scale") for r in rows):
        text += (" - below the experiment's valid scale (meta.min_scale): the published "
                 "effect does not hold there")
    return text


def version_note(rows: list[dict]) -> str:
    """'' when the rows are of one code version; else which ones, for a figure's title
    and the report's warning (runs of different model code drawn together)."""
    versions = sorted({str(r["code_version"]) for r in rows if r.get("code_version")})
    if len(versions) < 2:
        return ""
    return (f"runs of {len(versions)} code versions: " + ", ".join(versions[:3])
            + (", ..." if len(versions) > 3 else ""))


def _hashable(v):
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, (list, dict)) else v


def varying(rows: list[dict], skip: tuple[str, ...] = SKIP_VARYING) -> list[str]:
    """Parameter columns with more than one value among ``rows`` (table order)."""
    cols: dict[str, set] = {}
    for r in rows:
        for k, v in r.items():
            if is_param(k) and k not in skip:
                cols.setdefault(k, set()).add(_hashable(v))
    return [k for k, vals in cols.items() if len(vals) > 1]


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


def sort_key(v):
    """Numbers and sizes (``16k``, ``1m``) by magnitude, then text."""
    if isinstance(v, bool):
        return (0, float(v), "")
    if isinstance(v, (int, float)):
        return (0, float(v), "")
    m = _SIZE.match(str(v))
    if m:
        mult = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
        return (0, float(m.group(1)) * mult, "")
    return (1, 0.0, str(v))


def short(col: str) -> str:
    return col.rsplit(".", 1)[-1]


def value_text(v) -> str:
    """A parameter value as a label: ``500`` for 500.0."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def units_with(units: dict | None, overlays) -> dict:
    """Each metric's unit: the given ones, then those of the published overlays."""
    out = dict(units or {})
    for o in overlays:
        out.setdefault(o.metric, o.unit)
    return out


def label_by(cols: list[str]):
    """A row's label from the columns ``cols`` (``label_of``)."""
    return lambda row: label_of(row, cols)


def label_of(row: dict, cols: list[str]) -> str:
    """``bs=16k, scheduler=noop`` (a name=value shown once even if two columns carry it,
    e.g. ``block.scheduler`` and ``device.sda.queue.scheduler``)."""
    parts = dict.fromkeys(f"{short(c)}={value_text(row.get(c))}" for c in cols)
    return ", ".join(parts) or "(one configuration)"


def distinguish(label: Callable[[dict], str], rows: list[dict],
                key: Callable[[dict], object] = lambda r: None) -> Callable[[dict], str]:
    """``label`` extended, for runs that would share a label at one ``key`` (a panel, an
    x value, a hue), by the parameters that tell them apart - on every run of that
    label, so a line keeps one name: a what-if run with an override
    (``device.sda.write_back=false``) beside the same case without it gets its own
    line or bar, never one drawn in the same colour under the same name."""
    shared: dict[tuple, list[dict]] = {}
    for r in rows:
        shared.setdefault((key(r), label(r)), []).append(r)
    apart: dict[str, list[str]] = {}
    for (_, base), rs in shared.items():
        if len(rs) > 1:
            cols = apart.setdefault(base, [])
            cols += [c for c in _apart(rs) if c not in cols]

    def named(r: dict) -> str:
        base = label(r)
        cols = apart.get(base)
        return f"{base}, {label_of(r, cols)}" if cols else base
    return named


def _apart(rows: list[dict]) -> list[str]:
    """The parameters that differ among ``rows``; ``run.overrides`` (which keys a command
    line set) only when no parameter itself does."""
    cols = varying(rows)
    return [c for c in cols if c != "run.overrides"] or cols


def category_labels(ax, labels, tilt: bool) -> None:
    """Bar labels under ``ax``; ``tilt`` (too wide to stand side by side): turned 45
    degrees about each label's right end - at a shallower angle the lines of
    neighbouring two-line labels run into each other."""
    ax.set_xticklabels(labels, fontsize=8, rotation=45 if tilt else 0,
                       ha="right" if tilt else "center",
                       rotation_mode="anchor" if tilt else "default")


def save(fig, path: str | Path) -> Path:
    """Write ``fig`` as PNG atomically (temp name, rename) and close it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=110)
        tmp.replace(path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
