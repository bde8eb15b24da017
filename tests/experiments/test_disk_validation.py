"""The DiskSim validation replay through the pipeline (experiment=disk_validation): the
demerit columns and the per-request table, on the first requests of two drives."""
import numpy as np
import pytest

from pipeline.disksim import validate_drive
from tests.experiments.helpers import run_point


@pytest.mark.parametrize("drive", ["cheetah9LP", "ibm18es"])
def test_replay_matches_the_direct_replay_and_reports_the_demerit(drive):
    s, details = run_point("disk_validation", f"case/disk_validation={drive}",
                           "workload.number_ios=1500", details=True)
    ref = validate_drive(drive, 1500)     # pipeline.disksim: straight to the drive
    assert s["trace.requests"] == 1500
    assert s["trace.demerit_ms"] == pytest.approx(ref["demerit_ms"], rel=1e-9)
    assert s["trace.mean_sim_ms"] == pytest.approx(ref["mean_simulated_ms"], rel=1e-9)
    assert s["trace.mean_measured_ms"] == pytest.approx(ref["mean_measured_ms"], rel=1e-12)
    assert s["trace.disksim_demerit_ms"] == ref["disksim_demerit_ms"]
    assert s["trace.demerit_ms"] < 2 * s["trace.disksim_demerit_ms"]
    assert abs(s["trace.mean_error_rel"]) < 0.1
    req = details["requests"]
    assert len(req["measured_ns"]) == 1500
    assert np.array_equal(req["response_ns"] / 1e6, ref["simulated_ms"])
    assert s["iostat.sda.r_s"] + s["iostat.sda.w_s"] > 0      # through the block queue
