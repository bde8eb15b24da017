"""Run one point of an experiment from its composed config, in-process (no Ray, no
files): ``run_point("group_commit", "workload.concurrency=30")`` -> metric columns.

Runs are memoised for the whole test session by configuration (``RunSpec.config_hash``):
a test asking for a configuration that another test - or a published-figure check
(``tests/experiments/published.py``) - already ran gets that run's metrics again
(a copy) instead of simulating it twice."""
from __future__ import annotations

from pipeline.build import simulate
from pipeline.spec import validate
from tests.pipeline.helpers import CONF

_RUNS: dict[tuple[str, str, bool], tuple[dict, dict]] = {}


def compose(experiment: str, *overrides: str):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.schema import register

    register()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            return hydra_compose("config", overrides=[f"experiment={experiment}", *overrides])
    finally:
        GlobalHydra.instance().clear()


def run_spec(spec, details: bool = False):
    """The summary metrics (and detail tables if ``details``) of one validated spec,
    simulated once per session per configuration (``simulate`` raises what a trial
    build would)."""
    key = (spec.experiment, spec.config_hash, bool(spec.results.details))
    if key not in _RUNS:
        res = simulate(spec)
        _RUNS[key] = (res.summary, res.details)
    summary, tables = _RUNS[key]
    return (dict(summary), tables) if details else dict(summary)


def run_point(experiment: str, *overrides: str, details: bool = False):
    """The summary metrics (and detail tables if ``details``) of one run of
    ``experiment`` with ``overrides`` (memoised, see ``run_spec``)."""
    return run_spec(validate(compose(experiment, *overrides), experiment), details)
