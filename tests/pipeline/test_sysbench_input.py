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


def test_pipeline_runs_the_workload_on_an_engine_and_writes_its_interval_table(
        compose, monkeypatch, sysbench_kind):
    """The wiring end to end, with the fake server standing in for the engine: summary
    columns ``sysbench.*``, one ``requests`` detail row per report_interval."""
    from models.engine.innodb.server import InnoDBServerConfig
    from pipeline.job import execute
    from tests.models.workload.sysbench.fake_server import FakeServer

    monkeypatch.setitem(registry.ENGINES, "innodb", registry.EngineKind(
        InnoDBServerConfig, lambda sim, cfg, cpu_cfg, fs_of: FakeServer(sim, op_ns=100_000),
        files=("redo_log", "binlog"), metric_prefix="server"))
    spec = validate(compose("workload=sysbench", "engine=mysql51_builtin", "workload.time=3",
                            "workload.threads=4", "results.details=true"), "default")
    out = execute(spec)
    row = out.tables["summary"].to_pylist()[0]
    assert row["status"] == "ok", row["error"]
    assert row["sysbench.transactions"] > 0
    assert row["sysbench.qps"] == pytest.approx(20 * row["sysbench.tps"])
    assert row["server.commits"] == row["sysbench.transactions"]
    assert row["sysbench.Com_commit"] == row["sysbench.transactions"]
    detail = out.tables["requests"].to_pylist()
    assert [r["t_s"] for r in detail] == [1.0, 2.0, 3.0]
    assert all(r["Innodb_buffer_pool_pages_dirty"] > 0 for r in detail)
