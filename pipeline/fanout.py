"""Run many ``RunSpec``s: on Ray (one task per run) or serially in this process.

Ray, by default, is an embedded local instance: ``ray.init`` with the dashboard off,
``num_cpus`` = the machine's cores and a modest object store (the results are a few KB
per run). With ``address`` (or the ``RAY_ADDRESS`` environment variable, or
``address=auto``) the runs go to an existing cluster instead; then no resource options
are passed (Ray refuses them when joining), and the project's ``models`` and
``pipeline`` packages are shipped to the workers (``runtime_env.py_modules``) unless
``ship_code`` is off.

Workers only simulate: each returns its Arrow tables to the driver, which writes them
(``pipeline.sink``), so a cluster needs no shared filesystem. ``enabled=false`` runs
the same function serially in-process - the way to debug a sweep.

A Ray session that was already initialised (a test's, a notebook's) is reused and left
running; one started here is shut down at the end.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Callable, Sequence

from .job import RunOutput, execute
from .progress import SweepProgress
from .schema import RayConfig
from .spec import RunSpec


def _address(cfg: RayConfig) -> str | None:
    return cfg.address or os.environ.get("RAY_ADDRESS") or None


def init_ray(cfg: RayConfig) -> bool:
    """Initialise Ray unless it already is; True if this call started it."""
    import ray

    if ray.is_initialized():
        return False
    address = _address(cfg)
    kw: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR,
                          "configure_logging": True}
    runtime_env = dict(cfg.runtime_env or {})
    if address:
        if cfg.ship_code and "py_modules" not in runtime_env:
            import models
            import pipeline

            runtime_env["py_modules"] = [models, pipeline]
        kw["address"] = address
    else:
        # address="local": always a new instance, never one left by `ray start`
        kw.update(address="local", include_dashboard=cfg.include_dashboard,
                  num_cpus=cfg.num_cpus or os.cpu_count() or 1,
                  object_store_memory=int(cfg.object_store_memory_mb) * 2**20)
    if runtime_env:
        kw["runtime_env"] = runtime_env
    ray.init(**kw)
    return True


def _failed(spec: RunSpec, error: str) -> RunOutput:
    """The row of a run whose worker died (no result came back)."""
    from .job import summary_table

    row = {"experiment": spec.experiment, "config_hash": spec.config_hash,
           "code_version": spec.code_version, "seed": spec.seed, "status": "failed",
           "error": error, "sim_seconds": 0.0, "wall_seconds": 0.0, "events_processed": 0}
    row.update(spec.params)
    return RunOutput(spec.experiment, spec.config_hash, "failed", {"summary": summary_table(row)}, 0.0)


def run_serial(specs: Sequence[RunSpec], on_result: Callable[[int, RunOutput], None],
               progress: SweepProgress) -> None:
    for i, spec in enumerate(specs):
        progress.set_running(1)
        out = execute(spec)
        progress.set_running(0)
        on_result(i, out)
        progress.finished(out.status == "ok", spec.config_hash, out.wall_seconds)


def run_ray(specs: Sequence[RunSpec], cfg: RayConfig,
            on_result: Callable[[int, RunOutput], None], progress: SweepProgress) -> None:
    import ray

    started = init_ray(cfg)
    try:
        remote = ray.remote(num_cpus=1, max_retries=cfg.max_retries)(execute)
        index = {}
        for i, spec in enumerate(specs):
            index[remote.remote(spec)] = i
        pending = list(index)
        slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        progress.set_running(min(slots, len(pending)))
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in ready:
                i = index[ref]
                try:
                    out = ray.get(ref)
                except Exception as ex:  # the worker died (OOM, killed node)
                    out = _failed(specs[i], f"{type(ex).__name__}: {str(ex).splitlines()[0]}")
                progress.set_running(min(slots, len(pending)))
                on_result(i, out)
                progress.finished(out.status == "ok", specs[i].config_hash, out.wall_seconds)
    finally:
        if started:
            ray.shutdown()


def run_all(specs: Sequence[RunSpec], cfg: RayConfig | None,
            on_result: Callable[[int, RunOutput], None], label: str = "sweep") -> None:
    """Execute every spec (Ray if ``cfg.enabled``), calling ``on_result`` as each ends."""
    with SweepProgress(len(specs), label) as progress:
        if cfg is not None and cfg.enabled:
            run_ray(specs, cfg, on_result, progress)
        else:
            run_serial(specs, on_result, progress)
