"""A new user's mistakes, each caught in one line with exit status 2: a YAML syntax
error in a config file, a ``--config-dir`` that does not exist, a misspelt option, key or
group option (with difflib's "did you mean"), a query whose ``--csv`` directory does not
exist, and DuckDB's candidate-column hint for a misspelt column."""
from __future__ import annotations

import shutil

import pytest

import pipeline.run as run_module

from pipeline import query
from pipeline.job import summary_table
from pipeline.run import main
from pipeline.sink import write_run

from .helpers import CONF, all_files


def _one_line(code: int, out: str, err: str) -> str:
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in out + err and "usage:" not in err
    return lines[0]


def _run(capfd, tmp_path, *args) -> str:
    code = main([*args, f"results.dir={tmp_path / 'outputs'}", "hydra/launcher=serial"])
    out, err = capfd.readouterr()
    line = _one_line(code, out, err)
    assert not (tmp_path / "outputs").exists()
    return line


@pytest.mark.parametrize("where", ["config-dir", "conf"])
def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path, monkeypatch, capfd, where):
    monkeypatch.chdir(tmp_path)
    conf = tmp_path / "conf"
    if where == "conf":   # the project's own conf/, a copy with one file broken
        shutil.copytree(CONF, conf)
        monkeypatch.setattr(run_module, "CONF_DIR", conf)
        bad, args = conf / "run" / "default.yaml", []
    else:
        bad, args = conf / "experiment" / "mine.yaml", ["--config-dir", str(conf), "experiment=mine"]
        bad.parent.mkdir(parents=True)
    bad.write_text("# @package _global_\nrun:\n  seed: [1, 2\n  scale: 0.5\n")
    line = _run(capfd, tmp_path, *args)
    assert line.startswith(f"error: {bad}: YAML syntax error at line 4, column "), line


def test_a_config_dir_that_does_not_exist_is_one_line(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    line = _run(capfd, tmp_path, "--config-dir", str(tmp_path / "nowhere"))
    assert line == f"error: --config-dir: '{tmp_path / 'nowhere'}' is not a directory"


@pytest.mark.parametrize("args,expect", [
    (["--dry-rn"], "error: --dry-rn: unknown option (did you mean '--dry-run'?)"),
    (["run.seeed=1"], "error: run.seeed: Key 'seeed' not in 'RunConfig' (did you mean 'seed'?)"),
    (["worklod.bs=1m"], "(did you mean 'workload'?)"),
    (["workload.bz=1m"], "error: workload.bz: Key 'bz' not in 'FioConfig' (did you mean 'bs'?)"),
    (["device.sda.rpmm=1"], "(did you mean 'rpm'?)"),
    (["block=deadlin"], "(did you mean 'deadline'?)"),
    (["experiment=aio_bach"], "(did you mean 'aio_batch'?)"),
], ids=["option", "run-key", "top-level-key", "workload-key", "device-key", "group-option",
        "experiment"])
def test_a_misspelling_gets_did_you_mean(tmp_path, monkeypatch, capfd, args, expect):
    monkeypatch.chdir(tmp_path)
    line = _run(capfd, tmp_path, *args)
    assert line.endswith(expect) and line.startswith("error: "), line


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "outputs"
    row = {"experiment": "e", "config_hash": "h1", "code_version": "t", "seed": 0,
           "status": "ok", "error": None, "sim_seconds": 1.0, "wall_seconds": 0.1,
           "events_processed": 1, "run.seed": 0, "workload.bs": "16k", "fio.MB_s": 1.0}
    write_run(root, "e", "h1", {"summary": summary_table(row)})
    return root


def _query(capfd, *args) -> str:
    code = query.main(list(args))
    out, err = capfd.readouterr()
    assert out.strip() == ""
    return _one_line(code, out, err)


@pytest.mark.parametrize("extra", [[], ["best", "--experiment", "e", "--metric", "fio.MB_s"]],
                         ids=["named-query", "best"])
def test_a_query_whose_csv_directory_does_not_exist_is_one_line(results, tmp_path, capfd, extra):
    target = tmp_path / "no" / "such" / "dir" / "out.csv"
    args = extra or ["summary"]
    line = _query(capfd, *args, "--dir", str(results), "--csv", str(target))
    assert line == f"error: --csv: directory '{target.parent}' does not exist"
    assert not (tmp_path / "no").exists()


def test_a_misspelt_query_option_is_one_line_with_did_you_mean(results, capfd):
    line = _query(capfd, "best", "--dir", str(results), "--experimnt", "e")
    assert line == "error: --experimnt: unknown option (did you mean '--experiment'?)"


def test_duckdbs_candidate_columns_are_kept(results, capfd):
    line = _query(capfd, 'SELECT "workload.bz" FROM runs', "--dir", str(results))
    assert '"workload.bz" not found' in line and 'Candidate bindings: "workload.bs"' in line


def test_nothing_is_written_by_a_mistake(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    _run(capfd, tmp_path, "--config-dir", str(tmp_path / "nowhere"))
    assert all_files(tmp_path) == []


@pytest.mark.parametrize("module,args,expect", [
    ("pipeline.report", ["--experiment", "e", "--metrc", "x"],
     "error: --metrc: unknown option (did you mean '--metric'?)"),
    ("pipeline.validate", ["--refrence", "mine.csv"],
     "error: --refrence: unknown option (did you mean '--reference'?)"),
    ("pipeline.report", [], "error: the following arguments are required: --experiment"),
], ids=["report", "validate", "report-missing-option"])
def test_report_and_validate_options_are_one_line(capfd, module, args, expect):
    import importlib

    code = importlib.import_module(module).main(args)
    out, err = capfd.readouterr()
    assert _one_line(code, out, err) == expect


def test_options_after_an_override_are_taken_as_written_before_it(tmp_path, capfd):
    # argparse would end in its usage and "unrecognized arguments": Hydra takes the
    # overrides as one run of positional arguments
    code = main([f"results.dir={tmp_path / 'outputs'}", "-m", "workload.runtime_s=0.05,0.1",
                 "--dry-run", "hydra/launcher=serial"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "2 job(s) valid" in out + err and "usage" not in err


def test_hoist_flags_keeps_each_option_with_its_value():
    from pipeline.run import hoist_flags

    assert hoist_flags(["a=1", "-m", "b=2,3", "--config-dir", "d", "--info", "config",
                        "c=4", "-cn", "x"]) == ["-m", "--config-dir", "d", "--info", "config",
                                                "-cn", "x", "a=1", "b=2,3", "c=4"]
    assert hoist_flags(["--info", "a=1"]) == ["--info", "a=1"]
