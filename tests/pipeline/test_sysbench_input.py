"""Bad sysbench options through the pipeline: a ConfigError naming workload.<key> (the
one line and exit status 2 of pipeline.run). The workload kind is registered here as the
registry does once the InnoDB server exists (on a commit-path engine, which is enough to
validate the options: nothing is built)."""
from __future__ import annotations

import pytest

from models.workload.sysbench import Sysbench, SysbenchConfig
from pipeline import registry
from pipeline.errors import ConfigError
from pipeline.spec import validate


@pytest.fixture
def sysbench_kind(monkeypatch):
    kind = registry.WorkloadKind(
        SysbenchConfig, lambda sim, cfg, server, rng, scale, extras: Sysbench(
            sim, cfg, server, rng, scale), on="engine")
    monkeypatch.setitem(registry.WORKLOADS, "sysbench", kind)
    return kind


@pytest.mark.parametrize("override,key", [
    ("workload.test=oltp_nonsense", "workload.test"),
    ("workload.rand_type=exponential", "workload.rand_type"),
    ("workload.table_size=-1", "workload.table_size"),
    ("workload.threads=0", "workload.threads"),
    ("workload.rand_spec_res=100", "workload.rand_spec_res"),
])
def test_bad_option_is_a_config_error_naming_the_key(compose, sysbench_kind, override, key):
    cfg = compose("workload=sysbench", "engine=mysql51_builtin", override)
    with pytest.raises(ConfigError) as ei:
        validate(cfg, "default")
    assert ei.value.key == key


def test_good_options_validate_with_scaled_columns(compose, sysbench_kind):
    spec = validate(compose("workload=sysbench", "engine=mysql51_builtin", "run.scale=0.1",
                            "workload.time=60"), "default")
    assert spec.params["workload.test"] == "oltp_read_write"
    assert spec.params["workload.time"] == pytest.approx(6.0)


def test_pipeline_run_exits_2_with_one_line_and_writes_nothing(tmp_path, capfd,
                                                                monkeypatch, sysbench_kind):
    from pipeline.run import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    code = main([f"results.dir={tmp_path / 'outputs'}", "hydra/launcher=serial",
                 "workload=sysbench", "engine=mysql51_builtin", "workload.rand_type=zipf"])
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: workload.rand_type: "), err
    assert "Traceback" not in out + err
    assert list(tmp_path.iterdir()) == []
