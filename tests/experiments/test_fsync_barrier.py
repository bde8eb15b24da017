"""xfs on the X25-E through the pipeline (experiment=fsync_barrier): barriers flush the
drive cache twice per fsync (published ~50/s, met by the calibrated FLUSH cost,
``flush_metadata_pages``); nobarrier runs at the drive's write rate (published ~5,300/s)."""
import pytest

from tests.experiments.helpers import run_point


def test_barrier_flushes_twice_per_fsync_nobarrier_never():
    b = run_point("fsync_barrier", "fs.nobarrier=false", "workload.count=60")
    n = run_point("fsync_barrier", "fs.nobarrier=true", "workload.count=600")
    assert b["fsstat.sda.flushes"] == 120 and n["fsstat.sda.flushes"] == 0
    assert b["fsync_bench.syncs_per_s"] == pytest.approx(50, rel=0.25)
    assert n["fsync_bench.syncs_per_s"] == pytest.approx(5300, rel=0.25)
