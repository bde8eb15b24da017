"""``python -m pipeline.report --experiment NAME``: the publication-style plot of any
sweep of an experiment, with the published values drawn beside the runs that are
reference cases.

    python -m pipeline.run -m experiment=aio_batch
    python -m pipeline.report --experiment aio_batch          # outputs/report/aio_batch.png
    python -m pipeline.report --experiment lra --metric full_scan.scan_s --out lra.png
    python -m pipeline.report --experiment sysbench_threads --usl    # <experiment>_usl.png

``--usl`` draws the Universal Scalability Law fit of ``--metric`` against ``--x``
(``pipeline.usl``, ``pipeline.plots.usl``) instead; both default to the experiment's
line style (x and first metric), e.g. ``workload.threads`` and ``sysbench.tps``.

Each experiment has a style (``STYLES``, ``pipeline.report_styles``): the chart kind (``pipeline.plots.bars``,
``lines``, ``cdf``), the metric panels, the x or hue parameter and how a configuration
is labelled; runs that would share a label (at one x, hue or panel) but differ by a
parameter - a what-if override beside the case as shipped - are named by what differs
as well (``percona_keep_average, write_back=False``), each its own line, bar and
colour. An experiment without one gets bars of the metrics its reference rows
read, or of the headline metrics. ``pipeline.validate`` draws the same plots for the
reference cases it runs.

Published overlays: the reference rows of the experiment (``data/reference/*.csv``
plus ``--reference``) are composed at the sweep's ``run.scale`` and matched to the
runs by config hash; a sweep that contains a reference case shows its published
value beside the simulated one - unless the run is below the experiment's valid
scale (``run.below_valid_scale``).

An experiment without a style (an ad-hoc sweep under ``run.name``, a user's own
experiment, ``myisam_nr_requests``) is drawn by ``pipeline.plots.facets``: its
``meta.headline`` metrics, faceted by the parameters that vary, short labels, within
2000 px. ``pipeline.report_group_commit`` draws a different figure of E2 under a
different name (``group_commit_tps_by_concurrency.png``).
"""
from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from . import reference
from .errors import EXIT_CONFIG, ConfigError, OneLineParser, check_output_file, one_line, png_path
from .plots.common import Overlay, distinguish, label_of, scale_note, varying, version_note
from .report_styles import STYLES, Style, covered, series_style, style_for


HEADLINE = re.compile(r"^(?:[a-z_]+\.(?:MB_s|iops|tps|notpm|scan_s|syncs_per_s)|"
                      r"iostat\.[^.]+\.(?:rMB_s|wMB_s|await_ms))$")


def headline_columns(patterns: Sequence[str], rows: list[dict]) -> list[str]:
    """The columns of ``rows`` that ``patterns`` (names or ``*`` globs, a
    ``meta.headline``) name, in the patterns' order, leaving out those null or zero in
    every row."""
    import fnmatch

    present = set().union(*(r.keys() for r in rows)) if rows else set()
    return list(dict.fromkeys(c for m in patterns for c in sorted(present)
                              if fnmatch.fnmatchcase(c, m)
                              and any(r.get(c) not in (None, 0, 0.0) for r in rows)))


def _panels(style: Style, rows: list[dict], overlays: Sequence[Overlay],
            metrics: Sequence[str] | None) -> list[str]:
    if metrics:
        return list(metrics)
    present = set().union(*(r.keys() for r in rows)) if rows else set()
    out = headline_columns(style.metrics, rows)
    for o in overlays:
        if o.metric not in out and o.metric in present:
            out.append(o.metric)
    if not out:
        out = [c for c in sorted(present) if HEADLINE.match(c)
               and any(r.get(c) not in (None, 0, 0.0) for r in rows)][:3]
    if not out:
        raise ValueError("no metric to plot (pass --metric)")
    return out


def notes_from_checks(checks) -> list[str]:
    """One line per ratio row: simulated vs published and the verdict."""
    from .validation_report import fmt

    out = []
    for c in checks:
        if c.ref.derived and c.simulated is not None:
            judged = (f"tolerance {c.ref.tolerance}: {c.verdict}" if c.ref.tolerance.checked
                      else "informational")
            out.append(f"{c.ref.label}: simulated {fmt(c.simulated, c.ref.unit)}, published "
                       f"{fmt(c.ref.published, c.ref.unit)} ({judged})")
    return out


def overlays_from_checks(checks) -> list[Overlay]:
    """``pipeline.validate`` checks -> published overlays (plain rows, not ratios)."""
    out = []
    for c in checks:
        if c.case is None or c.ref.derived or c.ref.published is None:
            continue
        out.append(Overlay(c.case.spec.config_hash, c.ref.metric, c.ref.published,
                           c.ref.label, c.ref.unit, c.ref.tolerance.within(c.simulated, c.ref.published)))
    return out


def draw(experiment: str, rows: list[dict], checks: Sequence = (), path: str | Path = "",
         overlays: Sequence[Overlay] | None = None, metrics: Sequence[str] | None = None,
         results_dir: str | Path | None = None, levels: dict | None = None,
         per_second: bool = False) -> Path:
    """Draw ``experiment``'s plot of ``rows`` (summary dicts) into ``path``. ``levels``:
    the published levels of a lines style (``published_levels``; ``None``: from the
    project's reference tables, ``{}``: none, as with ``--no-reference``); ``per_second``:
    the runs' per-second series instead (``series_style``, ``--series``)."""
    style = series_style(experiment) if per_second else style_for(experiment)
    note = "\n".join(n for n in (scale_note(rows), version_note(rows)) if n)
    if note:
        style = replace(style, title=f"{style.title}\n{note}")
    overlays = list(overlays) if overlays is not None else overlays_from_checks(checks)
    notes = notes_from_checks(checks)
    if style.kind == "series":
        from .plots import series

        group = style.extra.get("group")
        return series.draw(rows, path, style.title, results_dir,
                           series=distinguish(style.label, rows, group or (lambda r: None)),
                           notes=notes, **style.extra)
    panels = [] if style.kind == "cdf" else _panels(style, rows, overlays, metrics)
    if style.kind == "facets":
        from .naming import key_columns, swept_keys
        from .plots import facets

        keys = key_columns(rows, list(dict.fromkeys(c for r in rows for c in r)),
                           swept_keys([experiment]))
        return facets.draw(rows, panels, path, style.title, keys, notes=notes)
    vary = varying(rows)
    label = None
    if style.label is not None:
        rest = [c for c in vary if not covered(c, style.covers) and c not in (style.hue, style.x)]
        base = style.label
        at = ((lambda r: r.get(style.x)) if style.kind == "lines" else
              (lambda r: r.get(style.hue)) if style.kind == "bars" else (lambda r: None))
        label = distinguish(lambda r: base(r) + (", " + label_of(r, rest) if rest else ""),
                            rows, at)
    if style.kind == "lines" and style.x:
        from .plots import lines

        extra = dict(style.extra)
        if "levels" in extra:
            extra["levels"] = published_levels(experiment) if levels is None else levels
        return lines.draw(rows, style.x, panels, path, style.title, overlays, series=label,
                          xlabel=style.xlabel or None, notes=notes, **extra)
    if style.kind == "cdf":
        from .plots import cdf

        return cdf.draw(rows, path, style.title, results_dir=results_dir, label=label,
                        notes=notes, **style.extra)
    from .plots import bars

    hue = style.hue if style.hue in vary else None
    return bars.draw(rows, panels, path, style.title, overlays, label=label, hue=hue,
                     log=style.log, xlabel=style.xlabel, notes=notes, **style.extra)


def published_levels(experiment: str, files: Sequence[Path] | None = None) -> dict:
    """The style's ``levels`` (metric -> (reference row id, label)) as metric -> (the
    row's published value, label), from ``files`` (default: the project's reference
    tables, ``data/reference``); no file is read for a style without levels."""
    declared = style_for(experiment).extra.get("levels", {})
    if not declared:
        return {}
    rows = reference.load(list(files) if files is not None else reference.default_files())
    published = {r.id: r.published for r in rows}
    return {m: (published[ref], text) for m, (ref, text) in declared.items()
            if published.get(ref) is not None}


# -- reading a sweep ------------------------------------------------------------------------
def stored_headline(results: str | Path, experiment: str, rows: list[dict]) -> list[str]:
    """The ``meta.headline`` the runs of ``rows`` were made with (their summary's
    footer, ``pipeline.fanout``), as the metric columns of ``rows`` it names (globs
    expanded, as ``headline_columns`` does for a YAML's): the panels of an experiment
    kept under an ad-hoc ``run.name``, whose name has no YAML. Empty if no run recorded
    one."""
    from .sink import read_meta

    for r in rows:
        meta = read_meta(results, experiment, r["config_hash"]) or {}
        found = headline_columns([p for p in meta.get("headline", "").split(",") if p], rows)
        if found:
            return found
    return []


def load_rows(results: str | Path, experiment: str, where: str | None = None) -> list[dict]:
    """The ok summary rows of ``experiment`` under ``results`` (DuckDB); ``where``: SQL
    over any column that selects among them (``--where``)."""
    import duckdb

    from .sink import partition_value

    pattern = Path(results) / f"experiment={partition_value(experiment)}" / "*" / "summary.parquet"
    if not any(pattern.parent.parent.glob("*/summary.parquet")):
        return []
    con = duckdb.connect()
    sql = "SELECT * FROM read_parquet($p, union_by_name=true) WHERE status = 'ok'"
    try:
        rel = con.execute(sql + (f" AND ({where})" if where else ""), {"p": pattern.as_posix()})
    except duckdb.Error as ex:
        from .query import duckdb_message

        raise ConfigError("--where", duckdb_message(ex)) from None
    cols = [d[0] for d in rel.description]
    return [dict(zip(cols, v)) for v in rel.fetchall()]


def reference_overlays(experiment: str, rows: list[dict], files: Sequence[Path]) -> list[Overlay]:
    """Published values of the reference rows of ``experiment`` that are among ``rows``
    (composed at the rows' ``run.scale`` if they share one)."""
    from . import reference
    from .validate import plan

    refs = [r for r in reference.load(list(files)) if r.experiment == experiment and not r.derived]
    if not refs:
        return []
    scales = {r.get("run.scale") for r in rows}
    scale = scales.pop() if len(scales) == 1 else None
    _, where = plan(refs, scale, "outputs", build=False)
    # a run below its experiment's valid scale says nothing about the published figure
    hashes = {r.get("config_hash") for r in rows if not r.get("run.below_valid_scale")}
    out = []
    for ref in refs:
        case = where.get(ref.id)
        if (ref.published is not None and not isinstance(case, str) and case is not None
                and case.spec.config_hash in hashes):
            out.append(Overlay(case.spec.config_hash, ref.metric, ref.published, ref.label, ref.unit))
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except (ConfigError, reference.ReferenceError) as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_CONFIG


def _main(argv: list[str] | None) -> int:
    ap = OneLineParser(prog="python -m pipeline.report",
                                 description="Draw the publication-style plot of an experiment's runs.")
    ap.add_argument("--experiment", required=True, help="experiment name (results of any sweep of it)")
    ap.add_argument("--results", "--dir", dest="results", default="outputs",
                    help="results root (default: outputs)")
    ap.add_argument("--out", default=None, help="PNG path (default: <results>/report/<experiment>.png)")
    ap.add_argument("--metric", action="append", default=[], help="metric column(s) to plot")
    ap.add_argument("--reference", action="extend", nargs="+", default=[], metavar="FILE",
                    help="extra reference CSV files for published overlays")
    ap.add_argument("--no-reference", action="store_true", help="no published overlays")
    ap.add_argument("--config-dir", action="append", default=[], metavar="DIR",
                    help="where your own experiment's YAML is (as pipeline.run --config-dir): "
                         "its meta.headline picks the panels")
    ap.add_argument("--usl", action="store_true",
                    help="draw the Universal Scalability Law fit of --metric vs --x")
    ap.add_argument("--x", metavar="COLUMN", help="--usl: the concurrency column "
                    "(default: the experiment's x, e.g. workload.threads)")
    ap.add_argument("--where", metavar="SQL", help="select runs (SQL over any column, e.g. "
                    "\"code_version = 'git:1a2b3c4'\")")
    ap.add_argument("--series", action="store_true",
                    help="draw the runs' per-second engine series (throughput, pages flushed, "
                         "checkpoint age) of an experiment on the InnoDB server; the runs "
                         "need results.details=true")
    try:
        args = ap.parse_args(argv)
    except SystemExit as ex:
        return ex.code if isinstance(ex.code, int) else EXIT_CONFIG
    if args.x is not None and not args.usl:
        raise ConfigError("--x", "only with --usl")
    if args.series and (args.usl or args.metric):
        raise ConfigError("--series", "draws the per-second series: not with "
                          + ("--usl" if args.usl else "--metric"))
    for d in args.config_dir:
        if not Path(d).is_dir():
            raise ConfigError("--config-dir", f"{d!r} is not a directory")
    from . import best

    best.CONFIG_DIRS[:] = [Path(d) for d in args.config_dir]
    if not Path(args.results).is_dir():
        raise ConfigError("--results", f"{args.results!r} is not a directory"
                          if Path(args.results).exists() else f"no such directory {args.results!r}")
    name = args.experiment + ("_usl" if args.usl else "_series" if args.series
                              and style_for(args.experiment).kind != "series" else "")
    out = png_path(args.out) if args.out else Path(args.results) / "report" / f"{name}.png"
    check_output_file(out, "--out" if args.out else "--results")
    rows = load_rows(args.results, args.experiment, args.where)
    if not rows:
        from .query import experiment_hint
        from .sink import experiments

        if args.where and load_rows(args.results, args.experiment):
            raise ConfigError("--where", f"no ok run of experiment {args.experiment!r} "
                              f"where {args.where}")
        hint = experiment_hint(args.experiment, experiments(args.results))
        raise ConfigError("--experiment", f"no ok runs of experiment {args.experiment!r} under "
                          f"{args.results}/" + (hint or " (python -m pipeline.run -m "
                                                        f"experiment={args.experiment})"))
    mixed = version_note(rows)
    if mixed:
        print(f"warning: {mixed} - drawn together; pick one with --where "
              f"\"code_version = '...'\"", file=sys.stderr)
    _check_metrics(args.metric, rows)
    if args.usl:
        return _usl(args, rows, out)
    overlays: list[Overlay] = []
    levels: dict = {}
    if not args.no_reference and not args.series:     # the series carry no published values
        extra = [Path(f) for f in args.reference]
        if extra:   # the user's own files: an error in them is theirs to fix
            reference.load(extra)
        try:
            files = reference.default_files() + extra
            overlays = reference_overlays(args.experiment, rows, files)
            levels = published_levels(args.experiment, files)
        except reference.ReferenceError as ex:
            if extra:
                raise
            print(f"warning: no published overlays: {ex}", file=sys.stderr)
    metrics = args.metric or None
    if metrics is None and not args.series:
        from .best import headline

        if args.experiment not in STYLES and not headline(args.experiment):
            metrics = stored_headline(args.results, args.experiment, rows) or None
    try:
        path = draw(args.experiment, rows, overlays=overlays, path=out, metrics=metrics,
                    results_dir=args.results, levels=levels, per_second=args.series)
    except ValueError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return EXIT_CONFIG
    n = len(overlays) + len(levels)
    print(f"{path} ({len(rows)} runs, {n} published value{'' if n == 1 else 's'})")
    return 0


def _usl(args, rows: list[dict], out: Path) -> int:
    """``--usl``: fit (``pipeline.usl.fit_runs``) and draw (``pipeline.plots.usl``)."""
    from . import query, usl
    from .plots import usl as usl_plot
    from .plots.common import scale_note

    style = style_for(args.experiment)
    x = args.x or (style.x if style.kind == "lines" else None)
    if x is None:
        raise ConfigError("--x", f"experiment {args.experiment!r} has no default x: give the "
                          "concurrency column (--x workload.threads)")
    if len(args.metric) > 1:
        raise ConfigError("--metric", "--usl fits one metric")
    metric = args.metric[0] if args.metric else next(
        (m for m in style.metrics if "*" not in m), None)
    if metric is None:
        raise ConfigError("--metric", f"experiment {args.experiment!r} has no default "
                          "metric: give the throughput column (--metric sysbench.tps)")
    try:
        con = query.connect(args.results)
        series = usl.fit_runs(con, args.experiment, x, metric, args.where)
    except (usl.UslError, query.QueryError) as ex:
        raise ConfigError("", str(ex)) from None
    note = scale_note(rows)
    title = (f"{args.experiment}: {metric} vs {x}, Universal Scalability Law fit "
             "X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1))" + (f"\n{note}" if note else ""))
    path = usl_plot.draw(series, x, metric, out, title,
                         xlabel=style.xlabel if style.x == x and style.xlabel else None)
    print(f"{path} ({len(rows)} runs, {len(series)} fit(s))")
    return 0


def _check_metrics(metrics: Sequence[str], rows: list[dict]) -> None:
    """Every ``--metric`` is a numeric column of the runs (``ConfigError`` naming it)."""
    import difflib

    present = set().union(*(r.keys() for r in rows))
    for m in metrics:
        if m not in present:
            close = difflib.get_close_matches(m, sorted(present), n=1, cutoff=0.6)
            raise ConfigError("--metric", f"the runs have no column {m!r}"
                              + (f" (did you mean {close[0]!r}?)" if close else ""))
        bad = next((r[m] for r in rows if r.get(m) is not None
                    and not isinstance(r[m], (int, float))), None)
        if bad is not None:
            raise ConfigError("--metric", f"{m!r} is not a number (got {bad!r}); "
                              "plot a metric, not a parameter")


if __name__ == "__main__":
    sys.exit(main())
