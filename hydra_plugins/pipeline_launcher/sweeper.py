"""``hydra/sweeper=pipeline``: Hydra's basic sweeper (cartesian product of
``key=a,b`` overrides and ``hydra.sweeper.params``), all jobs in one batch, writing
nothing itself.

The basic sweeper saves ``multirun.yaml`` into ``hydra.sweep.dir`` before the first
job is even composed; here a sweep with a bad job leaves no file behind. The launcher
validates every job before running any, and each result row carries every resolved
parameter, so the sweep's own config file is not needed.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser


@dataclass
class PipelineSweeperConf:
    _target_: str = "hydra_plugins.pipeline_launcher.sweeper.PipelineSweeper"
    params: Optional[Dict[str, str]] = None


ConfigStore.instance().store(group="hydra/sweeper", name="pipeline", node=PipelineSweeperConf,
                             provider="pipeline")


class PipelineSweeper(BasicSweeper):
    def __init__(self, params: Optional[Dict[str, str]] = None) -> None:
        super().__init__(max_batch_size=None, params=params)

    def sweep(self, arguments: List[str]) -> Any:
        assert self.config is not None and self.launcher is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides(self._parse_config() + list(arguments))
        self.overrides = self.split_arguments(overrides, None)
        returns = []
        initial_job_idx = 0
        while not self.is_done():
            batch = self.get_job_batch()
            results = self.launcher.launch(batch, initial_job_idx=initial_job_idx)
            initial_job_idx += len(batch)
            returns.append(results)
        return returns
