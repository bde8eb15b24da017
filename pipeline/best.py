"""``python -m pipeline.query best``: which configuration is best, and by how much.

A configuration is the set of parameter values that vary among the selected runs of
one experiment (``run.seed`` excluded: runs that differ only in seed are one
configuration, and the table gives their mean, standard deviation and count). Columns:

- ``rank``, ``config`` (``bs=16k iodepth_batch_submit=64``), ``mean``, ``std``
  (sample standard deviation over seeds; empty for one run), ``n`` (runs);
- ``x_baseline``: how many times better than the baseline configuration, ``x_worst``:
  than the worst; both are ratios of means, above 1 when better (higher-is-better
  metrics: mean / other; lower-is-better: other / mean);
- ``margin_pct``: how much better than the next one down, in percent;
- ``example_run``: the config hash of one of its runs (to look at its details).

Per dollar: when the runs carry ``storage.cost_usd`` (the list price of the devices
their files are on: ``price_usd`` of each device config) and the metric is
higher-is-better, a second table ranks ``metric / storage.cost_usd`` the same way
(``rank(..., per_usd=True)``).

The baseline is ``--baseline 'param=value ...'`` (parameter names in full, or after
their section when that is unique: ``bs=16k``), else the experiment's first
configuration: the first value of each parameter its YAML sweeps
(``conf/experiment/NAME.yaml``, ``hydra.sweeper.params``: ``nr_requests=128`` before
``100000``), else the configuration whose parameter values sort first (among those matching the
swept first values, when several do: a config-group choice such as ``engine`` is no
column).

The direction comes from the metric's name (``direction``): rates and throughputs
(``MB_s``, ``iops``, ``tps``, ``notpm``, ``*_per_s``, iostat ``r_s`` / ``w_s``) are
higher-is-better; times and latencies (``*_ms``, ``*_us``, ``*_ns``, ``scan_s``,
``await``, ``lat``, ``demerit``) lower-is-better; ``--asc`` / ``--desc`` say it
explicitly, and a metric the name does not decide needs one of them.

Runs that cannot be compared are never ranked together: runs at different
``run.scale``, of different code versions, or made with different ad-hoc overrides
(``run.overrides``: the keys a command line set beyond the experiment's sweep, e.g.
``device.sda.queue_depth``) are refused with one line unless ``--by`` groups by them
(``--by run.scale``); then each group is ranked on its own. ``--where``
(SQL over any column) selects runs first.
"""
from __future__ import annotations

import re
from pathlib import Path

from .columns import is_param

CONF = Path(__file__).resolve().parent.parent / "conf"
# a metric name -> "higher" | "lower" is better (rates first: ``MB_s`` is no time)
_HIGHER = re.compile(r"(MB_s|kB_s|iops|\.tps$|notpm|tpmc|qps|_per_s$|\.[rw]_s$|"
                     r"[rw]rqm_s|speedup|hit_rate)", re.I)
_LOWER = re.compile(r"(_ms$|_us$|_ns$|_seconds$|scan_s$|lat_|await|demerit|stall|"
                    r"_over_\d+ms$|avgqu_sz|util_pct)", re.I)
# columns whose runs are never ranked together
SEPARATE = ("run.scale", "code_version", "run.overrides")
COST = "storage.cost_usd"    # the list price of the devices a run's files are on


def per_usd_applies(con, experiment: str, metric: str, order: str | None = None) -> bool:
    """Whether ``best`` also ranks ``metric`` per dollar: a higher-is-better metric, and
    runs of the experiment that cost something."""
    from .query import columns, run_sql

    better = {"asc": "lower", "desc": "higher", None: direction(metric)}[order]
    if better != "higher" or COST not in columns(con):
        return False
    return bool(run_sql(con, f"SELECT count(*) FROM runs WHERE experiment = $experiment AND "
                             f"status = 'ok' AND {_quote(COST)} > 0",
                        {"experiment": experiment}).rows[0][0])


class BestError(ValueError):
    pass


def direction(metric: str) -> str | None:
    """``"higher"`` or ``"lower"`` is better, from the metric's name; None if unknown."""
    if _HIGHER.search(metric):
        return "higher"
    if _LOWER.search(metric):
        return "lower"
    return None


def _quote(col: str) -> str:
    return '"' + col.replace('"', '""') + '"'


def _literal(v: str) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def _resolve(col: str, cols: list[str], what: str) -> str:
    """A column by its full name, or by its name after the section (``bs`` ->
    ``workload.bs``) when that is unique among the parameter columns."""
    if col in cols:
        return col
    hits = [c for c in cols if is_param(c) and c.split(".", 1)[1] == col]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise BestError(f"{what}: {col!r} is ambiguous ({', '.join(hits)})")
    import difflib

    close = difflib.get_close_matches(col, cols, n=1)
    raise BestError(f"{what}: no column {col!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))


def _assignments(text: str, cols: list[str]) -> dict[str, str]:
    out = {}
    for item in text.split():
        if "=" not in item:
            raise BestError(f"--baseline: expected 'param=value ...', got {item!r}")
        k, v = item.split("=", 1)
        out[_resolve(k, cols, "--baseline")] = v
    if not out:
        raise BestError("--baseline: expected 'param=value ...', got nothing")
    return out


# --config-dir of pipeline.query / pipeline.report: a user's own experiments, searched
# after conf/experiment/ and conf/local/experiment/
CONFIG_DIRS: list[Path] = []


def experiment_yaml(experiment: str) -> dict:
    """``conf/experiment/<experiment>.yaml`` (or ``conf/local/``'s, or a
    ``--config-dir``'s) as plain values; empty for an ad-hoc sweep or an unreadable
    file (which only loses defaults: baseline, headline)."""
    found = [d / "experiment" / f"{experiment}.yaml"
             for d in (CONF, CONF / "local", *CONFIG_DIRS)]
    path = next((p for p in found if p.is_file()), None)
    if path is None:
        return {}
    from omegaconf import OmegaConf

    try:
        return OmegaConf.to_container(OmegaConf.load(path)) or {}
    except Exception:  # noqa: BLE001
        return {}


def sweeper_params(experiment: str) -> dict[str, str]:
    """The experiment YAML's ``hydra.sweeper.params`` (key -> values), in its order."""
    params = (experiment_yaml(experiment).get("hydra") or {}).get("sweeper", {}).get("params") or {}
    return {str(k): str(v) for k, v in params.items()}


def headline(experiment: str) -> list[str]:
    """The experiment YAML's ``meta.headline`` metric columns (names or globs)."""
    return [str(h) for h in (experiment_yaml(experiment).get("meta") or {}).get("headline") or []]


def sweep_firsts(experiment: str) -> dict[str, str]:
    """Column -> the first value the experiment's YAML sweeps it over (``case/X: a,b``
    is ``run.case``; config-group choices such as ``engine: a,b`` name no column)."""
    out = {}
    for key, values in sweeper_params(experiment).items():
        first = str(values).split(",")[0].strip()
        col = "run.case" if key.startswith("case/") else key
        if "." in col:
            out[col] = first
    return out


def rank(con, experiment: str, metric: str, order: str | None = None,
         baseline: str | None = None, where: str | None = None, by: str | None = None,
         per_usd: bool = False):
    """The ``best`` table as a ``query.Result``. ``order``: ``"asc"``, ``"desc"`` or None
    (from the metric's name). ``per_usd``: rank by the metric per dollar of the run's
    storage (``metric / storage.cost_usd``; runs that cost nothing are left out)."""
    from .query import columns, run_sql, varying_params

    cols = columns(con)
    if metric not in cols:
        import difflib

        close = difflib.get_close_matches(metric, cols, n=1)
        raise BestError(f"--metric: no column {metric!r} in the results"
                        + (f" (did you mean {close[0]!r}?)" if close else ""))
    better = {"asc": "lower", "desc": "higher", None: direction(metric)}[order]
    if better is None:
        raise BestError(f"--metric {metric}: cannot tell from its name whether higher or "
                        "lower is better; give --desc (higher) or --asc (lower)")
    sel = "experiment = $experiment AND status = 'ok'"
    if per_usd:
        if COST not in cols:
            raise BestError(f"no column {COST!r} in the results: no device of these runs "
                            "has a price_usd")
        sel += f" AND {_quote(COST)} > 0"
    if where:
        sel += f" AND ({where})"
    p = {"experiment": experiment}
    group = [_resolve(c.strip(), cols, "--by") for c in (by or "").split(",") if c.strip()]
    if not run_sql(con, f"SELECT count(*) FROM runs WHERE {sel}", p).rows[0][0]:
        raise BestError(f"no successful runs of {experiment!r}" + (f" where {where}" if where else ""))
    for col in SEPARATE:
        if col in cols and col not in group:
            # results written before run.overrides existed count as made without any
            vals = [r[0] for r in run_sql(con, f"SELECT DISTINCT coalesce(CAST({_quote(col)} "
                                               f"AS VARCHAR), '') FROM runs WHERE {sel} "
                                               "ORDER BY 1", p).rows]
            if len(vals) > 1 and col == "run.overrides":
                shown = "; ".join(v or "none" for v in vals[:4]) + ("; ..." if len(vals) > 4 else "")
                raise BestError(f"runs of {experiment!r} were made with {len(vals)} different "
                                f"sets of ad-hoc overrides ({shown}) and are not comparable: "
                                f"rank each with --by run.overrides, select one with --where, "
                                f"or keep an ad-hoc sweep apart with run.name=NAME")
            if len(vals) > 1:
                shown = ", ".join(str(v) for v in vals[:4]) + (", ..." if len(vals) > 4 else "")
                raise BestError(f"runs of {experiment!r} have {len(vals)} values of {col} "
                                f"({shown}) and are not comparable: select one with "
                                f"--where '{_quote(col)} = ...' or rank each with --by {col}")
    vary = [c for c in varying_params(con, sel, p) if c not in group and c not in SEPARATE]

    if baseline:
        base = _assignments(baseline, cols)
    else:
        base = {c: v for c, v in sweep_firsts(experiment).items() if c in vary}
    base_pred = " AND ".join(f"CAST({_quote(c)} AS VARCHAR) = {_literal(v)}"
                             for c, v in base.items()) or "FALSE"
    label = (" || ' ' || ".join(f"'{c.split('.', 1)[1]}=' || coalesce(CAST({_quote(c)} AS "
                                f"VARCHAR), 'null')" for c in vary) or "'(one configuration)'")
    gsel = "".join(f"{_quote(c)}, " for c in group)
    part = ("PARTITION BY " + ", ".join(_quote(c) for c in group)) if group else ""
    # the baseline is the first configuration listed: matches first, then by values
    listing = ", ".join(["is_base DESC"] + [f"{_quote(c)} ASC NULLS LAST" for c in vary]
                        + ["config"])
    ratio = ("{a} / nullif({b}, 0)" if better == "higher" else "{b} / nullif({a}, 0)")
    m = _quote(metric) if not per_usd else f"({_quote(metric)} / {_quote(COST)})"
    sql = f"""
WITH configs AS (
    SELECT {gsel}{''.join(f'{_quote(c)}, ' for c in vary)}{label} AS config,
           avg({m}) AS mean, stddev_samp({m}) AS std, count(*) AS n,
           min(config_hash) AS example_run,
           bool_or({base_pred}) AS is_base
    FROM runs WHERE {sel} GROUP BY ALL
), ranked AS (
    SELECT *,
           row_number() OVER ({part} ORDER BY mean {'DESC' if better == 'higher' else 'ASC'}
                              NULLS LAST, config) AS rank,
           row_number() OVER ({part} ORDER BY {listing}) AS listing,
           count(CASE WHEN is_base THEN 1 END) OVER ({part}) AS base_n
    FROM configs
), scored AS (
    SELECT *,
           first(CASE WHEN listing = 1 THEN mean END IGNORE NULLS) OVER w AS base_mean,
           last(mean) OVER w AS worst_mean,
           lead(mean) OVER ({part} ORDER BY rank) AS next_mean
    FROM ranked
    WINDOW w AS ({part} ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
)
SELECT {gsel}rank, config, mean, std, n,
       {ratio.format(a='mean', b='base_mean')} AS x_baseline,
       {ratio.format(a='mean', b='worst_mean')} AS x_worst,
       100.0 * ({ratio.format(a='mean', b='next_mean')} - 1) AS margin_pct,
       example_run, base_n
FROM scored ORDER BY {gsel}rank"""
    res = run_sql(con, sql, p)
    bi = res.columns.index("base_n")
    if baseline:
        counts = {r[bi] for r in res.rows}
        if counts == {0}:
            raise BestError(f"--baseline {baseline!r}: no configuration matches")
        if max(counts) > 1:
            raise BestError(f"--baseline {baseline!r}: matches several configurations; "
                            "name more parameters")
    res.columns = res.columns[:bi]
    res.rows = [r[:bi] for r in res.rows]
    res.optional_from = res.columns.index("example_run")   # left out first when narrow
    return res
