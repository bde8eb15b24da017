"""What ``python -m pipeline.validate`` prints and writes: the table (id, case,
published, simulated, ratio, tolerance, within tolerance) on the terminal, and
``report.md`` (the same table, the sources, one plot per experiment), ``report.csv``
and the PNGs (``pipeline.report``) in the report directory."""
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


HEADER = ("id", "case", "published", "simulated", "ratio", "tolerance", "within tolerance")


def table_rows(checks: list) -> list[tuple[str, ...]]:
    out = []
    for c in checks:
        unit = c.ref.unit
        verdict = c.verdict if c.state not in ("skipped", "failed") else f"{c.verdict}: {c.reason}"
        out.append((c.ref.id, c.ref.label, fmt(c.ref.published, unit), fmt(c.simulated, unit),
                    "-" if c.ratio is None else f"{c.ratio:.2f}", str(c.ref.tolerance), verdict))
    return out


def print_table(checks: list, out=None, title: str | None = None) -> None:
    from .query import Result, print_table as show

    show(Result(list(HEADER), table_rows(checks)), out=out or sys.stdout, title=title)


def markdown_table(checks: list) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in table_rows(checks):
        lines.append("| " + " | ".join(esc(x) for x in row) + " |")
    return "\n".join(lines)


def counts(checks: list) -> dict[str, int]:
    out = {k: 0 for k in ("pass", "fail", "info", "skipped", "failed")}
    for c in checks:
        out[c.state] += 1
    return out


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
                    "unit", "tolerance", "state", "reason", "config_hash", "source"])
        for c in checks:
            w.writerow([c.ref.id, c.ref.experiment, c.ref.label, c.ref.metric, c.ref.published,
                        c.simulated, c.ratio, c.ref.unit, str(c.ref.tolerance), c.state, c.reason,
                        c.case.spec.config_hash if c.case else "", c.ref.source])

    lines = [f"# Validation against published figures ({datetime.now():%Y-%m-%d %H:%M})", "",
             f"`{command}`", "",
             f"Code version `{code_version()}`; scale: "
             f"{scale if scale is not None else 'each experiment’s own run.scale'}. "
             + summary_line(checks, len(cases), wall_s) + ".", "",
             markdown_table(checks), "", "## Sources", ""]
    for c in checks:
        lines.append(f"- `{c.ref.id}` ({c.ref.experiment}, `{c.ref.metric}`): {c.ref.source}")
    for exp, png, err in pngs:
        lines += ["", f"## {exp}", ""]
        lines.append(f"![{exp}]({png.name})" if png else f"(no plot: {err})")
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
