"""Parameter columns hold the sizes the model used: every field ``run.scale`` shrinks is
shown at its effective value (checked against the built model), the hash still tells
runs apart, and scale 1 shows the configuration as written."""
from __future__ import annotations

import pytest

from models.engine.innodb.tablespace import PAGE_SIZE
from models.units import parse_size
from pipeline.build import build
from pipeline.registry import WORKLOADS
from pipeline.scaling import SCALED, size_text
from pipeline.spec import validate

SCALE = 0.1


def _spec(compose, experiment, *overrides):
    return validate(compose(f"experiment={experiment}", f"run.scale={SCALE}", *overrides),
                    experiment)


def test_full_scan_sizes_are_the_scaled_ones(compose):
    spec = _spec(compose, "lra", "innodb_scan=logical_aio64", "run.scale=0.01")
    p = spec.params
    assert p["workload.table_size"] == "102.4m"            # 10g x 0.01
    assert p["engine.innodb_buffer_pool_size"] == "81.90625m"   # 8g x 0.01, whole pages
    assert p["workload.innodb_lra_size"] == pytest.approx(10.24)
    wl = build(spec).workload
    assert wl.bp.capacity == parse_size(p["engine.innodb_buffer_pool_size"], "") // PAGE_SIZE
    lra = next(x for x in wl.scan.policies if hasattr(x, "batch_leaves"))
    assert lra.batch_leaves == int(p["workload.innodb_lra_size"] * 2**20) // PAGE_SIZE


@pytest.mark.parametrize("experiment,overrides,field,attr", [
    ("fsync_barrier", (), "count", "count"),
    ("fsync_barrier", (), "file_size", "file_size"),
    ("write_stalls", ("case/write_stalls=journal_stall_ext4",), "count", "count"),
    ("write_stalls", ("case/write_stalls=sfr1_stall",), "count", "count"),
    ("group_commit", ("workload.concurrency=30",), "number_of_queries", "queries"),
    ("myisam_nr_requests", ("block.nr_requests=128",), "runtime_s", "runtime_ns"),
    pytest.param("sysbench_threads", (), "time", "time_s", marks=pytest.mark.skipif(
        "sysbench" not in WORKLOADS, reason="sysbench runs on the InnoDB server")),
    pytest.param("dbt2_placement", ("workload.warehouses=1", "engine.innodb_buffer_pool_size=16M"),
                 "duration", "duration_s", marks=pytest.mark.skipif(
                     "dbt2" not in WORKLOADS, reason="DBT-2 runs on the InnoDB server")),
])
def test_column_is_what_the_model_uses(compose, experiment, overrides, field, attr):
    spec = _spec(compose, experiment, *overrides)
    shown = spec.params[f"workload.{field}"]
    used = getattr(build(spec).workload, attr)
    if attr == "runtime_ns":
        used = used / 1e9
    elif field == "file_size":
        shown = parse_size(shown, field)
    assert shown == pytest.approx(used), (field, shown, used)
    raw = getattr(spec.workload.config, field)
    assert shown != raw       # the configuration as written is not what ran


def test_every_scaled_workload_is_covered():
    assert set(SCALED) == {"full_scan", "fsync_bench", "sfr_stall", "buffered_write",
                           "mysqlslap", "myisam_insert", "sysbench", "tpcc", "dbt2"}


def test_hash_tells_runs_apart_and_scale_one_shows_the_config_as_written(compose):
    a = _spec(compose, "lra_warmup", "engine.innodb_buffer_pool_size=8g")
    b = _spec(compose, "lra_warmup", "engine.innodb_buffer_pool_size=16g")
    assert a.params["engine.innodb_buffer_pool_size"] == "819.1875m"
    assert b.params["engine.innodb_buffer_pool_size"] == "1677712k"
    assert a.config_hash != b.config_hash
    full = validate(compose("experiment=lra_warmup", "run.scale=1"), "lra_warmup")
    assert full.params["engine.innodb_buffer_pool_size"] == "8g"
    assert full.config_hash != a.config_hash


def test_size_text_reads_back():
    assert size_text(2**30) == "1g" and size_text(858993459) == "819.2m"
    for n in (1, 4096, 6709248, 858993459, 10 * 2**30 // 1000, 2**40 + 1):
        assert parse_size(size_text(n), "x") == n
