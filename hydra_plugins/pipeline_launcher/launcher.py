"""A Hydra launcher that validates a whole sweep, then runs it on Ray or serially.

``python -m pipeline.run -m ...`` hands every job's overrides to ``launch`` at once
(the sweeper's ``max_batch_size`` is null). The launcher

1. composes each job's config and validates it into a ``RunSpec`` (including a trial
   build of the model stack) - a bad job stops the sweep before any job runs and
   before anything is written;
2. runs the specs through ``pipeline.fanout`` (one Ray task per run, or serially with
   ``hydra/launcher=serial`` / ``hydra.launcher.ray.enabled=false``), with a progress
   display;
3. writes each result on the driver as it arrives and prints the DuckDB summary.

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


@dataclass
class PipelineLauncherConf:
    _target_: str = "hydra_plugins.pipeline_launcher.launcher.PipelineLauncher"
    ray: RayConfig = field(default_factory=RayConfig)


ConfigStore.instance().store(group="hydra/launcher", name="ray", node=PipelineLauncherConf,
                             provider="pipeline")
ConfigStore.instance().store(group="hydra/launcher", name="serial",
                             node=PipelineLauncherConf(ray=RayConfig(enabled=False)),
                             provider="pipeline")


class PipelineLauncher(Launcher):
    def __init__(self, ray: "DictConfig | RayConfig | None" = None) -> None:
        if ray is None:
            ray = RayConfig()
        elif not isinstance(ray, RayConfig):
            ray = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(RayConfig), ray))
        self.ray_cfg: RayConfig = ray
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
        from pipeline.spec import prepare
        from pipeline.sweep import experiment_name, run_specs
        from pipeline.version import code_version

        version = code_version()
        jobs, specs = [], []
        for overrides, cfg in self.job_configs(job_overrides, initial_job_idx):
            HydraConfig.instance().set_config(cfg)
            specs.append(prepare(cfg, experiment_name(cfg.hydra), version))
            jobs.append((overrides, cfg))

        label = f"{specs[0].experiment}: " if specs else ""
        outputs = run_specs(specs, self.ray_cfg,
                            label=f"{label}{'ray' if self.ray_cfg.enabled else 'serial'} sweep")
        returns = []
        for (overrides, cfg), out in zip(jobs, outputs):
            ret = JobReturn(overrides=overrides, cfg=cfg, hydra_cfg=cfg,
                            status=JobStatus.COMPLETED)
            ret.return_value = out.status
            returns.append(ret)
        return returns
