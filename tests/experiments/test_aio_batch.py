"""E1 async-I/O submission (MySQL bug #68659) through the pipeline: batching 16 KB
reads 64 per io_submit lets the block layer merge them into fewer, larger requests. (The
published MB/s and r/s of every case: tests/experiments/test_published.py, on the same
runs.)"""

from tests.experiments import published


def test_batched_16k_submission_is_much_faster_than_single():
    single = published.case_metrics("E1.aio.16k_x1.MB_s")
    batched = published.case_metrics("E1.aio.16k_x64.MB_s")
    assert batched["iostat.sda.rMB_s"] > 5 * single["iostat.sda.rMB_s"]
    # the batch is merged by the block layer: fewer, larger requests than submitted
    assert batched["iostat.sda.rrqm_s"] > 10 * batched["iostat.sda.r_s"]
    assert single["iostat.sda.rrqm_s"] == 0
