"""``hydra/sweeper=pipeline``: Hydra's basic sweeper (cartesian product of
``key=a,b`` overrides and ``hydra.sweeper.params``), all jobs in one batch, writing
nothing itself.

The basic sweeper saves ``multirun.yaml`` into ``hydra.sweep.dir`` before the first
job is even composed; here a sweep with a bad job leaves no file behind. The launcher
validates every job before running any, and each result row carries every resolved
parameter, so the sweep's own config file is not needed.

The sweep's size is checked before it is expanded: ``run.seed=range(0,100000000)``
would otherwise build a hundred million job lists before anything else happens. More
than ``MAX_JOBS`` jobs, or a sweep kind that cannot be listed (``interval(0,1)``, for
optimising sweepers), is a one-line error naming the key.
"""

import math
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


MAX_JOBS = 10_000


def _count(override) -> int:
    """Number of values a sweep override takes, without listing them."""
    from pipeline.errors import ConfigError

    key = override.get_key_element()
    if not override.is_sweep_override():
        return 1
    if override.is_range_sweep():
        r = override.value()
        if r.step == 0:
            raise ConfigError(key, "range() step must not be 0")
        n = (r.stop - r.start) / r.step
        return max(0, math.ceil(n)) if math.isfinite(n) else MAX_JOBS + 1
    from hydra.core.override_parser.types import ValueType

    if override.value_type == ValueType.GLOB_CHOICE_SWEEP:   # bounded by a group's options
        return len(list(override.sweep_string_iterator()))
    if override.is_choice_sweep():
        return len(override.value().list)
    kind = override.value_type.name.lower().replace("_sweep", "")
    raise ConfigError(key, f"{kind}() sweeps cannot be listed; give the values (a,b,c) or "
                      "range(start,stop,step)")


def check_size(overrides) -> int:
    """The number of jobs the overrides make (``ConfigError`` past ``MAX_JOBS``)."""
    from pipeline.errors import ConfigError

    last = {}
    for o in overrides:
        last[o.get_key_element()] = o
    total = 1
    for key, o in last.items():
        n = _count(o)
        if n == 0:
            raise ConfigError(key, "the sweep has no values")
        total *= n
        if total > MAX_JOBS:
            raise ConfigError(key, f"the sweep would have more than {MAX_JOBS} jobs; "
                              "split it into several commands")
    return total


class PipelineSweeper(BasicSweeper):
    def __init__(self, params: Optional[Dict[str, str]] = None) -> None:
        super().__init__(max_batch_size=None, params=params)

    def sweep(self, arguments: List[str]) -> Any:
        assert self.config is not None and self.launcher is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides(self._parse_config() + list(arguments))
        check_size(overrides)
        self.overrides = self.split_arguments(overrides, None)
        returns = []
        initial_job_idx = 0
        while not self.is_done():
            batch = self.get_job_batch()
            results = self.launcher.launch(batch, initial_job_idx=initial_job_idx)
            initial_job_idx += len(batch)
            returns.append(results)
        return returns
