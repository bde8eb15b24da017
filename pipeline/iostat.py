"""``python -m pipeline.iostat``: a run's per-device statistics as ``iostat -x`` prints them.

    python -m pipeline.iostat --experiment myisam_nr_requests            # every run
    python -m pipeline.iostat --run 3f2a --old -m                        # one run, 2.6-era columns

For each selected run: with a detail table ``iostat`` (the run had ``results.details=
true``; one row per device every ``results.sample_ms``) one report per interval, as
``iostat -x INTERVAL`` prints them; without it one report over the run's measured
window (the summary's ``iostat.<dev>.*`` columns), as ``iostat -x`` over that window.

Two column sets, the two generations of sysstat:

- default, sysstat >= 12: ``r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s wrqm/s
  %wrqm w_await wareq-sz d/s dkB/s drqm/s %drqm d_await dareq-sz f/s f_await aqu-sz
  %util`` (discards are not modelled: the ``d`` columns are zero);
- ``--old``, sysstat <= 11 (RHEL 5/6, the published experiments): ``rrqm/s wrqm/s r/s
  w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await w_await svctm %util``.

``-m`` prints MB/s instead of kB/s, as ``iostat -m``. Result columns map to printed
ones by ``COLUMNS`` (``rMB_s`` is ``rMB/s``, ``avgqu_sz`` is both ``avgqu-sz`` and
``aqu-sz``, ``util_pct`` is ``%util``).
"""
from __future__ import annotations

import argparse
import re
import sys

from .errors import EXIT_CONFIG

# printed header -> result column (None: not modelled, printed as 0.00)
NEW = ("r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s",
       "%wrqm", "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await",
       "dareq-sz", "f/s", "f_await", "aqu-sz", "%util")
OLD = ("rrqm/s", "wrqm/s", "r/s", "w/s", "rkB/s", "wkB/s", "avgrq-sz", "avgqu-sz", "await",
       "r_await", "w_await", "svctm", "%util")
COLUMNS = {"r/s": "r_s", "w/s": "w_s", "f/s": "f_s", "rkB/s": "rkB_s", "wkB/s": "wkB_s",
           "rMB/s": "rMB_s", "wMB/s": "wMB_s", "rrqm/s": "rrqm_s", "wrqm/s": "wrqm_s",
           "%rrqm": "rrqm_pct", "%wrqm": "wrqm_pct", "r_await": "r_await_ms",
           "w_await": "w_await_ms", "f_await": "f_await_ms", "await": "await_ms",
           "rareq-sz": "rareq_sz", "wareq-sz": "wareq_sz", "avgrq-sz": "avgrq_sz",
           "avgqu-sz": "avgqu_sz", "aqu-sz": "avgqu_sz", "svctm": "svctm_ms",
           "%util": "util_pct", "d/s": None, "dkB/s": None, "drqm/s": None, "%drqm": None,
           "d_await": None, "dareq-sz": None}


class IostatError(ValueError):
    pass


def headers(old: bool = False, mb: bool = False) -> tuple[str, ...]:
    cols = OLD if old else NEW
    return tuple(c.replace("kB/s", "MB/s") if mb else c for c in cols)


def format_report(rows: list[tuple[str, dict]], old: bool = False, mb: bool = False) -> str:
    """One ``iostat -x`` report: ``rows`` = (device, {result column: value})."""
    hdr = headers(old, mb)
    width = max([8] + [len(h) + 1 for h in hdr])
    dev_w = max([12] + [len(d) + 1 for d, _ in rows])
    out = [("Device:" if old else "Device").ljust(dev_w) + "".join(h.rjust(width) for h in hdr)]
    for dev, vals in rows:
        cells = []
        for h in hdr:
            col = COLUMNS[h]
            v = vals.get(col) if col is not None else 0.0
            cells.append(f"{(v or 0.0):.2f}".rjust(width))
        out.append(dev.ljust(dev_w) + "".join(cells))
    return "\n".join(out)


def _runs(con, experiment: str | None, run: str | None) -> list[tuple[str, str]]:
    from .query import run_sql

    where, p = ["TRUE"], {}
    if experiment:
        where.append("experiment = $experiment")
        p["experiment"] = experiment
    if run:
        where.append("starts_with(config_hash, $run)")
        p["run"] = run
    res = run_sql(con, "SELECT DISTINCT experiment, config_hash FROM runs WHERE "
                  + " AND ".join(where) + " ORDER BY 1, 2", p)
    if not res.rows:
        what = " and ".join(x for x in (f"experiment {experiment!r}" if experiment else "",
                                       f"run {run!r}" if run else "") if x)
        raise IostatError(f"no runs of {what or 'any experiment'} in the results")
    return res.rows


def has_iostat_table(con) -> bool:
    """Whether the results hold an ``iostat`` detail table (asked once per invocation)."""
    return "iostat" in {r[0] for r in con.execute("SHOW TABLES").fetchall()}


def reports(con, experiment: str, config_hash: str, detailed: bool | None = None
            ) -> list[tuple[str, list[tuple[str, dict]]]]:
    """(title, rows) per interval of one run: its ``iostat`` detail table, else its
    summary columns. ``detailed``: whether the detail table exists (``has_iostat_table``;
    asked here when not given)."""
    from .query import columns, quote, run_sql

    p = {"e": experiment, "h": config_hash}
    if has_iostat_table(con) if detailed is None else detailed:
        res = run_sql(con, "SELECT * FROM iostat WHERE experiment = $e AND run = $h "
                           "ORDER BY t_s, device", p)
        if res.rows:
            out: dict = {}
            for r in res.rows:
                d = dict(zip(res.columns, r))
                out.setdefault(d["t_s"], []).append((d["device"], d))
            return [(f"t = {t:.3f} s", rows) for t, rows in out.items()]
    cols = [c for c in columns(con) if c.startswith("iostat.")]
    res = run_sql(con, f"SELECT {', '.join(quote(c) for c in cols)} FROM runs "
                       "WHERE experiment = $e AND config_hash = $h LIMIT 1", p)
    vals = dict(zip(res.columns, res.rows[0]))
    devs: dict = {}
    for c, v in vals.items():
        m = re.fullmatch(r"iostat\.([^.]+)\.(.+)", c)
        if m and v is not None:
            devs.setdefault(m.group(1), {})[m.group(2)] = v
    return [("over the measured window", sorted(devs.items()))] if devs else []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.iostat",
                                 description="Print runs' per-device statistics as iostat -x does.")
    ap.add_argument("--dir", "--results", dest="dir", default="outputs",
                    help="results root (default: outputs)")
    ap.add_argument("--experiment", help="only runs of this experiment")
    ap.add_argument("--run", help="only the run whose config hash starts with this")
    ap.add_argument("--old", action="store_true", help="sysstat <= 11 columns (avgrq-sz, svctm)")
    ap.add_argument("-m", dest="mb", action="store_true", help="MB/s instead of kB/s")
    args = ap.parse_args(argv)
    from .query import QueryError, connect

    try:
        con = connect(args.dir)
        detailed = has_iostat_table(con)
        for experiment, h in _runs(con, args.experiment, args.run):
            for title, rows in reports(con, experiment, h, detailed):
                print(f"{experiment} run {h}, {title}")
                print(format_report(rows, args.old, args.mb))
                print()
    except (QueryError, IostatError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return EXIT_CONFIG
    except BrokenPipeError:          # | head: stop quietly, as iostat does
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
