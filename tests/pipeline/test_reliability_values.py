"""Extreme values: integers beyond 64 bits, an object store bigger than the machine,
a detail table that would not fit, a run that would never end.

- Every integer field of every section must fit in 64 bits (the BIGINT column of the
  row, the models' int64 arithmetic), checked in one place (``pipeline.coerce``).
- ``hydra.launcher.ray.object_store_memory_mb`` is checked against the machine's
  memory before ``ray.init``.
- ``results.details`` with a ``results.sample_ms`` that would make more than
  ``MAX_DETAIL_ROWS`` rows is refused before the run, naming the key.
- ``results.max_wall_s`` ends a run that runs too long as a failed row.
- Fuzz (hypothesis, bounded): any numeric override either validates into a run whose
  summary row Arrow can hold, or is one line ``error: <key>: ...`` with exit 2 and no
  file - in-process for many examples, through the CLI for a few.

Costs: ~1 s per in-process ``main`` call; the fuzz ~20 s in all (27 in-process examples,
3 subprocess ones); the wall-budget test ~3 s.
"""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pipeline.version
from pipeline.errors import ConfigError, describe
from pipeline.fanout import MAX_DETAIL_ROWS, check_ray_config, prepare_run
from pipeline.job import summary_table
from pipeline.run import main
from pipeline.schema import RayConfig

from .helpers import all_files, run_cli

BIG = [
    ("run.seed=9223372036854775808", "run.seed", "must fit in a 64-bit integer"),
    ("workload.iodepth=9223372036854775808", "workload.iodepth", "must fit in a 64-bit integer"),
    ("block.nr_requests=100000000000000000000", "block.nr_requests", "must fit in a 64-bit integer"),
    ("block.nr_requests=1e20", "block.nr_requests", "could not be converted to Integer"),
    ("device.sda.queue_depth=-9223372036854775809", "device.sda.queue_depth",
     "must fit in a 64-bit integer"),
    ("hydra.launcher.ray.num_cpus=9223372036854775808", "hydra.launcher.ray.num_cpus",
     "must fit in a 64-bit integer"),
    ("hydra.launcher.ray.object_store_memory_mb=1000000000000",
     "hydra.launcher.ray.object_store_memory_mb", "must be at most this machine's memory"),
    ("results.sample_ms=0.000001", "results.sample_ms", "iostat detail rows (limit 1,000,000)"),
]


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:values")


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    return lines[0]


@pytest.mark.parametrize("override,key,message", BIG, ids=[b[0][:40] for b in BIG])
def test_values_beyond_what_can_be_held_are_one_line_exit_2(tmp_path, monkeypatch, capfd,
                                                            override, key, message):
    monkeypatch.chdir(tmp_path)
    code = main(["-m", f"results.dir={tmp_path / 'out'}", "results.details=true",
                 "workload.runtime_s=0.01", override])
    line = _one_line(capfd.readouterr().err)
    assert code == 2 and line.startswith(f"error: {key}: ") and message in line, line
    assert all_files(tmp_path) == []


def test_the_detail_rows_estimate_counts_fios_ramp(tmp_path, monkeypatch, capfd):
    """fio runs ramp + runtime and the sampler samples both: 0.6 s + 0.5 s at 1 us is
    1.1 M rows (the runtime alone, 0.5 M, would pass)."""
    monkeypatch.chdir(tmp_path)
    code = main(["-m", f"results.dir={tmp_path / 'out'}", "results.details=true",
                 "workload.runtime_s=0.5", "workload.ramp_time_s=0.6",
                 "results.sample_ms=0.001"])
    line = _one_line(capfd.readouterr().err)
    assert code == 2 and line.startswith("error: results.sample_ms: 0.001 ms over 1.1 "), line
    assert all_files(tmp_path) == []


def test_the_largest_64_bit_values_still_run(tmp_path, capfd):
    code = main(["-m", "hydra/launcher=serial", f"results.dir={tmp_path}", "results.summary=false",
                 "workload.runtime_s=0.01", f"run.seed={2**63 - 1}", f"block.nr_requests={2**63 - 1}"])
    assert code == 0, capfd.readouterr().err
    (summary,) = tmp_path.glob("**/summary.parquet")
    assert pq.read_table(summary).column("run.seed")[0].as_py() == 2**63 - 1


def test_object_store_is_checked_against_memory_before_ray_starts():
    with pytest.raises(ConfigError, match="object_store_memory_mb: must be at most this "
                                          r"machine's memory \(\d+ MB\), got 1099511627776"):
        check_ray_config(RayConfig(object_store_memory_mb=2**40))
    check_ray_config(RayConfig(object_store_memory_mb=128))


def test_the_detail_row_limit_is_an_estimate_of_simulated_time_over_the_interval(compose):
    ok = prepare_run(compose("results.details=true", "workload.runtime_s=10",
                             "results.sample_ms=0.01"), "x", "v")    # 10 s / 10 us = 1e6 rows
    assert ok.results.sample_ms == 0.01
    with pytest.raises(ConfigError, match=r"^results.sample_ms: .* ~1\.25e\+06 iostat detail"):
        prepare_run(compose("results.details=true", "workload.runtime_s=10",
                            "results.sample_ms=0.008"), "x", "v")
    # no details: no rows, any interval
    prepare_run(compose("results.details=false", "results.sample_ms=0.000001"), "x", "v")
    assert MAX_DETAIL_ROWS == 1_000_000


def test_a_run_past_its_wall_budget_is_a_failed_row_not_a_hang(tmp_path, capfd):
    code = main(["-m", "hydra/launcher=serial", f"results.dir={tmp_path}", "results.summary=false",
                 "workload.runtime_s=1e9", "results.max_wall_s=1"])
    err = capfd.readouterr().err
    assert code == 1 and "WallBudgetExceeded: the run took longer than results.max_wall_s=1 s" in err
    (summary,) = tmp_path.glob("**/summary.parquet")
    row = pq.read_table(summary).to_pylist()[0]
    assert row["status"] == "failed" and row["error_type"] == "WallBudgetExceeded"
    assert not any(k.startswith("results.") for k in row)     # the budget is no parameter


# -- fuzz ------------------------------------------------------------------------------------
NUMERIC_KEYS = ["run.seed", "run.scale", "run.duration_s", "block.nr_requests",
                "block.max_sectors_kb", "block.read_expire_ms", "workload.bs",
                "workload.iodepth", "workload.size", "workload.offset", "workload.numjobs",
                "workload.runtime_s", "device.sda.rpm", "device.sda.queue_depth",
                "device.sda.capacity_bytes", "results.sample_ms", "results.max_wall_s"]
VALUES = st.one_of(
    st.integers(min_value=-2**80, max_value=2**80),
    st.sampled_from([2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 10**19, 0, -1, 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-12, 1e-6, 1e20, 1e300, 5e-324]),
)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(key=st.sampled_from(NUMERIC_KEYS), value=VALUES, details=st.booleans())
@example(key="run.seed", value=2**63, details=False)
@example(key="results.sample_ms", value=1e-6, details=True)
def test_fuzz_numeric_overrides_validate_to_a_holdable_row_or_a_config_error(
        compose, tmp_path, key, value, details):
    overrides = [f"results.dir={tmp_path / 'out'}", f"results.details={details}",
                 f"{key}={value!r}" if isinstance(value, float) else f"{key}={value}"]
    try:
        spec = prepare_run(compose(*overrides), "fuzz", "v")
    except Exception as ex:
        err = describe(ex)
        assert err is not None, f"{overrides}: {type(ex).__name__}: {ex}"
        assert err.key and "\n" not in str(err)
    else:
        summary_table(dict(spec.params, seed=spec.seed))    # the row Arrow must hold
    assert all_files(tmp_path) == []


@pytest.mark.parametrize("override", ["run.seed=18446744073709551616",
                                      "workload.iodepth=-9223372036854775809",
                                      "results.sample_ms=1e-9"])
def test_fuzz_cli_path_bad_numbers_are_one_line_exit_2_and_no_file(tmp_path, override):
    r = run_cli("-m", f"results.dir={tmp_path / 'out'}", "results.details=true", override,
                cwd=tmp_path, timeout=60)
    line = _one_line(r.stderr)
    assert r.returncode == 2 and line.startswith(f"error: {override.split('=')[0]}: "), line
    assert all_files(tmp_path) == []
