"""Run every test against a numba cache keyed by the model sources (see
pipeline/numba_cache.py): stale compiled kernels can never leak into a test run."""
from pipeline.numba_cache import configure

configure()
