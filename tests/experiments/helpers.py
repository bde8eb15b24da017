"""Run one point of an experiment from its composed config, in-process (no Ray, no
files): ``run_point("group_commit", "workload.concurrency=30")`` -> metric columns."""
from __future__ import annotations

from pipeline.build import simulate
from pipeline.spec import validate
from tests.pipeline.helpers import CONF


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


def run_point(experiment: str, *overrides: str, details: bool = False):
    """The summary metrics (and detail tables if ``details``) of one run (validated, then
    built once: ``simulate`` raises what a trial build would)."""
    spec = validate(compose(experiment, *overrides), experiment)
    res = simulate(spec)
    return (res.summary, res.details) if details else res.summary
