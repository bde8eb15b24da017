"""fio.json as fio writes it (stat.c show_thread_status_json): a job file of two jobs
gets one jobs[] entry each; the latency buckets and iodepth_level are fio's."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.fio_json import iodepth_level, latency_buckets
from tests.pipeline.test_fio_jobfile import run_job_file

TWO = """[global]
ioengine=libaio
direct=1
filename=/dev/sda
runtime=100ms
time_based
size=1g

[reader]
rw=randread
iodepth=4

[writer]
rw=randwrite
ioengine=psync
offset=2g
lat_percentiles=1

[after]
stonewall
rw=read
runtime=50ms
"""


def test_a_two_job_file_gets_one_jobs_entry_per_job(tmp_path, capfd):
    row, run = run_job_file(tmp_path, capfd, TWO, "two.fio")
    doc = json.loads((run / "_details" / "fio.json").read_text())
    assert row["workload.type"] == "fio_jobs"
    assert [(j["jobname"], j["groupid"]) for j in doc["jobs"]] == [
        ("reader", 0), ("writer", 0), ("after", 1)]
    r, w, after = doc["jobs"]
    assert r["read"]["iops"] == row["fio.job0.read_iops"] > 0
    assert w["write"]["iops"] == row["fio.job1.write_iops"] > 0
    assert after["read"]["iops"] == row["fio.job2.read_iops"] > 0
    # after the stonewall: the first two jobs' 100 ms and the reaping of their I/Os in
    # flight (the reader's four, the writer's psync call), ms
    assert after["job_start"] - r["job_start"] == 107
    assert r["job options"]["iodepth"] == "4" and w["job options"]["ioengine"] == "psync"
    for j in doc["jobs"]:
        assert (j["usr_cpu"], j["sys_cpu"]) == (0.0, 0.0)     # CPU is not modelled
        assert sum(j["iodepth_level"].values()) == pytest.approx(100)
        shares = [v for k in ("latency_ns", "latency_us", "latency_ms")
                  for v in j[k].values()]
        assert sum(shares) == pytest.approx(100, abs=0.05)
    # QD4 with libaio: every I/O submitted with 4 in flight once the queue is full, the
    # first three with 1, 2 and 3 (fio counts the job's first fill too)
    n = r["read"]["total_ios"]
    assert [r["iodepth_level"][k] for k in ("1", "2", "4")] == pytest.approx(
        [100 / n, 200 / n, 100 * (n - 3) / n])
    assert w["iodepth_level"]["1"] == 100.0                   # psync: one at a time
    # clat percentiles by default; lat_ns with lat_percentiles=1; slat has no samples
    # for psync, one per I/O for libaio (its submission time is 0)
    assert "percentile" in r["read"]["clat_ns"] and "percentile" not in r["read"]["lat_ns"]
    assert "percentile" in w["write"]["lat_ns"]
    assert r["read"]["slat_ns"]["N"] == r["read"]["total_ios"] and w["write"]["slat_ns"]["N"] == 0
    assert "percentile" not in r["write"]["clat_ns"]            # no samples, as fio


def test_latency_buckets_are_fios_with_their_edges():
    ns = np.array([1, 3, 999, 1_000, 1_999, 2_000, 999_999, 1_000_000, 1_999_999, 2_000_000,
                   2_000_000_000, 5_000_000_000], dtype=np.int64)
    b = latency_buckets(ns)
    pct = 100 / 12
    assert b["latency_ns"]["2"] == pytest.approx(pct)       # [0, 2) ns
    assert b["latency_ns"]["4"] == pytest.approx(pct)       # [2, 4)
    assert b["latency_ns"]["1000"] == pytest.approx(pct)    # [750, 1000)
    assert b["latency_us"]["2"] == pytest.approx(2 * pct)   # [1, 2) us
    assert b["latency_us"]["4"] == pytest.approx(pct)
    assert b["latency_us"]["1000"] == pytest.approx(pct)
    assert b["latency_ms"]["2"] == pytest.approx(2 * pct)   # [1, 2) ms
    assert b["latency_ms"]["4"] == pytest.approx(pct)
    assert b["latency_ms"][">=2000"] == pytest.approx(2 * pct)
    assert list(b["latency_ms"]) == ["2", "4", "10", "20", "50", "100", "250", "500", "750",
                                     "1000", "2000", ">=2000"]
    # a bucket with any I/O shows at least 0.01 (fio's stat_calc_lat)
    many = np.concatenate([np.full(100_000, 500), [5_000]]).astype(np.int64)
    assert latency_buckets(many)["latency_us"]["10"] == 0.01


def test_iodepth_level_buckets_depths_as_fio():
    # depth 1: 10 I/Os, 3: 20 (bucket "2"), 5: 30 ("4"), 64: 40 (">=64")
    counts = [0] * 65
    counts[1], counts[3], counts[5], counts[64] = 10, 20, 30, 40
    lv = iodepth_level(counts)
    assert lv == {"1": 10.0, "2": 20.0, "4": 30.0, "8": 0.0, "16": 0.0, "32": 0.0,
                  ">=64": 40.0}
    assert iodepth_level([0, 0, 0, 0, 50])["4"] == 100.0


def test_slat_is_the_time_an_io_submit_slept_and_lat_is_clat_plus_slat():
    """An io_submit that sleeps for a tag (``tests/models/workload/test_fio_slat.py``):
    fio.json's slat_ns has those waits, clat_ns the times from the call's return, and
    lat_ns the sum, I/O by I/O."""
    from pipeline.fio_json import job_entry
    from tests.models.workload.test_fio_slat import _run

    job, res = _run()
    entry = job_entry(job, "starved", {"lat_percentiles": 1, "slat_percentiles": 1})
    r = entry["read"]
    assert (r["slat_ns"]["N"], r["clat_ns"]["N"], r["lat_ns"]["N"]) == (8, 8, 8)
    assert r["slat_ns"]["mean"] == pytest.approx(res["read_slat_mean_ms"] * 1e6)
    assert r["clat_ns"]["mean"] == pytest.approx(res["read_clat_mean_ms"] * 1e6)
    assert r["lat_ns"]["mean"] == pytest.approx(r["clat_ns"]["mean"] + r["slat_ns"]["mean"])
    assert r["lat_ns"]["max"] == 3_000_000 and r["slat_ns"]["max"] == 1_000_000
    assert r["slat_ns"]["percentile"]["50.000000"] == 1_000_000
