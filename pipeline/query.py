"""Query results with DuckDB: ad-hoc SQL or named queries (``pipeline/queries/*.sql``).

Views available to every query:

- ``runs``: every summary row, ``read_parquet('<dir>/**/summary.parquet',
  hive_partitioning=true, union_by_name=true)`` (hive columns ``experiment``, ``run``);
- one view per detail table found (``iostat`` time series, ...), same options.

Column names are dotted and need double quotes in SQL: ``"iostat.sda.r_s"``,
``"workload.bs"``. Parameter columns start with a config section (``run.``,
``device.``, ``block.``, ``workload.``); metrics do not (``iostat.``, ``devstat.``,
``fio.``).

Named queries take ``--experiment``/``--metric``/``--param k=v``: a ``$name`` in the
SQL is a bound value; ``{{name}}`` is text the tool fills in (``{{metric}}`` as a quoted
column, ``{{config_cols}}`` as the experiment's varying parameter columns).

    python -m pipeline.query "SELECT count(*) FROM runs"
    python -m pipeline.query best --experiment aio_batch --metric iostat.sda.rMB_s
    python -m pipeline.query usl --experiment sysbench_threads --x workload.threads \
        --metric sysbench.tps
    python -m pipeline.query aio_batch --csv e1.csv
    python -m pipeline.query --list
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import best
from .best import BestError
from .columns import is_param
from .errors import EXIT_CONFIG, ConfigError, OneLineParser, check_output_file
from .usl import UslError

QUERIES = Path(__file__).resolve().parent / "queries"
RUN_COLUMNS = ("experiment", "config_hash", "code_version", "seed", "status", "error",
               "sim_seconds", "wall_seconds", "events_processed")
HEADLINE = re.compile(r"^(?:[a-z_]+\.(?:MB_s|iops|tps|notpm|syncs_per_s|rows_per_s|scan_s)|"
                      r"iostat\.[^.]+\.(?:r_s|w_s|rMB_s|wMB_s|avgrq_sz|await_ms|util_pct))$")


class QueryError(RuntimeError):
    pass


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple]
    key: int = 0                       # leading columns that name a row (repeated if split)
    optional_from: int | None = None   # columns from here on may be left out when narrow


# -- connection and views ---------------------------------------------------------------
def _glob(root: Path, table: str) -> str:
    return (root / "**" / f"{table}.parquet").as_posix().replace("'", "''")


def connect(root: str | Path = "outputs") -> duckdb.DuckDBPyConnection:
    root = Path(root)
    if not any(root.glob("**/summary.parquet")):
        raise QueryError(f"no results under {root}/ (run python -m pipeline.run first)")
    con = duckdb.connect()
    tables = {p.stem for p in root.glob("**/*.parquet")}
    for t in sorted(tables):
        view = "runs" if t == "summary" else t
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", view):
            continue
        con.execute(f"CREATE VIEW {view} AS SELECT * FROM read_parquet('{_glob(root, t)}', "
                    "hive_partitioning=true, union_by_name=true)")
    return con


def quote(col: str) -> str:
    return '"' + col.replace('"', '""') + '"'


def columns(con, view: str = "runs") -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]


def varying_params(con, where: str = "TRUE", params: dict | None = None,
                   skip: tuple[str, ...] = ("run.seed",)) -> list[str]:
    """Parameter columns that take more than one value among the selected runs."""
    cols = [c for c in columns(con) if is_param(c) and c not in skip]
    if not cols:
        return []
    # min <> max is count(DISTINCT) > 1 (NULLs ignored alike) at a fraction of the cost:
    # an experiment over a 12-drive array has ~600 parameter columns, and 600 distinct
    # aggregates take DuckDB tens of seconds even over a handful of rows.
    varies = con.execute("SELECT " + ", ".join(
        f"min({quote(c)}) IS DISTINCT FROM max({quote(c)})" for c in cols)
        + f" FROM runs WHERE {where}", params or {}).fetchone()
    return [c for c, v in zip(cols, varies) if v]


def experiment_hint(name: str, known: list[str]) -> str:
    """`` (did you mean 'aio_batch'?)`` / `` (experiments with results: a, b)`` for an
    experiment ``name`` that has no runs; empty if it has some (none matched)."""
    import difflib

    if name in known:
        return ""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (experiments with results: {', '.join(known)})" if known else ""


# -- named queries ---------------------------------------------------------------------------
def named_queries() -> dict[str, Path]:
    return {p.stem: p for p in sorted(QUERIES.glob("*.sql"))}


def _describe_query(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("--"):
            return line.lstrip("-").strip()
    return ""


def render(sql: str, fills: dict[str, str]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(1)
        if name not in fills:
            raise QueryError(f"query needs --{name.replace('_', '-')}")
        return fills[name]
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", sub, sql)


def run_sql(con, sql: str, params: dict | None = None) -> Result:
    used = set(re.findall(r"\$([A-Za-z_]\w*)", sql))
    bound = {k: v for k, v in (params or {}).items() if k in used}
    missing = used - set(bound)
    if missing:
        raise QueryError(f"query needs --param {sorted(missing)[0]}=VALUE")
    try:
        rel = con.execute(sql, bound) if bound else con.execute(sql)
        cols = [d[0] for d in rel.description] if rel.description else []
        return Result(cols, rel.fetchall() if cols else [])
    except duckdb.Error as ex:
        raise QueryError(duckdb_message(ex)) from None


def duckdb_message(ex: Exception) -> str:
    """DuckDB's error in one line: its first line, with its ``Candidate bindings:`` hint
    (the columns closest to a misspelt one) kept."""
    lines = [ln.strip() for ln in str(ex).splitlines() if ln.strip()]
    hint = next((ln for ln in lines[1:] if ln.startswith("Candidate bindings:")), None)
    return lines[0] + (f" ({hint})" if hint else "") if lines else str(ex)


def named(con, name: str, experiment: str | None = None, metric: str | None = None,
          ascending: bool = False, params: dict | None = None) -> tuple[str, dict]:
    """The SQL text and bound values of named query ``name``."""
    queries = named_queries()
    if name not in queries:
        raise QueryError(f"unknown query {name!r} (named: {', '.join(queries)})")
    sql = queries[name].read_text()
    params = dict(params or {})
    fills: dict[str, str] = {"order": "ASC" if ascending else "DESC"}
    if experiment is not None:
        params["experiment"] = experiment
    if metric is not None:
        if metric not in columns(con):
            raise QueryError(f"no column {metric!r} in the results")
        fills["metric"] = quote(metric)
    if re.search(r"\{\{\s*config_(cols|label)\s*\}\}", sql):
        if experiment is None:
            raise QueryError(f"query {name!r} needs --experiment")
        vary = varying_params(con, "experiment = $experiment AND status = 'ok'",
                              {"experiment": experiment})
        fills["config_cols"] = ", ".join(quote(c) for c in vary) or "'(one configuration)' AS config"
        fills["config_label"] = (" || ' ' || ".join(
            f"'{c.split('.', 1)[1]}=' || coalesce(CAST({quote(c)} AS VARCHAR), 'null')"
            for c in vary) or "'(one configuration)'")
    return render(sql, fills), params


# -- the table printed after a run or sweep -------------------------------------------------
def sweep_summary(root, hashes, headline=(), prefer=()) -> Result:
    """``pipeline.summary.sweep_summary`` (the end-of-sweep table's rows)."""
    from .summary import sweep_summary as summary

    return summary(root, hashes, headline, prefer)


# -- output ------------------------------------------------------------------------------------
def print_table(res: Result, out=None, title: str | None = None, width: int | None = None) -> None:
    """``res`` as a table that fits the terminal (``pipeline.table``)."""
    from .table import print_table as show

    show(res.columns, res.rows, out=out, title=title, key=res.key,
         optional_from=res.optional_from, width=width)


def export(con, sql: str, params: dict, path: str, fmt: str) -> None:
    opts = "FORMAT csv, HEADER true" if fmt == "csv" else "FORMAT parquet"
    target = path.replace("'", "''")
    inner = sql.strip().rstrip(";")
    try:
        con.execute(f"COPY ({inner}) TO '{target}' ({opts})", params or {})
    except duckdb.Error as ex:
        raise QueryError(str(ex).splitlines()[0]) from None


# -- command line ----------------------------------------------------------------------------
def check_where(con, experiment: str, where: str | None) -> None:
    """``ConfigError("--where", ...)`` if ``where`` is not SQL DuckDB can run over the
    experiment's ok runs (a column that does not exist, a syntax error, a value of the
    wrong type): the error names the option, as ``pipeline.report --where`` does,
    instead of surfacing from deep inside ``best`` or ``usl``."""
    if not where:
        return
    try:
        con.execute(f"SELECT count(*) FROM runs WHERE experiment = $experiment AND "
                    f"status = 'ok' AND ({where})", {"experiment": experiment}).fetchall()
    except duckdb.Error as ex:
        raise ConfigError("--where", duckdb_message(ex)) from None


def check_export_path(path: str, opt: str) -> None:
    """``ConfigError(opt, ...)`` unless ``path`` can be written: its directory must exist
    (a query does not create directories; a typo in one is caught before the query runs)."""
    parent = Path(path).expanduser().absolute().parent
    if not os.path.lexists(parent):
        raise ConfigError(opt, f"directory {str(parent)!r} does not exist")
    check_output_file(path, opt)


def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m pipeline.query",
        description="Run SQL or a named query over all results with DuckDB and print a table.")
    ap.add_argument("query", nargs="?", help="SQL text, or the name of a query in pipeline/queries/")
    ap.add_argument("--dir", "--results", dest="dir", default="outputs",
                    help="results root (default: outputs)")
    ap.add_argument("--experiment", help="experiment name ($experiment in named queries)")
    ap.add_argument("--metric", help="metric column to rank by (best), the throughput (usl)")
    ap.add_argument("--x", metavar="COLUMN",
                    help="usl: the concurrency column (workload.threads, or threads)")
    ap.add_argument("--asc", action="store_true", help="best: lower is better (latency); "
                    "default from the metric's name")
    ap.add_argument("--desc", action="store_true", help="best: higher is better (throughput)")
    ap.add_argument("--baseline", metavar="'PARAM=VALUE ...'",
                    help="best: the configuration the x_baseline ratio is to "
                         "(default: the experiment's first)")
    ap.add_argument("--where", metavar="SQL", help="best, usl: select runs (any column)")
    ap.add_argument("--by", metavar="COL[,COL]", help="best: rank within each group")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="bind $NAME in the query")
    ap.add_argument("--csv", metavar="FILE", help="also write the result as CSV")
    ap.add_argument("--parquet", metavar="FILE", help="also write the result as Parquet")
    ap.add_argument("--config-dir", action="append", default=[], metavar="DIR",
                    help="best: where your own experiment's YAML is (its sweep's first "
                         "values are the default baseline)")
    ap.add_argument("--list", action="store_true", help="list the named queries")
    ap.add_argument("--show-sql", action="store_true", help="print the SQL that is run")
    return ap


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as ex:   # --help (0), a mistake (2, one line printed)
        return ex.code if isinstance(ex.code, int) else EXIT_CONFIG
    if args.list or args.query is None:
        print(f"{'best':14s} which configuration of --experiment is best by --metric, and by "
              "how much (mean/std/n over seeds, x_baseline, x_worst, margin_pct)")
        print(f"{'usl':14s} the Universal Scalability Law fitted to --metric vs --x of "
              "--experiment (lambda, sigma, kappa, peak N* and X(N*))")
        for name, path in named_queries().items():
            print(f"{name:14s} {_describe_query(path)}")
        return 0 if args.list else EXIT_CONFIG
    try:
        if not args.query.strip():
            raise QueryError("the query is empty: give SQL text or the name of a query (--list)")
        for opt, path in (("--csv", args.csv), ("--parquet", args.parquet)):
            if path is not None:   # before the table is printed
                check_export_path(path, opt)
        for d in args.config_dir:
            if not Path(d).is_dir():
                raise ConfigError("--config-dir", f"{d!r} is not a directory")
        best.CONFIG_DIRS[:] = [Path(d) for d in args.config_dir]
        params = {}
        for kv in args.param:
            if "=" not in kv:
                raise QueryError(f"--param {kv!r}: expected NAME=VALUE")
            k, v = kv.split("=", 1)
            params[k] = v
        con = connect(args.dir)
        if args.experiment is not None:
            known = [r[0] for r in con.execute("SELECT DISTINCT experiment FROM runs "
                                               "ORDER BY 1").fetchall()]
            if args.experiment not in known:
                raise QueryError(f"--experiment: no runs of experiment {args.experiment!r} under "
                                 f"{args.dir}/" + experiment_hint(args.experiment, known))
        best_opts = [o for o, v in (("--desc", args.desc), ("--baseline", args.baseline),
                                    ("--where", args.where), ("--by", args.by)) if v]
        if args.query.strip() == "usl":
            return _usl(con, args, [o for o in best_opts if o != "--where"])
        if args.x is not None:
            raise QueryError("--x: only for the usl query")
        if args.query.strip() == "best":
            return _best(con, args)
        if best_opts:
            raise QueryError(f"{best_opts[0]}: only for the best query")
        if re.fullmatch(r"[A-Za-z_]\w*", args.query.strip()):
            sql, params = named(con, args.query.strip(), args.experiment, args.metric,
                                args.asc, params)
        else:
            sql = args.query
            if args.experiment is not None:
                params["experiment"] = args.experiment
        wanted = set(re.findall(r"\$([A-Za-z_]\w*)", sql))
        for kv in args.param:
            name = kv.split("=", 1)[0]
            if name not in wanted:
                raise QueryError(f"--param {name}: the query has no ${name} "
                                 f"(its parameters: {', '.join(sorted(wanted)) or 'none'})")
        if args.show_sql:
            print(sql, file=sys.stderr)
        res = run_sql(con, sql, params)
        print_table(res)
        used = {k: v for k, v in params.items() if f"${k}" in sql}
        if args.csv:
            export(con, sql, used, args.csv, "csv")
        if args.parquet:
            export(con, sql, used, args.parquet, "parquet")
    except (QueryError, ConfigError, BestError, UslError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return EXIT_CONFIG
    return 0


def _usl(con, args, refused: list[str]) -> int:
    """``usl``: the USL fit per configuration (``pipeline.usl``), then the points."""
    from . import usl

    if refused:
        raise QueryError(f"{refused[0]}: not for the usl query")
    for opt, val in (("--experiment", args.experiment), ("--x", args.x),
                     ("--metric", args.metric)):
        if val is None:
            raise QueryError(f"usl needs {opt}")
    check_where(con, args.experiment, args.where)
    series = usl.fit_runs(con, args.experiment, args.x, args.metric, args.where)
    fits = usl.fit_table(series)
    print_table(usl.shown(fits), title=f"{args.experiment}: {args.metric} vs {args.x}, Universal "
                            "Scalability Law X(N) = lambda*N / (1 + sigma*(N-1) + "
                            "kappa*N*(N-1)), peak at N* = sqrt((1-sigma)/kappa)")
    print()
    print_table(usl.points_table(series), title="points and the fitted curve")
    for opt, path, fmt in (("--csv", args.csv, "csv"), ("--parquet", args.parquet, "parquet")):
        if path:
            import pyarrow as pa
            import pyarrow.csv as pacsv
            import pyarrow.parquet as papq

            table = pa.table({c: [r[i] for r in fits.rows] for i, c in enumerate(fits.columns)})
            (pacsv.write_csv if fmt == "csv" else papq.write_table)(table, path)
    return 0


def _best(con, args) -> int:
    """``best``: pipeline.best's ranking, printed (and exported)."""
    if args.experiment is None:
        raise QueryError("best needs --experiment")
    if args.metric is None:
        raise QueryError("best needs --metric (the column to rank by)")
    if args.asc and args.desc:
        raise QueryError("--asc and --desc: give one")
    order = "asc" if args.asc else "desc" if args.desc else None
    check_where(con, args.experiment, args.where)
    res = best.rank(con, args.experiment, args.metric, order, args.baseline, args.where, args.by)
    print_table(res, title=f"{args.experiment}: {args.metric}")
    if best.per_usd_applies(con, args.experiment, args.metric, order):
        per = best.rank(con, args.experiment, args.metric, order, args.baseline, args.where,
                        args.by, per_usd=True)
        print_table(per, title=f"{args.experiment}: {args.metric} per USD ({best.COST})")
    for opt, path, fmt in (("--csv", args.csv, "csv"), ("--parquet", args.parquet, "parquet")):
        if path:
            import pyarrow as pa
            import pyarrow.csv as pacsv
            import pyarrow.parquet as papq

            table = pa.table({c: [r[i] for r in res.rows] for i, c in enumerate(res.columns)})
            (pacsv.write_csv if fmt == "csv" else papq.write_table)(table, path)
    return 0


if __name__ == "__main__":
    # ``python -m pipeline.query`` runs this file as ``__main__``, a second copy of the
    # module: the QueryError that best/usl raise (``pipeline.query.QueryError``) would
    # not be the ``__main__.QueryError`` that main() catches, and would escape as a
    # traceback. Run main() of the one module everything else imports.
    from pipeline.query import main as _main

    sys.exit(_main())
