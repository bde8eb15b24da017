"""``python -m pipeline.validate``: every published figure, simulated side by side.

    python -m pipeline.validate                          # every row of data/reference/*.csv
    python -m pipeline.validate --only 'E1.aio.*' --scale 0.1
    python -m pipeline.validate --reference mine.csv     # your own rows beside the published
    python -m pipeline.validate --reference mine.csv --no-published

1. Reads the reference tables (``pipeline.reference``: one row per figure).
2. Composes each row's case - ``experiment=<experiment>`` plus the row's overrides
   (plus ``run.scale`` with ``--scale``) - with Hydra, and validates it into a
   ``RunSpec`` exactly as ``python -m pipeline.run`` does. Rows that name the same
   configuration (same experiment and config hash) share one run.
3. Runs the distinct cases with the pipeline's own fan-out (``pipeline.fanout.sweep``:
   one Ray task per run, or serially with ``--serial``); every result lands as Parquet
   under ``--results`` like any other run. As a resumed sweep does, a case whose valid
   result from the same code version exists is not run again (an uncommitted tree's
   version carries a hash of its sources, ``pipeline.version``), never with ``--rerun``.
4. Reads the metrics back with DuckDB, compares each with its published value and
   tolerance, prints the table, and writes ``<results>/validation/<timestamp>/``:
   ``report.md`` (the same table, skipped rows and their reasons, one plot per
   experiment), ``report.csv`` and the PNGs (``pipeline.report``).

Rows whose experiment does not exist yet (no ``conf/experiment/<name>.yaml``) are
*skipped*: listed with the reason, never run, never a failure; so are ratios of them.
``info`` rows are shown, never checked. Each row's kind (prediction, calibration,
development: ``pipeline.reference``) is counted apart in the summary and the report.
A row run below its experiment's ``meta.min_scale`` (``--scale 0.02``) is shown with
its value but *not compared* (counted as skipped, with the reason): the published
effect does not hold there.

Exit status: 0 when every checked row is within its tolerance, 1 when one is not or a
run failed, 2 on bad input (a malformed reference file, an override that does not
compose, a metric the case does not report) with one line naming the row.
"""
from __future__ import annotations

import argparse
import difflib
import math
import shlex
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from . import reference as refmod
from .errors import (EXIT_CONFIG, EXIT_FAILED, ConfigError, Interrupted, SweepFailed,
                     OneLineParser, check_output_dir, describe)
from .reference import Reference, ReferenceError
from .validation_report import counts, kind_lines, print_table, summary_line, write_report

REPO = Path(__file__).resolve().parent.parent
CONF_DIR = REPO / "conf"
EXPERIMENTS_DIR = CONF_DIR / "experiment"


@dataclass
class Case:
    """One distinct run shared by the rows that name it."""

    experiment: str
    spec: object                      # RunSpec
    refs: list[str] = field(default_factory=list)
    row: dict | None = None           # its summary row, read back
    status: str = "pending"
    error: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.experiment, self.spec.config_hash


@dataclass
class Check:
    """The outcome of one reference row."""

    ref: Reference
    simulated: float | None = None
    state: str = "skipped"            # pass | fail | info | skipped | failed
    reason: str = ""
    case: Case | None = None

    @property
    def ratio(self) -> float | None:
        p, s = self.ref.published, self.simulated
        if p is None or s is None or p == 0:
            return None
        return s / p

    @property
    def verdict(self) -> str:
        return {"pass": "yes", "fail": "NO", "info": "info", "skipped": "skipped",
                "failed": "run failed"}[self.state]


# -- planning ------------------------------------------------------------------------------
# --config-dir: a user's own experiments and presets, searched after conf/ (and
# conf/local/), as ``python -m pipeline.run --config-dir DIR`` does
CONFIG_DIRS: list[Path] = []


def experiment_dirs() -> list[Path]:
    from .run import LOCAL_DIR

    return [EXPERIMENTS_DIR] + [Path(d) / "experiment" for d in [*CONFIG_DIRS, LOCAL_DIR]]


def experiment_exists(name: str) -> bool:
    return any((d / f"{name}.yaml").is_file() for d in experiment_dirs())


def missing_experiment(name: str) -> str | None:
    """Why a row's experiment cannot run (None if it can); a near-miss of an existing
    experiment's name is taken for a typo (bad input)."""
    if experiment_exists(name):
        return None
    known = sorted({p.stem for d in experiment_dirs() for p in d.glob("*.yaml")})
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
    if close:
        raise ValueError(f"unknown experiment {name!r} (did you mean {close[0]!r}?)")
    return f"no model yet (conf/experiment/{name}.yaml does not exist)"


def case_overrides(ref: Reference, scale: float | None, results_dir: str,
                   details: bool) -> list[str]:
    from .run import searchpath_override

    out = [f"experiment={ref.experiment}", *ref.overrides]
    search = searchpath_override(CONFIG_DIRS)
    if search:
        out.append(search)
    if scale is not None:
        out.append(f"run.scale={scale}")
    out += [f"results.dir={results_dir}", "results.summary=false"]
    if details:  # the plot needs the runs' detail tables
        out.append("results.details=true")
    return out


def _check_metric_names(ref: Reference, spec) -> None:
    """What can be told before running: iostat/devstat columns name devices of the
    case, a workload's metrics the case's workload."""
    from models.metrics.iostat import IOSTAT_COLUMNS

    from . import registry

    parts = ref.metric.split(".")
    ns = parts[0]
    if ns in ("iostat", "devstat"):
        names = spec.top_level if ns == "iostat" else tuple(d.name for d in spec.devices)
        if len(parts) < 3 or parts[1] not in names:
            raise ref.error("metric", f"{ref.metric!r}: {ns} columns are {ns}.<device>.<column>, "
                            f"devices of this case: {', '.join(names)}")
        if ns == "iostat" and ".".join(parts[2:]) not in IOSTAT_COLUMNS:
            raise ref.error("metric", f"{ref.metric!r}: no iostat column {'.'.join(parts[2:])!r} "
                            f"(columns: {', '.join(IOSTAT_COLUMNS)})")
    elif ns in registry.WORKLOADS and ns != (registry.WORKLOADS[spec.workload.type].metric_prefix
                                             or spec.workload.type):
        raise ref.error("metric", f"{ref.metric!r}: this case's workload is "
                        f"{spec.workload.type!r}, not {ns!r}")


def plan(refs: list[Reference], scale: float | None, results_dir: str,
         details_for: set[str] = frozenset(), code_version: str = "",
         build: bool = False) -> tuple[list[Case], dict]:
    """Compose and validate every runnable row's case (with a trial build of its stack
    unless ``build`` is off); returns the distinct cases and ``{row id: Case | skip
    reason}``. Raises ``ReferenceError`` naming a bad row."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from .schema import register
    from .spec import prepare, validate

    register()
    by_key: dict[tuple[str, str], Case] = {}
    where: dict[str, Case | str] = {}
    specs: dict[tuple, object] = {}   # rows with the same overrides compose once
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            for ref in refs:
                if ref.derived:
                    continue
                try:
                    reason = missing_experiment(ref.experiment)
                except ValueError as ex:
                    raise ref.error("experiment", str(ex)) from None
                if reason:
                    where[ref.id] = reason
                    continue
                ov = case_overrides(ref, scale, results_dir, ref.experiment in details_for)
                spec = specs.get(tuple(ov))
                if spec is None:
                    try:
                        cfg = compose("config", overrides=ov)
                        spec = (prepare if build else validate)(cfg, ref.experiment, code_version)
                    except Exception as ex:
                        err = describe(ex)
                        if err is None:
                            raise
                        raise ref.error("overrides", str(err)) from None
                    specs[tuple(ov)] = spec
                _check_metric_names(ref, spec)
                case = by_key.setdefault((ref.experiment, spec.config_hash),
                                         Case(ref.experiment, spec))
                case.refs.append(ref.id)
                where[ref.id] = case
    finally:
        GlobalHydra.instance().clear()
    return list(by_key.values()), where


# -- running and reading back ------------------------------------------------------------
def run_cases(cases: list[Case], serial: bool, jobs: int | None, rerun: bool) -> int:
    """Run the cases with the pipeline's fan-out (``pipeline.fanout.sweep``); results
    land as Parquet. A case whose valid result exists (same config, same code version)
    is not run again unless ``rerun``. Returns the number of cases run."""
    from .fanout import sweep
    from .schema import RayConfig

    if not cases:
        return 0
    ray = RayConfig(enabled=not serial, num_cpus=jobs)
    try:
        outs = sweep([c.spec for c in cases], ray, rerun=rerun, label="validation")
    except SweepFailed:
        return len(cases)  # failed runs are rows with status='failed'; reported per row
    return sum(o is not None for o in outs)


def read_back(cases: list[Case], results_dir: str) -> None:
    """Each case's summary row, read with DuckDB from the Parquet files just written."""
    import duckdb

    from .sink import run_dir

    files = {}
    for c in cases:
        p = run_dir(results_dir, c.experiment, c.spec.config_hash) / "summary.parquet"
        if p.exists():
            files[c.key] = p.as_posix()
        else:
            c.status, c.error = "failed", "no summary.parquet was written"
    if not files:
        return
    con = duckdb.connect()
    rel = con.execute("SELECT * FROM read_parquet($files, union_by_name=true)",
                      {"files": sorted(files.values())})
    cols = [d[0] for d in rel.description]
    rows = {(r["experiment"], r["config_hash"]): r for r in (dict(zip(cols, v)) for v in rel.fetchall())}
    for c in cases:
        row = rows.get(c.key)
        if row is None:
            if c.status == "pending":
                c.status, c.error = "failed", "no summary row"
            continue
        c.row = row
        c.status = "ok" if row.get("status") == "ok" else "failed"
        c.error = row.get("error") or ""


def evaluate(refs: list[Reference], where: dict) -> list[Check]:
    """Compare every row; raises ``ReferenceError`` for a metric a run does not report."""
    checks: dict[str, Check] = {}
    by_id = {r.id: r for r in refs}

    def judge(chk: Check) -> Check:
        if chk.ref.tolerance.checked:
            chk.state = "pass" if chk.ref.tolerance.within(chk.simulated, chk.ref.published) else "fail"
        else:
            chk.state = "info"
        return chk

    def get(ref: Reference) -> Check:
        if ref.id in checks:
            return checks[ref.id]
        if ref.derived:
            a, b = (get(by_id[i]) for i in ref.operands)
            chk = Check(ref)
            bad = next((x for x in (a, b) if x.state in ("skipped", "failed")), None)
            if bad is not None:
                chk.state = bad.state
                chk.reason = f"operand {bad.ref.id}: {bad.reason}"
            elif a.simulated is None or b.simulated is None or b.simulated == 0:
                chk.state, chk.reason = "failed", "operand has no value (or is 0)"
            else:
                chk.simulated = a.simulated / b.simulated
                judge(chk)
        else:
            target = where.get(ref.id)
            if isinstance(target, str) or target is None:
                chk = Check(ref, reason=target or "not planned")
            elif target.status != "ok":
                chk = Check(ref, state="failed", reason=target.error or target.status, case=target)
            else:
                row = target.row or {}
                if ref.metric not in row:
                    metrics = [k for k in row if "." in k and k.split(".", 1)[0]
                               not in refmod.CONFIG_SECTIONS]
                    close = difflib.get_close_matches(ref.metric, metrics, n=1, cutoff=0.6)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise ref.error("metric", f"the run reports no column {ref.metric!r}{hint}")
                v = row[ref.metric]
                chk = Check(ref, simulated=None if v is None else float(v), case=target)
                if chk.simulated is None or not math.isfinite(chk.simulated):
                    chk.state, chk.reason = "failed", f"{ref.metric} is {v!r}"
                elif target.spec.below_valid_scale:   # shown, neither within nor outside
                    chk.reason = (f"not compared: run.scale {target.spec.run.scale:g} below "
                                  f"the valid scale {target.spec.min_scale:g}")
                else:
                    judge(chk)
        checks[ref.id] = chk
        return chk

    return [get(r) for r in refs]


# -- command line ----------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m pipeline.validate",
        description="Run every reference case, compare with the published figures, "
                    "print the table and write a report with plots.")
    ap.add_argument("--reference", action="extend", nargs="+", default=[], metavar="FILE",
                    help="extra reference CSV files (same format as data/reference/*.csv)")
    ap.add_argument("--no-published", action="store_true",
                    help="leave out the project's own tables (data/reference/*.csv)")
    ap.add_argument("--only", action="append", default=[], metavar="ID,...",
                    help="row ids or shell patterns (E1.aio.*), comma-separated")
    ap.add_argument("--scale", type=float, default=None,
                    help="run.scale for every case (default: each experiment's own)")
    ap.add_argument("--results", "--dir", dest="results", default="outputs",
                    help="results root (default: outputs)")
    ap.add_argument("--out", default=None,
                    help="report directory (default: <results>/validation/<timestamp>)")
    ap.add_argument("--serial", action="store_true", help="run in this process, not on Ray")
    ap.add_argument("--jobs", type=int, default=None, help="Ray CPUs (local Ray; default: all)")
    ap.add_argument("--rerun", action="store_true",
                    help="run every case, even those whose results from this (clean) code "
                         "version exist")
    ap.add_argument("--list", action="store_true", help="list the rows and exit")
    ap.add_argument("--config-dir", action="append", default=[], metavar="DIR",
                    help="also search DIR for experiments and presets (as pipeline.run "
                         "--config-dir; conf/local/ is searched anyway)")
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except SystemExit as ex:
        return ex.code if isinstance(ex.code, int) else EXIT_CONFIG
    t0 = time.perf_counter()
    try:
        if args.scale is not None and not 0 < args.scale <= 1:
            raise ReferenceError(f"--scale: must be in (0, 1], got {args.scale}")
        for d in args.config_dir:
            if not Path(d).is_dir():
                raise ReferenceError(f"--config-dir: {d!r} is not a directory")
        CONFIG_DIRS[:] = [Path(d).resolve() for d in args.config_dir]
        check_output_dir(args.results, "--results")
        if args.out:
            check_output_dir(args.out, "--out")
        files = ([] if args.no_published else refmod.default_files()) + [Path(f) for f in args.reference]
        if not files:
            raise ReferenceError("no reference files (data/reference/*.csv or --reference)")
        refs = refmod.load(files)
        only = [p.strip() for arg in args.only for p in arg.split(",") if p.strip()]
        refs = refmod.select(refs, only)
        if args.list:
            for r in refs:
                print(f"{r.id:28s} {r.experiment:24s} {r.metric:30s} {shlex.join(r.overrides)}")
            return 0
        from .report_styles import needs_details
        from .version import code_version

        details = {r.experiment for r in refs if needs_details(r.experiment)}
        version = code_version()
        cases, where = plan(refs, args.scale, args.results, details, version)
        n_run = run_cases(cases, args.serial, args.jobs, args.rerun)
        read_back(cases, args.results)
        checks = evaluate(refs, where)
    except (ReferenceError, ConfigError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return EXIT_CONFIG
    except Interrupted as ex:
        print(f"error: {ex}", file=sys.stderr)
        return ex.code
    wall = time.perf_counter() - t0
    out_dir = Path(args.out) if args.out else (
        Path(args.results) / "validation" / datetime.now().strftime("%Y%m%d-%H%M%S"))
    command = "python -m pipeline.validate" + (" " + shlex.join(argv) if argv else "")
    print_table(checks, title=f"validation ({'scale ' + str(args.scale) if args.scale else 'default scale'})")
    path = write_report(out_dir, checks, cases, command, args.scale, wall, args.results)
    print(summary_line(checks, len(cases), wall)
          + (f" ({len(cases) - n_run} reused from earlier runs of this code version)"
             if n_run < len(cases) else ""))
    for line in kind_lines(checks):  # a calibration met is no prediction: counted apart
        print(f"  {line}")
    print(f"report: {path}")
    n = counts(checks)
    for c in checks:
        if c.state == "failed" and not c.ref.derived:
            print(f"failed: {c.ref.id}: {c.reason}", file=sys.stderr)
    return EXIT_FAILED if n["fail"] or n["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
