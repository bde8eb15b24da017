"""Shared fixtures of the pipeline tests: one Ray session for the whole test run,
composing configs with Hydra's compose API."""
from __future__ import annotations

import pytest

from .helpers import CONF


@pytest.fixture(scope="session")
def ray_session():
    """A local Ray started once (start-up costs seconds); the launcher reuses it."""
    ray = pytest.importorskip("ray")
    import logging

    started = False
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20,
                 log_to_driver=False, logging_level=logging.ERROR)
        started = True
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture
def compose():
    """``compose(*overrides)`` -> the full composed config (with its ``hydra`` node)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.schema import register

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        yield lambda *overrides: hydra_compose("config", overrides=list(overrides),
                                               return_hydra_config=True)
    GlobalHydra.instance().clear()
