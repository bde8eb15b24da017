"""The table printed at the end of a run or sweep (``pipeline.fanout.sweep``).

The runs just made, named by the parameters that vary among them
(``pipeline.naming.key_columns``: the experiment's swept keys first, a parameter that
follows from the others left out), then the experiment's headline metrics
(``meta.headline``), ``status`` when a run failed, then the other common metrics
(``pipeline.query.HEADLINE``) and ``wall_seconds`` while they fit the width
(``pipeline.table``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .columns import is_param
from .query import (HEADLINE, RUN_COLUMNS, Result, columns, connect, print_table, quote,
                    run_sql, varying_params)


def sweep_summary(root: str | Path, hashes: list[str], headline: Sequence[str] = (),
                  prefer: Sequence[str] = ()) -> Result:
    """The runs ``hashes``, named by the parameters that vary among them
    (``naming.key_columns``, swept keys ``prefer`` first), then the experiments'
    headline metrics (``meta.headline``: names or ``*`` globs), ``status`` when a run
    failed, then the other common metrics (``HEADLINE``) and ``wall_seconds``.
    ``Result.key`` columns name a run; the table may leave out what follows
    ``Result.optional_from`` when the terminal is narrow. Metrics that are zero or null
    in every selected run are left out."""
    import fnmatch

    from .naming import key_columns, short_names

    con = connect(root)
    where = "config_hash IN (SELECT unnest($hashes))"
    p = {"hashes": list(hashes)}
    cols = columns(con)
    vary = varying_params(con, where, p, skip=())
    rel = con.execute(f"SELECT {', '.join(quote(c) for c in ['experiment', 'status'] + vary)} "
                      f"FROM runs WHERE {where}", p)
    names = [d[0] for d in rel.description]
    rows = [dict(zip(names, r)) for r in rel.fetchall()]
    keys = key_columns(rows, vary, prefer)
    several = len({r["experiment"] for r in rows}) > 1
    metrics = [c for c in cols if not is_param(c) and c not in RUN_COLUMNS and c not in ("run",)]
    head = list(dict.fromkeys(c for pat in headline for c in metrics if fnmatch.fnmatchcase(c, pat)))
    extra = [c for c in metrics if HEADLINE.match(c) and c not in head]
    if head + extra:  # drop metrics that are zero or null in every selected run
        nz = con.execute("SELECT " + ", ".join(f"bool_or(coalesce({quote(c)}, 0) <> 0)"
                                              for c in head + extra)
                         + f" FROM runs WHERE {where}", p).fetchone()
        keep = {c for c, k in zip(head + extra, nz) if k}
        head, extra = [c for c in head if c in keep], [c for c in extra if c in keep]
    failed = any(r["status"] != "ok" for r in rows)
    select = (["experiment"] if several else []) + keys + head + (["status"] if failed else [])
    order = ", ".join(quote(c) for c in (["experiment"] + keys)) or "config_hash"
    sql = (f"SELECT {', '.join(quote(c) for c in select + extra + ['wall_seconds'])} "
           f"FROM runs WHERE {where} ORDER BY {order}, config_hash")
    res = run_sql(con, sql, p)
    from .plots.common import sort_key   # sizes by magnitude: 4k before 16k

    n = len(keys) + several
    res.rows.sort(key=lambda r: tuple(sort_key(v) for v in r[:n]))
    short = short_names(keys)
    res.columns = [short.get(c, c) for c in res.columns]
    res.key = len(keys) + several
    res.optional_from = len(select)
    return res


def print_sweep_summary(specs: Sequence, out=None) -> None:
    """The end-of-sweep table of the runs ``specs`` (``sweep_summary``), titled with the
    experiment, where the results are and the ``run.scale``."""
    from .naming import swept_keys

    root = specs[0].results.dir
    hashes = sorted({s.config_hash for s in specs})
    headline = list(dict.fromkeys(h for s in specs for h in s.meta.headline))
    experiments = ", ".join(dict.fromkeys(s.experiment for s in specs))
    scales = ", ".join(f"{x:g}" for x in sorted({s.run.scale for s in specs}))
    res = sweep_summary(root, hashes, headline, swept_keys(s.experiment for s in specs))
    print_table(res, out=out, title=f"{experiments}: {len(hashes)} run(s) under {root}/ "
                                    f"at run.scale {scales}")
