"""Structured-config schemas registered in Hydra's ConfigStore.

The root schema (``base_config``, named first in ``conf/config.yaml``'s defaults) types
every top-level key, so Hydra rejects an unknown key or a wrong type while composing,
naming the key. Sections whose model config class is fixed use that frozen dataclass
directly (``block: BlockConfig``, ``fs: FsConfig``, ``page_cache: PageCacheConfig``,
``cpu: CPUConfig``); sections that hold one of several model types
(``device.<name>``, ``engine``, ``workload``) are mappings with a ``type``
discriminator and are checked against the registered model's dataclass in
``pipeline.spec`` / ``pipeline.coerce`` (same rules: unknown keys, types, the model's
own range checks). ``placement`` maps file classes to device names.

OmegaConf marks nodes made from frozen dataclasses read-only; Hydra must merge YAML
and command-line values into them, so the flag is cleared on the stored node. The
model's ``__post_init__`` still runs when ``pipeline.spec`` builds the dataclass.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from omegaconf import DictConfig, ListConfig, OmegaConf

from models.block import BlockConfig
from models.checks import MAX_SECONDS, above, at_least, at_most
from models.engine.cpu import CPUConfig
from models.fs import FsConfig, PageCacheConfig
from models.linux import KernelConfig

from .columns import is_param


@dataclass(frozen=True)
class RunConfig:
    """How one run is driven (``conf/run/``).

    - ``seed``: root of the run's ``numpy.random.SeedSequence``; each component gets a
      child stream keyed by its name.
    - ``scale``: shrinks what each workload model scales (a table and its buffer pool,
      call counts, file sizes, query counts, MyISAM's inserting time:
      ``pipeline.scaling``) so tests run in seconds; the page cache, device sizes,
      raw-device fio jobs and trace replays are not scaled. Below an experiment's
      ``meta.min_scale`` its published effect no longer holds.
    - ``duration_s``: upper bound on simulated seconds; 0 = until the workload ends.
    - ``case``: the name of a case of an experiment whose runs are a list of cases
      rather than a grid (set by ``conf/case/<experiment>/<case>.yaml``); a label for
      queries (``GROUP BY "run.case"``) that changes nothing in the simulation.
    - ``name``: the name results are kept under (``outputs/experiment=<name>/``, the
      ``experiment`` column) instead of the ``experiment=`` choice, or ``default`` when
      there is none: an ad-hoc sweep gets a name of its own. No parameter: not a
      column, not in the config hash.
    """

    seed: int = 0
    scale: float = 1.0
    duration_s: float = 0.0
    case: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise ValueError(f"seed: must be >= 0, got {self.seed}")
        if not 0 < self.scale <= 1:
            raise ValueError(f"scale: must be in (0, 1], got {self.scale}")
        at_least(self, 0, "duration_s")
        at_most(self, MAX_SECONDS, "duration_s")
        if self.name and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", self.name):
            raise ValueError(f"name: letters, digits, '_', '.', '-' (a directory name), "
                             f"got {self.name!r}")


@dataclass(frozen=True)
class ResultsConfig:
    """Where and what a run writes (not a simulation parameter: not in the config hash).

    - ``dir``: root of the hive-partitioned result tree.
    - ``details``: also write detail tables (``iostat`` time series) beside the summary.
    - ``sample_ms``: interval of the detail time series, simulated milliseconds.
    - ``summary``: print the DuckDB summary table after a run or sweep.
    - ``max_wall_s``: wall-clock budget of each run (real seconds, default one day; 0 =
      none). A run that exceeds it ends as ``status=failed``, ``error_type``
      ``WallBudgetExceeded``, instead of running until killed. A limit of the machine,
      not of the simulated system: no column, not in the config hash.
    """

    dir: str = "outputs"
    details: bool = False
    sample_ms: float = 1000.0
    summary: bool = True
    max_wall_s: float = 86400.0

    def __post_init__(self) -> None:
        if not self.dir:
            raise ValueError("dir: must not be empty")
        above(self, 0, "sample_ms")
        at_most(self, MAX_SECONDS * 1e3, "sample_ms")
        at_least(self, 0, "max_wall_s")
        at_most(self, MAX_SECONDS, "max_wall_s")


@dataclass(frozen=True)
class MetaConfig:
    """What an experiment declares about itself (``meta:`` in ``conf/experiment/*.yaml``;
    not a simulation parameter: no column, not in the config hash).

    - ``min_scale``: the smallest ``run.scale`` at which the experiment's published
      effect still holds (measured, see the YAML's comment). A run below it is valid
      but says nothing about the published figure: its row has
      ``run.below_valid_scale = true``, a run or sweep prints one line saying so, and
      ``pipeline.validate`` does not compare it. 0 (the default): any scale is valid
      (ad-hoc runs, experiments without a published effect, raw-device jobs that
      ignore ``run.scale``).
    - ``headline``: the metric columns that answer the experiment's question
      (``full_scan.scan_s``, ``mysqlslap.tps``; ``*`` globs, ``sfr_stall.sfr_lat_p99_ms``):
      the end-of-sweep table shows them first, after the parameters that vary.
    """

    min_scale: float = 0.0
    headline: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        at_least(self, 0, "min_scale")
        at_most(self, 1, "min_scale")
        for i, name in enumerate(self.headline):
            if not isinstance(name, str) or not name or is_param(name):
                raise ValueError(f"headline[{i}]: must name a metric column (not a "
                                 f"parameter), got {name!r}")


@dataclass
class RootConfig:
    """Top level of a composed config (everything except ``hydra``).

    ``kernel`` (``models/linux.py``) fills in the block and fs keys left null.
    ``fs`` and ``page_cache`` matter when a file of the run is placed on a device
    (``placement``): a workload that works on files, or an engine; ``cpu`` when an
    ``engine`` is configured. ``engine`` is empty (``engine: null`` in the defaults) for
    workloads that drive a block device or a filesystem themselves."""

    run: RunConfig = field(default_factory=RunConfig)
    results: ResultsConfig = field(default_factory=ResultsConfig)
    meta: MetaConfig = field(default_factory=MetaConfig)
    device: Dict[str, Any] = field(default_factory=dict)
    kernel: KernelConfig = field(default_factory=KernelConfig)
    block: BlockConfig = field(default_factory=BlockConfig)
    # the kernel-dependent keys left null: the kernel's defaults (models/linux.py)
    fs: FsConfig = field(default_factory=lambda: FsConfig(stable_pages=None, sfr_write_waits=None))
    page_cache: PageCacheConfig = field(default_factory=PageCacheConfig)
    placement: Dict[str, Any] = field(default_factory=dict)
    engine: Dict[str, Any] = field(default_factory=dict)
    cpu: CPUConfig = field(default_factory=CPUConfig)
    workload: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RayConfig:
    """``hydra.launcher.ray`` - how the runs of a sweep are executed."""

    enabled: bool = True
    address: Optional[str] = None          # null: $RAY_ADDRESS if set, else a local Ray
    num_cpus: Optional[int] = None         # local Ray only; null = all cores
    object_store_memory_mb: int = 128      # local Ray only
    include_dashboard: bool = False
    ship_code: bool = True                 # cluster only: py_modules = models, pipeline
    runtime_env: Dict[str, Any] = field(default_factory=dict)
    max_retries: int = 0                   # Ray task retries after a worker crash


# Top-level sections that are settings of the pipeline or declarations of an
# experiment, not of the simulated system.
NOT_PARAMETERS = ("results", "meta")


def writable(node: Any) -> Any:
    """Clear the read-only flag OmegaConf sets on nodes of frozen dataclasses."""
    if isinstance(node, (DictConfig, ListConfig)):
        OmegaConf.set_readonly(node, None)
        children = node.keys() if isinstance(node, DictConfig) else range(len(node))
        for k in children:
            writable(node._get_node(k))
    return node


def structured(cls: type) -> DictConfig:
    """A writable structured node of ``cls`` (merge target for validation)."""
    return writable(OmegaConf.structured(cls))


_registered = False


def register() -> None:
    """Store the root schema as ``base_config`` (idempotent)."""
    global _registered
    if _registered:
        return
    from hydra.core.config_store import ConfigStore

    node = structured(RootConfig)
    # device.<name>.<field>, engine.<field>, workload.<field> and placement.<class> may
    # be set from the command line without '+': these entries hold only what their YAML
    # sets (a preset's other fields are not in the tree), and pipeline.spec rejects keys
    # the model does not have.
    for key in ("device", "engine", "workload", "placement"):
        OmegaConf.set_struct(node._get_node(key), False)
    ConfigStore.instance().store(name="base_config", node=node)
    _registered = True
