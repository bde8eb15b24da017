"""Each experiment's published effect holds AT its declared ``meta.min_scale`` (read from
its YAML, so the declaration is what is tested), and - where that is cheap - is lost
well below it, so the declaration means something. The declared scale is by
construction the cheapest valid one; the measurements behind each value are in the
YAML's comment and the README (run.scale)."""
from __future__ import annotations

import functools
import os

import pytest

from pipeline.spec import validate
from tests.experiments.helpers import compose, run_point


def min_scale(experiment: str) -> float:
    return validate(compose(experiment), experiment).min_scale


@functools.cache      # the linear scan at 0.25 serves the lra and lra_tuning tests
def at(experiment: str, scale: float, *overrides: str) -> dict:
    return run_point(experiment, *overrides, f"run.scale={scale}")


@pytest.mark.parametrize("experiment", ["aio_batch", "disk_validation"])
def test_raw_device_experiments_are_valid_at_any_scale(experiment):
    assert min_scale(experiment) == 0


def test_every_experiment_declares_a_min_scale_not_above_its_own_scale():
    from tests.pipeline.helpers import CONF

    for path in sorted((CONF / "experiment").glob("*.yaml")):
        spec = validate(compose(path.stem), path.stem)
        assert "min_scale:" in path.read_text(), path.stem
        assert spec.min_scale <= spec.run.scale, path.stem   # its default run is valid


# -- E4: xfs on the X25-E, barriers vs nobarrier -----------------------------------------------
def _barrier(scale):
    b = at("fsync_barrier", scale, "fs.nobarrier=false")["fsync_bench.syncs_per_s"]
    n = at("fsync_barrier", scale, "fs.nobarrier=true")["fsync_bench.syncs_per_s"]
    return b, n


def test_fsync_barrier_holds_at_min_scale_and_is_lost_below():
    s = min_scale("fsync_barrier")
    b, n = _barrier(s)
    assert n == pytest.approx(5300, rel=0.25) and b == pytest.approx(50, rel=0.25)
    _, n_low = _barrier(s / 3)
    assert n_low < 5300 * 0.75


# -- E4: ext3 append vs overwrite ---------------------------------------------------------------
def test_fsync_append_overwrite_holds_at_min_scale():
    s = min_scale("fsync_append_overwrite")
    a = at("fsync_append_overwrite", s, "case/fsync_append_overwrite=append", "fs=ext3")
    o = at("fsync_append_overwrite", s, "case/fsync_append_overwrite=overwrite", "fs=ext3")
    assert a["fsync_bench.syncs_per_s"] == pytest.approx(3085.94, rel=0.15)
    assert 2.8 < o["fsync_bench.syncs_per_s"] / a["fsync_bench.syncs_per_s"] < 4.0


# -- E2: group commit ---------------------------------------------------------------------------
def _group_commit(scale):
    common = ("engine.innodb_support_xa=true", "workload.concurrency=30",
              "device.sda.battery_backed=true")
    b = at("group_commit", scale, "engine=mysql51_builtin", *common)
    p = at("group_commit", scale, "engine=innodb_plugin_104", *common)
    return b, p


def test_group_commit_holds_at_min_scale_and_is_lost_below():
    s = min_scale("group_commit")
    b, p = _group_commit(s)
    assert b["mysqlslap.fsyncs_per_trx_redo"] == pytest.approx(2.0)
    assert p["mysqlslap.fsyncs_per_trx_redo"] < 0.5
    assert p["mysqlslap.tps"] / b["mysqlslap.tps"] == pytest.approx(6.1, rel=0.2)
    b, p = _group_commit(s / 4)
    assert p["mysqlslap.tps"] / b["mysqlslap.tps"] < 6.1 * 0.8


# -- E1: LRA speedup on the fragmented table ------------------------------------------------------
def _lra_speedup(scale):
    lin = at("lra", scale, "innodb_scan=linear", "workload.insert_pattern=user_object")
    lra = at("lra", scale, "innodb_scan=logical_aio64", "workload.insert_pattern=user_object")
    return lin["full_scan.scan_s"] / lra["full_scan.scan_s"]


def test_lra_speedup_holds_at_min_scale_and_is_lost_below():
    s = min_scale("lra")
    assert _lra_speedup(s) == pytest.approx(8.71, rel=0.15)
    assert _lra_speedup(s / 5) < 8.71 * 0.85


# -- E1 under load: the speedup grows with the load -----------------------------------------------
def test_lra_load_speedups_hold_at_min_scale():
    s = min_scale("lra_load")
    t = {(scan, iops): at("lra_load", s, f"innodb_scan={scan}",
                          f"workload.background_iops={iops}")["full_scan.scan_s"]
         for scan in ("linear", "logical_aio64") for iops in (500, 1500)}
    low = t["linear", 500] / t["logical_aio64", 500]
    high = t["linear", 1500] / t["logical_aio64", 1500]
    # within 10% of the speedups at run.scale 0.25 (13.5x, 22.9x), the largest measured
    assert low == pytest.approx(13.5, rel=0.1) and high == pytest.approx(22.9, rel=0.1)
    assert high > 1.5 * low         # the heavier the load, the larger the gain


# -- E6: the ext4 journal stall (the first stall to vanish when the run shrinks) -----------------
def _journal(scale, case="journal_stall_ext4"):
    return at("write_stalls", scale, f"case/write_stalls={case}")


def test_write_stalls_journal_stall_holds_at_min_scale_and_is_lost_below():
    s = min_scale("write_stalls")
    r = _journal(s)
    assert r["buffered_write.write_lat_p99_ms"] > 2.0
    assert r["buffered_write.write_lat_over_1ms"] > 10
    assert _journal(s, "journal_xfs")["buffered_write.write_lat_max_ms"] < 0.1   # the remedy
    # since jbd2's commit record (FUA) goes past cfq the journal fills faster: the stall
    # holds down to 0.7 (51 calls over 1 ms) and is gone at half the run
    assert _journal(s * 0.5)["buffered_write.write_lat_over_1ms"] == 0


# -- E5: nr_requests and MyISAM inserts ------------------------------------------------------------
def _e5(scale):
    r = {n: at("myisam_nr_requests", scale, "case/myisam_nr_requests=hdd",
               f"block.nr_requests={n}") for n in (128, 100000)}
    return r[100000]["myisam_insert.rows_per_s"] / r[128]["myisam_insert.rows_per_s"], r


# E5's effect at its min_scale (1, the published runs themselves) is checked in
# tests/experiments/test_e5_published.py, after those runs, on their shared results.
@pytest.mark.skipif(not os.environ.get("E5_FULL"), reason="two E5 runs of a 6 M-row table "
                    "(~40 s of one core) only to show the gain is gone at 0.05; E5_FULL=1 runs it")
def test_myisam_nr_requests_gain_is_lost_well_below_min_scale():
    assert min_scale("myisam_nr_requests") == 1
    gain, r = _e5(0.05)
    assert gain < 1.5
    assert r[100000]["iostat.sda.avgrq_sz"] == pytest.approx(35.2, rel=0.25)  # this one holds


# -- E1 LRA tuning: the published sizes sit on the plateau ----------------------------------------
def test_lra_tuning_plateau_and_speedup_hold_at_min_scale():
    s = min_scale("lra_tuning")
    t = {mb: at("lra_tuning", s, "workload.innodb_lra_sleep=0",
                f"workload.innodb_lra_size={mb}")["full_scan.scan_s"] for mb in (1024, 4096)}
    assert t[1024] == pytest.approx(t[4096], rel=0.15)
    linear = at("lra", s, "innodb_scan=linear",
                "workload.insert_pattern=user_object")["full_scan.scan_s"]
    assert linear / t[1024] == pytest.approx(678 / 54.4, rel=0.15)   # full size: 12.5x


# -- E1 physical warm-up: it helps when the table fits, less when it does not --------------------
def _warmup(scale):
    t = {(scan, bp): at("lra_warmup", scale, f"innodb_scan={scan}",
                        f"engine.innodb_buffer_pool_size={bp}")["full_scan.scan_s"]
         for scan, bp in (("linear", "16g"), ("physical", "8g"), ("physical", "16g"))}
    return t["physical", "16g"] / t["linear", "16g"], t["physical", "8g"] / t["physical", "16g"]


def test_lra_warmup_holds_at_min_scale_and_is_lost_below():
    fits, partial = _warmup(min_scale("lra_warmup"))
    assert fits == pytest.approx(0.065, rel=0.25)       # full size: 44.2 s / 676.6 s
    assert partial == pytest.approx(1.87, rel=0.25)     # full size: 82.4 s / 44.2 s
    assert _warmup(min_scale("lra_warmup") / 5)[1] < 1.87 * 0.75
