"""Report of experiment E2 (group commit, mysqlslap): throughput versus concurrency for
each engine case, the shape of the original graph (Matsunobu 2009: MySQL 5.1 built-in
InnoDB with innodb_support_xa=1/0 against InnoDB Plugin 1.0.4 with 1/0).

Reads the summary rows of ``experiment='group_commit'`` with DuckDB and draws one panel
per value of the split column (the controller cache on / off), one line per engine case
(``engine.commit_protocol`` x ``engine.innodb_support_xa``) - and per value of every
other parameter that varies among the runs (``engine.sync_binlog``, a swept
``cpu.wakeup_us``, ...), named in the line's label, so no line mixes runs of
different settings.

    python -m pipeline.report_group_commit    # outputs/report/group_commit_tps_by_concurrency.png
    python -m pipeline.report_group_commit --split device.sda.battery_backed --out e2.png

``plot(rows, path)`` draws from plain dicts (keys ``case``, ``split``, ``concurrency``,
``tps``, optionally ``run.scale`` and ``run.below_valid_scale``, printed over the
panels) so it can be called without Parquet files.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from collections import defaultdict
from pathlib import Path

from .errors import EXIT_CONFIG, ConfigError, check_output_file, one_line, png_path
from .plots.common import save, scale_note

SCALE_COLUMNS = ("run.scale", "run.below_valid_scale")   # for the title (scale_note)
CASE_COLUMNS = ("engine.commit_protocol", "engine.innodb_support_xa", "engine.sync_binlog",
                "engine.log_bin")
LABELS = {"mysql51_builtin": "5.1 built-in", "innodb_plugin_104": "Plugin 1.0.4",
          "mysql56_binlog_group_commit": "5.6 binlog group commit"}


def case_label(row: dict, varying: list[str]) -> str:
    proto = row.get("engine.commit_protocol", "?")
    parts = [LABELS.get(proto, str(proto))]
    xa = row.get("engine.innodb_support_xa")
    if xa is not None:
        parts.append(f"xa={int(bool(xa))}")
    for col in varying:
        if col not in ("engine.commit_protocol", "engine.innodb_support_xa"):
            parts.append(f"{col.split('.')[-1]}={row.get(col)}")
    return ", ".join(parts)


def load_rows(root: str | Path, split: str | None, metric: str) -> list[dict]:
    """Summary rows of the group_commit experiment as plot rows."""
    from .query import connect, varying_params

    con = connect(root)
    cols = [c[0] for c in con.execute("DESCRIBE runs").fetchall()]
    for key, need in (("--metric", metric), ("--split", split), ("--results", "workload.concurrency")):
        if need is not None and need not in cols:
            close = difflib.get_close_matches(need, cols, n=1, cutoff=0.8)
            raise ConfigError(key, f"column {need!r} not in the results"
                              + (f" (did you mean {close[0]!r}?)" if close else ""))
    varying = varying_params(con, "experiment = 'group_commit' AND status = 'ok'",
                             skip=("run.seed", "workload.concurrency", "run.below_valid_scale"))
    if split is None:
        devices = [c for c in varying if c.startswith("device.")]
        split = next((c for c in devices if c.endswith(".battery_backed")),
                     devices[0] if devices else None)
    varying = [c for c in varying if c != split]
    present = [c for c in CASE_COLUMNS + SCALE_COLUMNS if c in cols]
    select = list(dict.fromkeys(present + varying + ["workload.concurrency", metric]
                                + ([split] if split else [])))
    q = ", ".join(f'"{c}"' for c in select)
    data = con.execute(f"SELECT {q} FROM runs WHERE experiment = 'group_commit' "
                       f"AND status = 'ok'").fetchall()
    rows = []
    for values in data:
        rec = dict(zip(select, values))
        rows.append({"case": case_label(rec, varying),
                     "split": f"{split.split('.')[-1]}={rec[split]}" if split else "",
                     "concurrency": rec["workload.concurrency"], "tps": rec[metric],
                     **{c: rec[c] for c in SCALE_COLUMNS if c in rec}})
    return rows


def plot(rows: list[dict], path: str | Path) -> Path:
    """Throughput vs concurrency, one line per case, one panel per split value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        panels[r["split"]][r["case"]][int(r["concurrency"])] = float(r["tps"])
    names = sorted(panels)
    n_lines = max(len(cases) for cases in panels.values())
    below = n_lines > 6            # a long legend goes under the panel, not over the lines
    height = 4.5 + (0.2 * n_lines + 0.6 if below else 0)
    fig, axes = plt.subplots(1, len(names), figsize=(6.5 * len(names), height), squeeze=False)
    for ax, name in zip(axes[0], names):
        for case in sorted(panels[name]):
            pts = sorted(panels[name][case].items())
            ax.plot([c for c, _ in pts], [t for _, t in pts], marker="o", label=case)
        ax.set_xlabel("concurrency (mysqlslap connections)")
        ax.set_ylabel("transactions/s")
        ax.set_title("mysqlslap write, binlog on, innodb_flush_log_at_trx_commit=1"
                     + (f"\n{name}" if name else ""), fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if below:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14))
        else:
            ax.legend(fontsize=8)
    note = scale_note(rows)
    if note:
        fig.suptitle(note, fontsize=9)
    fig.tight_layout()
    return save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", "--dir", dest="results", default="outputs",
                    help="results directory")
    ap.add_argument("--out", default=None,
                    help="PNG path (default: <results>/report/group_commit_<metric>_by_concurrency.png; "
                         "pipeline.report's figure of the sweep is <results>/report/group_commit.png)")
    ap.add_argument("--metric", default="mysqlslap.tps")
    ap.add_argument("--split", default=None,
                    help="parameter column for the panels (default: a varying device.* column)")
    args = ap.parse_args(argv)
    from .query import QueryError

    if args.out is None:
        args.out = str(Path(args.results) / "report" /
                       f"group_commit_{args.metric.rsplit('.', 1)[-1]}_by_concurrency.png")
    args.out = str(png_path(args.out))
    try:
        check_output_file(args.out, "--out")
        try:
            rows = load_rows(args.results, args.split, args.metric)
        except QueryError as ex:
            raise ConfigError("--results", str(ex)) from None
        if not rows:
            raise ConfigError("--results", f"no ok runs of experiment group_commit under "
                              f"{args.results}/")
    except ConfigError as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_CONFIG
    print(plot(rows, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
