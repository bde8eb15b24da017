"""How runs are named for people: by the parameters that vary among them
(``bs=16k iodepth_batch_submit=64``), not by their config hash.

- ``key_columns``: of the parameter columns that vary among some runs, the few that
  tell them apart - the swept ones first; a column whose value follows from the
  columns already kept (``workload.iodepth``, set to ``${workload.iodepth_batch_submit}``
  in ``aio_batch``; the many settings of one ``run.case``) is left out.
- ``short_names``: each column by its shortest dotted tail that is unique among them
  (``workload.bs`` -> ``bs``, ``device.sda.battery_backed`` -> ``battery_backed``).
- ``run_names``: one ``name=value ...`` string per run.
- ``ad_hoc_overrides``: the keys a command line set beyond the experiment's sweep (the
  ``run.overrides`` column), so that ``best`` never ranks such runs with the others.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from .columns import is_param

# columns derived from a run's spec that are labels, not parameters one sweeps
LABELS = ("run.below_valid_scale", "run.overrides")
# the column that names a config-group choice, preferred over the settings it implies
_CHOICE_TAILS = ("case", "type", "preset", "scheduler", "commit_protocol")


def value_text(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def varying(rows: Sequence[dict], cols: Iterable[str]) -> list[str]:
    """Parameter columns (labels and ``run.seed`` aside) with more than one value."""
    out = []
    for c in cols:
        if not is_param(c) or c in LABELS or c == "run.seed":
            continue
        if len({value_text(r.get(c)) for r in rows}) > 1:
            out.append(c)
    return out


def key_columns(rows: Sequence[dict], cols: Iterable[str], prefer: Iterable[str] = ()) -> list[str]:
    """The varying parameter columns that name the runs ``rows`` (dicts column -> value):
    ``prefer`` (the experiment's swept keys) first, then group choices
    (``run.case``, ``*.type``, ``block.scheduler``, ...), then the rest in column order;
    a column is kept only if the ones kept so far do not determine it."""
    vary = varying(rows, cols)
    chosen = []
    for p in prefer:    # a column, or a config group (``engine``): the column naming its choice
        p = "run.case" if p.startswith("case/") else p.rsplit("@", 1)[-1]
        hits = [p] if p in vary else sorted(
            (c for c in vary if c.startswith(p + ".")),
            key=lambda c: c.rsplit(".", 1)[-1] not in _CHOICE_TAILS)[:1]
        chosen += [c for c in hits if c not in chosen]
    prefer = chosen
    choice = [c for c in vary if c not in prefer and c.rsplit(".", 1)[-1] in _CHOICE_TAILS]
    order = prefer + choice + [c for c in vary if c not in prefer and c not in choice]
    kept: list[str] = []
    for c in order:
        seen: dict[tuple, str] = {}
        determined = True
        for r in rows:
            k = tuple(value_text(r.get(x)) for x in kept)
            v = value_text(r.get(c))
            if seen.setdefault(k, v) != v:
                determined = False
                break
        if not determined or not kept:
            kept.append(c)
    return kept if len(rows) > 1 else []


def short_names(cols: Sequence[str]) -> dict[str, str]:
    """Column -> its shortest dotted tail (after the section) unique among ``cols``."""
    out = {}
    for c in cols:
        parts = c.split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            if n == len(parts) or sum(1 for o in cols if o == tail or o.endswith("." + tail)) == 1:
                out[c] = tail
                break
    return out


def run_names(rows: Sequence[dict], cols: Sequence[str]) -> list[str]:
    """``name=value ...`` of each row over ``cols`` (``key_columns``); ``run`` when none."""
    short = short_names(cols)
    return [" ".join(f"{short[c]}={value_text(r.get(c))}" for c in cols) or "run" for r in rows]


def swept_keys(experiments: Iterable[str]) -> list[str]:
    """The keys the experiments' YAML sweeps (``hydra.sweeper.params``), in order."""
    from .best import sweeper_params

    return list(dict.fromkeys(k for e in dict.fromkeys(experiments) for k in sweeper_params(e)))


def spec_names(specs: Sequence) -> list[str]:
    """The name of each ``RunSpec`` of a sweep among the others (``run_names``). Runs of
    several experiments (``pipeline.validate``) are named among their own experiment's
    runs, after its name: ``aio_batch bs=16k``, not every column any experiment varies
    (``... insert_pattern=null background_iops=null ...``)."""
    experiments = list(dict.fromkeys(s.experiment for s in specs))
    if len(experiments) > 1:
        names = [""] * len(specs)
        for e in experiments:
            idx = [i for i, s in enumerate(specs) if s.experiment == e]
            for i, n in zip(idx, spec_names([specs[i] for i in idx])):
                names[i] = e if n == "run" else f"{e} {n}"
        return names
    rows = [s.params for s in specs]
    cols = list(dict.fromkeys(c for r in rows for c in r))
    prefer = swept_keys(experiments)
    return run_names(rows, key_columns(rows, cols, prefer))


# Overrides that change where or how a run is kept, not which configuration it is.
_NOT_AD_HOC = ("experiment", "run.seed", "run.scale", "run.name")


def ad_hoc_overrides(cfg) -> tuple[str, ...]:
    """The keys the command line set beyond the experiment's own sweep
    (``hydra.sweeper.params``), sorted: ``("device.sda.queue_depth",)`` for
    ``experiment=aio_batch device.sda.queue_depth=4``. Runs with different such keys
    answer different questions, and ``best`` never ranks them together. A key swept on
    the command line (``block=noop,deadline``) is one key for every run of the sweep.
    ``run.seed``, ``run.scale`` (kept apart on its own), ``run.name`` and ``results.*``
    are not counted."""
    from omegaconf import OmegaConf

    hydra_node = cfg.get("hydra") if "hydra" in cfg else None
    if hydra_node is None:
        try:
            from hydra.core.hydra_config import HydraConfig

            hydra_node = HydraConfig.get() if HydraConfig.initialized() else None
        except Exception:  # noqa: BLE001 - outside Hydra (tests, the API): none
            hydra_node = None
    if hydra_node is None:
        return ()
    task = OmegaConf.select(hydra_node, "overrides.task", default=None) or []
    swept = OmegaConf.select(hydra_node, "sweeper.params", default=None) or {}
    swept = {str(k).lstrip("+~") for k in swept}
    keys = set()
    for text in task:
        key = str(text).partition("=")[0].lstrip("+~")
        if "@" in key:            # device@device.hdd0=...: the package is the key
            key = key.split("@", 1)[1]
        if key in swept or key in _NOT_AD_HOC or key.startswith(("results.", "hydra", "meta.")):
            continue
        keys.add(key)
    return tuple(sorted(keys))
