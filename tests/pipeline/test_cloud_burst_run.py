"""The burst of a gp2 volume ending in a run's iostat time series (issue 19):
``python -m pipeline.run workload=fio_randread device@device.sda=cloud_gp2_500g ...``
with a bucket that empties in 4 s (a full one lasts an hour at burst)."""
from __future__ import annotations

import pytest

import pipeline.version
from pipeline import query
from pipeline.run import main


def test_gp2_burst_ends_in_the_iostat_series(tmp_path):
    root = tmp_path / "out"
    mp = pytest.MonkeyPatch()
    mp.setattr(pipeline.version, "code_version", lambda: "test:v1")
    try:
        assert main([f"results.dir={root}", "hydra/launcher=serial", "results.summary=false",
                     "workload=fio_randread", "device@device.sda=cloud_gp2_500g",
                     "device.sda.burst_credits_initial=6000", "workload.iodepth=16",
                     "workload.runtime_s=8", "results.details=true",
                     "results.sample_ms=1000"]) == 0
    finally:
        mp.undo()
    rows = query.run_sql(query.connect(root), "SELECT t_s, r_s FROM iostat ORDER BY t_s").rows
    r_s = {round(t): v for t, v in rows}
    # 500 GiB gp2: baseline 1,500 IOPS, burst 3,000; 6,000 credits / 1,500 = 4 s
    for t in (1, 2, 3, 4):
        assert r_s[t] == pytest.approx(3000, rel=0.02), (t, r_s)
    for t in (6, 7, 8):
        assert r_s[t] == pytest.approx(1500, rel=0.02), (t, r_s)
