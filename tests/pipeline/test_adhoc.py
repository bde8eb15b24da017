"""Ad-hoc sweeps: ``run.name`` keeps them under a name of their own instead of
``default``, each row records the keys set beyond the experiment's sweep
(``run.overrides``), and ``best`` never ranks runs made with different ones together."""
from __future__ import annotations

import pytest

from pipeline import best, query
from pipeline.best import BestError
from pipeline.job import summary_table
from pipeline.run import main
from pipeline.sink import write_run
from pipeline.spec import validate

FAST = ("workload.size=64m", "workload.runtime_s=0.02")


def test_run_name_keeps_an_ad_hoc_sweep_apart(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "outputs"
    code = main(["-m", "hydra/launcher=serial", f"results.dir={root}", "run.name=my_disk",
                 "block=noop,deadline", *FAST])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert sorted(p.name for p in root.iterdir()) == ["experiment=my_disk"]
    assert len(list(root.glob("experiment=my_disk/run=*/summary.parquet"))) == 2
    # the title names the sweep (it wraps at the terminal's width before a long path)
    assert " ".join(out.split()).startswith(f"my_disk: 2 run(s) under {root}/")
    con = query.connect(root)
    rows = query.run_sql(con, 'SELECT experiment, "run.overrides", "block.scheduler" '
                              'FROM runs ORDER BY 3').rows
    # a key swept on the command line is one key for every run of the sweep
    assert rows == [("my_disk", "block workload.runtime_s workload.size", "deadline"),
                    ("my_disk", "block workload.runtime_s workload.size", "noop")]
    assert "run.name" not in query.columns(con)            # no parameter column


def test_run_name_is_no_parameter_and_must_be_a_directory_name(compose):
    named, plain = validate(compose("run.name=mine", *FAST)), validate(compose(*FAST))
    assert named.experiment == "mine" and plain.experiment == "default"
    assert named.config_hash == plain.config_hash and "run.name" not in named.params


def test_a_bad_run_name_is_one_line(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    code = main([f"results.dir={tmp_path / 'o'}", "run.name=a/b"])
    err = capfd.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: run.name: "), err


def test_overrides_beyond_the_experiments_sweep_are_recorded(compose):
    swept = validate(compose("experiment=fsync_barrier", "fs.nobarrier=true"))
    adhoc = validate(compose("experiment=fsync_barrier", "fs.nobarrier=true",
                             "device.sda.queue_depth=4", "run.seed=3", "run.scale=0.5"))
    assert swept.labels["run.overrides"] == ""         # fs.nobarrier is the YAML's sweep
    assert adhoc.labels["run.overrides"] == "device.sda.queue_depth"


def _row(root, h, overrides, mb_s, qd=32):
    row = {"experiment": "e", "config_hash": h, "code_version": "t", "seed": 0,
           "status": "ok", "error": None, "sim_seconds": 1.0, "wall_seconds": 0.1,
           "events_processed": 1, "run.seed": 0, "run.scale": 1.0, "workload.bs": "16k",
           "device.sda.queue_depth": qd, "fio.MB_s": mb_s}
    if overrides is not None:
        row["run.overrides"] = overrides
    write_run(root, "e", h, {"summary": summary_table(row)})


@pytest.fixture
def mixed(tmp_path):
    root = tmp_path / "outputs"
    _row(root, "a", "", 100.0)
    _row(root, "b", "", 120.0, qd=16)
    _row(root, "c", "device.sda.queue_depth", 300.0, qd=4)
    _row(root, "d", "device.sda.queue_depth", 200.0, qd=8)
    return root


def test_best_refuses_to_rank_runs_of_different_ad_hoc_overrides_together(mixed):
    con = query.connect(mixed)
    with pytest.raises(BestError, match=r"2 different sets of ad-hoc overrides \(none; "
                                        r"device.sda.queue_depth\).*--by run.overrides"):
        best.rank(con, "e", "fio.MB_s")
    res = best.rank(con, "e", "fio.MB_s", by="run.overrides")
    rows = [dict(zip(res.columns, r)) for r in res.rows]
    assert [(r["run.overrides"], r["rank"], r["config"]) for r in rows] == [
        ("", 1, "sda.queue_depth=16"), ("", 2, "sda.queue_depth=32"),
        ("device.sda.queue_depth", 1, "sda.queue_depth=4"),
        ("device.sda.queue_depth", 2, "sda.queue_depth=8")]


def test_results_from_before_the_column_count_as_made_without_overrides(tmp_path):
    root = tmp_path / "outputs"
    _row(root, "a", "", 100.0)
    _row(root, "b", None, 120.0, qd=16)
    res = best.rank(query.connect(root), "e", "fio.MB_s")
    assert [r[res.columns.index("config")] for r in res.rows] == ["sda.queue_depth=16",
                                                                  "sda.queue_depth=32"]


def test_best_on_the_command_line_says_so_in_one_line(mixed, capsys):
    assert query.main(["best", "--dir", str(mixed), "--experiment", "e",
                       "--metric", "fio.MB_s"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ad-hoc overrides" in err and "run.name=NAME" in err


def test_conf_local_is_searched_without_a_flag(tmp_path, monkeypatch, capfd):
    """A user's own experiment in conf/local/experiment/ (git-ignored) is found by
    pipeline.run and pipeline.validate as if it were in conf/."""
    import pipeline.run as run_module
    from pipeline import validate as validate_module

    local = tmp_path / "local"
    (local / "experiment").mkdir(parents=True)
    (local / "experiment" / "mine.yaml").write_text(
        "# @package _global_\nworkload:\n  runtime_s: 0.02\n  size: 64m\n")
    monkeypatch.setattr(run_module, "LOCAL_DIR", local)
    monkeypatch.chdir(tmp_path)
    code = main(["experiment=mine", "--dry-run", f"results.dir={tmp_path / 'o'}"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert out.startswith("dry run: 1 run valid (mine, ")
    assert validate_module.experiment_exists("mine")
    assert not validate_module.experiment_exists("theirs")


def test_the_documented_example_experiments_are_valid(tmp_path, monkeypatch, capfd):
    """docs/examples/experiment/*.yaml (heavy experiments the README runs with
    ``--config-dir docs/examples``) compose and validate as the README's command runs
    them."""
    from .helpers import ROOT

    examples = ROOT / "docs" / "examples"
    names = sorted(p.stem for p in (examples / "experiment").glob("*.yaml"))
    assert "flushing_tpcc_500w" in names
    monkeypatch.chdir(tmp_path)
    for name in names:
        code = main(["--config-dir", str(examples), f"experiment={name}", "--dry-run",
                     f"results.dir={tmp_path / 'o'}"])
        out, err = capfd.readouterr()
        assert code == 0, err
        assert out.startswith(f"dry run: 1 run valid ({name}, ")
