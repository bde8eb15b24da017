"""A Hydra launcher that validates a whole sweep, then runs it on Ray or serially.

``python -m pipeline.run -m ...`` hands every job's overrides to ``launch`` at once
(the sweeper's ``max_batch_size`` is null). The launcher

1. checks its own settings (``hydra.launcher.ray.*``), composes each job's config and
   validates it into a ``RunSpec`` (including a trial build of the model stack) - a
   bad job stops the sweep before any job runs, before Ray starts and before
   anything is written;
2. with ``dry_run`` (``--dry-run``) stops there, saying how many runs would run and
   how many are done already;
3. else hands the specs to ``pipeline.fanout.sweep``: runs whose valid results exist
   are skipped unless ``rerun`` (``--rerun``), the others run as Ray tasks (retried
   ``ray.max_retries`` times if their worker dies; default 3 here) or serially with
   ``hydra/launcher=serial`` / ``hydra.launcher.ray.enabled=false``, each result is
   written on the driver as it arrives, and the DuckDB summary is printed.

Why not hydra-ray-launcher: it pickles Hydra's task function and its whole job
context to each worker and only returns when every job is done (``ray.get`` on the
lot), so there is no progress display, results cannot be written on the driver as
they arrive, and joining an existing cluster needs ``+`` keys and unsetting its
``object_store_memory`` default. The job model here is simpler - a worker gets a
picklable ``RunSpec`` and returns Arrow tables - and fits in one short module.
"""

from dataclasses import dataclass, field
from typing import Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.launcher import Launcher
from omegaconf import DictConfig, OmegaConf, open_dict

from pipeline.schema import RayConfig


# Ray re-runs a task whose worker process died this many times (not one that raised:
# a model's exception is a failed row at once).
WORKER_DEATH_RETRIES = 3


def _ray_defaults(**kw) -> RayConfig:
    return RayConfig(max_retries=WORKER_DEATH_RETRIES, **kw)


@dataclass
class PipelineLauncherConf:
    _target_: str = "hydra_plugins.pipeline_launcher.launcher.PipelineLauncher"
    ray: RayConfig = field(default_factory=_ray_defaults)
    rerun: bool = False      # run every job, even those whose valid results exist
    dry_run: bool = False    # validate every job, run none


ConfigStore.instance().store(group="hydra/launcher", name="ray", node=PipelineLauncherConf,
                             provider="pipeline")
ConfigStore.instance().store(group="hydra/launcher", name="serial",
                             node=PipelineLauncherConf(ray=_ray_defaults(enabled=False)),
                             provider="pipeline")


class PipelineLauncher(Launcher):
    def __init__(self, ray: "DictConfig | RayConfig | None" = None, rerun: bool = False,
                 dry_run: bool = False) -> None:
        if ray is None:
            ray = _ray_defaults()
        elif not isinstance(ray, RayConfig):
            ray = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(_ray_defaults()), ray))
        self.ray_cfg: RayConfig = ray
        self.rerun = bool(rerun)
        self.dry_run = bool(dry_run)
        self.config: "DictConfig | None" = None
        self.hydra_context = None
        self.task_function = None

    def setup(self, *, hydra_context, task_function, config: DictConfig) -> None:
        self.hydra_context = hydra_context
        self.task_function = task_function
        self.config = config

    def job_configs(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int):
        """Compose every job's config (Hydra's own per-job composition)."""
        loader = self.hydra_context.config_loader
        for i, overrides in enumerate(job_overrides):
            idx = initial_job_idx + i
            cfg = loader.load_sweep_config(self.config, list(overrides))
            with open_dict(cfg):
                cfg.hydra.job.id = f"{cfg.hydra.job.name}_{idx}"
                cfg.hydra.job.num = idx
            yield list(overrides), cfg

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from pipeline.fanout import check_ray_config, prepare_run, sweep
        from pipeline.progress import composing
        from pipeline.sweep import experiment_name
        from pipeline.version import code_version

        check_ray_config(self.ray_cfg)
        version = code_version()
        jobs, specs = [], []
        for overrides, cfg in composing(self.job_configs(job_overrides, initial_job_idx),
                                        len(job_overrides)):
            HydraConfig.instance().set_config(cfg)
            specs.append(prepare_run(cfg, experiment_name(cfg.hydra), version))
            jobs.append((overrides, cfg))

        label = f"{specs[0].experiment}: " if specs else ""
        if self.dry_run:
            outputs = dry_run(specs, self.rerun)
        else:
            outputs = sweep(specs, self.ray_cfg, rerun=self.rerun,
                            label=f"{label}{'ray' if self.ray_cfg.enabled else 'serial'} sweep")
        returns = []
        for (overrides, cfg), out in zip(jobs, outputs):
            ret = JobReturn(overrides=overrides, cfg=cfg, hydra_cfg=cfg,
                            status=JobStatus.COMPLETED)
            ret.return_value = out if isinstance(out, str) else ("skipped" if out is None else out.status)
            returns.append(ret)
        return returns


def dry_run(specs, rerun: bool, out=None) -> list[str]:
    """Say what a sweep would do; returns 'would run' / 'skipped' per spec."""
    import sys

    from pipeline import sink

    done: dict = {}
    for s in specs:
        key = (str(s.results.dir), s.experiment, s.config_hash)
        if key not in done:
            done[key] = not rerun and sink.completed(s.results.dir, s.experiment, s.config_hash,
                                                     s.code_version, want_details=s.results.details)
    n_done = sum(done.values())
    print(f"dry run: {len(specs)} job(s) valid, {len(done)} distinct run(s): {n_done} done "
          f"already, {len(done) - n_done} would run", file=out or sys.stdout)
    return ["skipped" if done[(str(s.results.dir), s.experiment, s.config_hash)] else "would run"
            for s in specs]
