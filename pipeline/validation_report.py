"""What ``python -m pipeline.validate`` prints and writes: the table (id, case, kind,
published, simulated, ratio, tolerance, within tolerance) and the counts per kind
(prediction / calibration / development: within, outside, informational, skipped) on
the terminal, and ``report.md`` (the same table and counts, the sources and calibrated
parameters, one plot per experiment), ``report.csv``, ``kinds.png`` (the counts per
kind) and the experiments' PNGs (``pipeline.report``) in the report directory."""
from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

def fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    a = abs(v)
    s = (f"{v:,.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 1
         else f"{v:.3f}" if a >= 0.1 else f"{v:.3g}")
    return f"{s}{unit}" if unit == "x" else f"{s} {unit}".strip()


HEADER = ("id", "case", "kind", "published", "simulated", "ratio", "tolerance",
          "within tolerance")
STATES = ("pass", "fail", "info", "skipped", "failed")


def table_rows(checks: list) -> list[tuple[str, ...]]:
    out = []
    for c in checks:
        unit = c.ref.unit
        verdict = c.verdict if c.state not in ("skipped", "failed") else f"{c.verdict}: {c.reason}"
        out.append((c.ref.id, c.ref.label, c.ref.kind, fmt(c.ref.published, unit),
                    fmt(c.simulated, unit),
                    "-" if c.ratio is None else f"{c.ratio:.2f}", str(c.ref.tolerance), verdict))
    return out


def print_table(checks: list, out=None, title: str | None = None) -> None:
    from .query import Result, print_table as show

    show(Result(list(HEADER), table_rows(checks), key=1), out=out or sys.stdout, title=title)


def markdown_table(checks: list) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in table_rows(checks):
        lines.append("| " + " | ".join(esc(x) for x in row) + " |")
    return "\n".join(lines)


def counts(checks: list) -> dict[str, int]:
    out = {k: 0 for k in STATES}
    for c in checks:
        out[c.state] += 1
    return out


def counts_by_kind(checks: list) -> dict[str, dict[str, int]]:
    """``{kind: counts}`` for every kind (``reference.KINDS``), in that order."""
    from .reference import KINDS

    return {k: counts([c for c in checks if c.ref.kind == k]) for k in KINDS}


def kind_lines(checks: list) -> list[str]:
    """One line per kind: ``prediction: 12 within tolerance, 1 outside, ...``."""
    out = []
    for kind, n in counts_by_kind(checks).items():
        line = (f"{kind}: {n['pass']} within tolerance, {n['fail']} outside, "
                f"{n['info']} informational, {n['skipped']} skipped")
        out.append(line + (f", {n['failed']} failed runs" if n["failed"] else ""))
    return out


def kind_table(checks: list) -> str:
    """The counts per kind as a Markdown table."""
    lines = ["| kind | rows | within tolerance | outside | informational | skipped | failed runs |",
             "|---|---|---|---|---|---|---|"]
    for kind, n in counts_by_kind(checks).items():
        lines.append(f"| {kind} | {sum(n.values())} | {n['pass']} | {n['fail']} | {n['info']} "
                     f"| {n['skipped']} | {n['failed']} |")
    return "\n".join(lines)


def draw_kinds(checks: list, path: Path) -> Path:
    """``kinds.png``: one stacked bar per kind - within, outside, informational,
    skipped, failed runs."""
    from .plots.common import pyplot, save

    plt = pyplot()
    by_kind = counts_by_kind(checks)
    kinds = list(by_kind)
    parts = (("pass", "within tolerance", "#4c9a2a"), ("fail", "outside", "#c0392b"),
             ("info", "informational", "#95a5a6"), ("skipped", "skipped", "#d5d8dc"),
             ("failed", "failed runs", "#6c3483"))
    fig, ax = plt.subplots(figsize=(7, 3.4))
    left = [0] * len(kinds)
    for state, label, colour in parts:
        widths = [by_kind[k][state] for k in kinds]
        ax.barh(kinds, widths, left=left, color=colour, label=label)
        for i, w in enumerate(widths):
            if w:
                ax.text(left[i] + w / 2, i, str(w), ha="center", va="center", fontsize=9)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlabel("reference rows")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title("validation rows by kind: a calibration or development row met is no prediction",
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=5, frameon=False)
    fig.tight_layout()
    return save(fig, path)


def summary_line(checks: list, n_runs: int, wall_s: float) -> str:
    n = counts(checks)
    return (f"{len(checks)} rows: {n['pass']} within tolerance, {n['fail']} outside, "
            f"{n['failed']} failed runs, {n['info']} informational, {n['skipped']} skipped; "
            f"{n_runs} distinct runs, {wall_s:.0f} s")


def write_report(out_dir: Path, checks: list, cases: list, command: str,
                 scale: float | None, wall_s: float, results_dir: str = "outputs") -> Path:
    """report.md + report.csv + one PNG per experiment into ``out_dir``."""
    import csv

    from . import report
    from .version import code_version

    out_dir.mkdir(parents=True, exist_ok=True)
    pngs: list[tuple[str, Path | None, str]] = []
    for exp in dict.fromkeys(c.experiment for c in cases):
        rows = [c.row for c in cases if c.experiment == exp and c.status == "ok" and c.row]
        mine = [c for c in checks if (c.case.experiment if c.case else c.ref.experiment) == exp]
        if not rows:
            continue
        try:
            pngs.append((exp, report.draw(exp, rows, mine, out_dir / f"{exp}.png",
                                          results_dir=results_dir), ""))
        except Exception as ex:  # a plot must not hide the table
            pngs.append((exp, None, f"{type(ex).__name__}: {ex}"))

    with open(out_dir / "report.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "experiment", "case", "metric", "published", "simulated", "ratio",
                    "unit", "tolerance", "state", "reason", "config_hash", "source", "kind",
                    "calibrated"])
        for c in checks:
            w.writerow([c.ref.id, c.ref.experiment, c.ref.label, c.ref.metric, c.ref.published,
                        c.simulated, c.ratio, c.ref.unit, str(c.ref.tolerance), c.state, c.reason,
                        c.case.spec.config_hash if c.case else "", c.ref.source, c.ref.kind,
                        " ".join(c.ref.calibrated)])
    try:
        kinds_png, kinds_err = draw_kinds(checks, out_dir / "kinds.png"), ""
    except Exception as ex:  # a plot must not hide the table
        kinds_png, kinds_err = None, f"{type(ex).__name__}: {ex}"

    lines = [f"# Validation against published figures ({datetime.now():%Y-%m-%d %H:%M})", "",
             f"`{command}`", "",
             f"Code version `{code_version()}`; scale: "
             f"{scale if scale is not None else 'each experiment’s own run.scale'}. "
             + summary_line(checks, len(cases), wall_s) + ".", "",
             "By kind (a figure met by a calibration shows the parameter can be chosen, "
             "not that the model predicts it):", "", kind_table(checks), "",
             f"![kinds]({kinds_png.name})" if kinds_png else f"(no plot: {kinds_err})", "",
             markdown_table(checks), "", "## Sources", ""]
    for c in checks:
        cal = f" Calibrated: `{' '.join(c.ref.calibrated)}`." if c.ref.calibrated else ""
        lines.append(f"- `{c.ref.id}` ({c.ref.experiment}, `{c.ref.metric}`, {c.ref.kind}): "
                     f"{c.ref.source}{cal}")
    for exp, png, err in pngs:
        lines += ["", f"## {exp}", ""]
        lines.append(f"![{exp}]({png.name})" if png else f"(no plot: {err})")
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
