"""E4 through the pipeline (experiment=fsync_append_overwrite) at a small scale: on
ext3 an append costs a journal commit per fdatasync and an overwrite does not; on zfs
copy-on-write makes them cost the same. (The published ext3 rates, at the experiment's
own scale: tests/experiments/test_published.py.)"""
import pytest

from tests.experiments.helpers import run_point

SMALL = "run.scale=0.003"    # 393 of the 131,072 writes


def _point(case, fs):
    return run_point("fsync_append_overwrite", f"case/fsync_append_overwrite={case}",
                     f"fs={fs}", SMALL)


def test_ext3_append_commits_per_sync_overwrite_writes_data_only():
    a, o = _point("append", "ext3"), _point("overwrite", "ext3")
    assert a["fsync_bench.writes"] == o["fsync_bench.writes"] == 393
    assert a["fsstat.sda.commits"] == 393 and o["fsstat.sda.commits"] == 0
    assert 2.8 < o["fsync_bench.syncs_per_s"] / a["fsync_bench.syncs_per_s"] < 4.0


def test_zfs_overwrite_costs_as_much_as_append():
    a, o = _point("append", "zfs"), _point("overwrite", "zfs")
    assert o["fsync_bench.syncs_per_s"] == pytest.approx(a["fsync_bench.syncs_per_s"], rel=0.05)
