"""Each experiment's published effect holds AT its declared ``meta.min_scale`` (read from
its YAML, so the declaration is what is tested), and - where that is cheap - is lost
well below it, so the declaration means something. The declared scale is by
construction the cheapest valid one; the measurements behind each value are in the
YAML's comment and the README (run.scale)."""
from __future__ import annotations

import pytest

from pipeline.spec import validate
from tests.experiments.helpers import compose, run_point


def min_scale(experiment: str) -> float:
    return validate(compose(experiment), experiment).min_scale


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
    assert n == pytest.approx(5300, rel=0.25) and n / b > 100
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
