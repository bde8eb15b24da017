"""xfs on the X25-E through the pipeline (experiment=fsync_barrier): barriers flush the
drive cache twice per fsync (log PREFLUSH and the FUA turned into a post-flush);
nobarrier never flushes. (The published writes/s of both - ~50/s with barriers, met by
the calibrated FLUSH cost ``flush_metadata_pages``, and ~5,300/s with nobarrier -:
tests/experiments/test_published.py, on the same runs.)"""

from tests.experiments import published


def test_barrier_flushes_twice_per_fsync_nobarrier_never():
    b = published.case_metrics("E4.x25e.barrier")
    n = published.case_metrics("E4.x25e.nobarrier")
    assert b["fsync_bench.writes"] > 0 and n["fsync_bench.writes"] > 0
    assert b["fsstat.sda.flushes"] == 2 * b["fsync_bench.writes"]
    assert n["fsstat.sda.flushes"] == 0
