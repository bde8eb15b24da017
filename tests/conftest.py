"""Run every test against a numba cache keyed by the model sources (see
pipeline/numba_cache.py): stale compiled kernels can never leak into a test run.

Under pytest-xdist (CI: ``-n auto --dist loadgroup``) tests that share state run on one
worker: the published figures and the tests that reuse their runs (marked
``xdist_group("published")``: tests/experiments/helpers.py memoises runs per process),
and tests/pipeline/, which start local Ray instances and look for the processes they
started, so they stay one at a time as in a plain run; the others spread over the
workers."""
import pytest

from pipeline.numba_cache import configure

configure()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue                     # set explicitly
        try:
            where = item.path.relative_to(config.rootpath).parts[:2]
        except ValueError:
            continue
        if where == ("tests", "pipeline"):
            item.add_marker(pytest.mark.xdist_group("pipeline"))
