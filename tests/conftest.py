"""Run every test against a numba cache keyed by the model sources (see
pipeline/numba_cache.py): stale compiled kernels can never leak into a test run."""
from pipeline.numba_cache import configure

configure()


import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _share_runs_between_xdist_workers(tmp_path_factory, request):
    """Under pytest-xdist (``-n``) the workers share memoised experiment runs
    (tests/experiments/helpers.py) through the session's base directory."""
    if hasattr(request.config, "workerinput"):
        from tests.experiments.helpers import share_runs

        share_runs(tmp_path_factory.getbasetemp().parent / "shared-runs")
