"""``meta.min_scale``: an experiment's declared smallest valid ``run.scale`` - typed and
range-checked, carried on the RunSpec, no parameter (no column, not hashed); a row
below it says so (``run.below_valid_scale``) and a run or sweep prints one line."""
from __future__ import annotations


import pytest

from pipeline.errors import ConfigError
from pipeline.spec import validate
from pipeline.sweep import below_scale_notice

from .helpers import run_cli

FAST = ("workload.runtime_s=0.05",)


def test_min_scale_is_carried_on_the_spec_and_is_no_parameter(compose):
    low = validate(compose("meta.min_scale=0.5", "run.scale=0.1", *FAST))
    plain = validate(compose("run.scale=0.1", *FAST))
    assert low.min_scale == 0.5 and plain.min_scale == 0.0
    assert low.below_valid_scale and not plain.below_valid_scale
    assert not any(k.startswith("meta.") for k in low.params)
    assert low.config_hash == plain.config_hash
    assert low.labels["run.below_valid_scale"] is True
    assert low.labels["run.overrides"] == plain.labels["run.overrides"]   # meta.* is no override


def test_at_the_declared_scale_the_run_is_valid(compose):
    assert not validate(compose("meta.min_scale=0.25", "run.scale=0.25", *FAST)).below_valid_scale


@pytest.mark.parametrize("value", ["-0.1", "1.5"])
def test_min_scale_out_of_range_names_the_key(compose, value):
    with pytest.raises(ConfigError) as ei:
        validate(compose(f"meta.min_scale={value}", *FAST))
    assert ei.value.key == "meta.min_scale"


def test_summary_row_has_below_valid_scale(compose):
    from pipeline.job import execute

    spec = validate(compose("meta.min_scale=0.5", "run.scale=0.1", *FAST))
    row = execute(spec).tables["summary"].to_pylist()[0]
    assert row["status"] == "ok" and row["run.below_valid_scale"] is True


def test_notice_is_one_line_naming_experiment_scale_and_min_scale(compose):
    import dataclasses

    spec = validate(compose("meta.min_scale=0.25", "run.scale=0.05", *FAST), "e5")
    other = dataclasses.replace(spec, run=dataclasses.replace(spec.run, scale=0.1))
    text = below_scale_notice([spec, other, spec])
    assert text is not None and "\n" not in text
    assert "e5" in text and "0.05, 0.1" in text and "0.25" in text
    assert below_scale_notice([validate(compose(*FAST))]) is None


def test_cli_prints_the_notice_once_before_running(tmp_path):
    res = run_cli("meta.min_scale=0.5", "run.scale=0.1", f"results.dir={tmp_path}", *FAST)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if "below the valid scale" in ln]
    assert len(lines) == 1 and "min_scale 0.5" in lines[0] and "run.scale=0.1" in lines[0]
    assert res.stdout.index(lines[0]) < res.stdout.index("1 run(s) under")
    bad = run_cli("meta.min_scale=2", f"results.dir={tmp_path}/bad", *FAST)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "meta.min_scale" in bad.stderr and not (tmp_path / "bad").exists()
