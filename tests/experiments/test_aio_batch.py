"""E1 async-I/O submission (MySQL bug #68659) through the pipeline: batching 16 KB
reads 64 per io_submit lets the block layer merge them into fewer, larger requests. (The
published MB/s and r/s of every case: tests/experiments/test_published.py, on the same
runs.)"""
import pytest

from tests.experiments.helpers import run_point

pytestmark = pytest.mark.xdist_group("published")   # shares runs (tests/conftest.py)


def _point(bs: str, n: int) -> dict:
    # the published rows' cases exactly (shared with test_published.py's runs)
    return run_point("aio_batch", f"workload.bs={bs}", f"workload.iodepth_batch_submit={n}")


def test_batched_16k_submission_is_much_faster_than_single():
    single, batched = _point("16k", 1), _point("16k", 64)
    assert batched["iostat.sda.rMB_s"] > 5 * single["iostat.sda.rMB_s"]
    # the batch is merged by the block layer: fewer, larger requests than submitted
    assert batched["iostat.sda.rrqm_s"] > 10 * batched["iostat.sda.r_s"]
    assert single["iostat.sda.rrqm_s"] == 0
