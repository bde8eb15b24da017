"""Bad input: one line naming the key, exit status 2, no traceback, nothing written.

Every case runs the app's ``main`` in-process (fast); two run it as CI would, as
``python -m pipeline.run ...`` in a subprocess with no stdin and without
HYDRA_FULL_ERROR.
"""
from __future__ import annotations

import os

import pytest

from pipeline import registry

from pipeline.run import main

from .helpers import all_files, run_cli

needs_raid = pytest.mark.skipif("raid" not in registry.DEVICES,
                                reason="RAID model (models/device/raid/) not available yet")

RAID1_ONE_MEMBER = ["device@device.sda=raid1", "+device@device.hdd0=hdd_sas_15k",
                    "device.sda.members=[hdd0]", "workload.size=1g"]
RAID_UNKNOWN_MEMBER = ["device@device.sda=raid1", "+device@device.hdd0=hdd_sas_15k",
                       "device.sda.members=[hdd0,hdd9]", "workload.size=1g"]

CASES = [
    pytest.param(["run.seeed=1"], "run.seeed", id="unknown-key"),
    pytest.param(["device.sda.rpmm=10000"], "device.sda.rpmm", id="unknown-device-key"),
    pytest.param(["run.seed=abc"], "run.seed", id="wrong-type"),
    pytest.param(["device.sda.queue_depth=deep"], "device.sda.queue_depth", id="wrong-type-model"),
    pytest.param(["workload.size=-1g"], "workload.size", id="negative-size"),
    pytest.param(["block.nr_requests=0"], "block.nr_requests", id="out-of-range"),
    pytest.param(["block=fifo"], "block", id="unknown-group-option"),
    pytest.param(["workload.filename=sdz"], "workload.filename", id="unknown-block-device"),
    pytest.param(["workload.filename=null"], "workload.filename", id="null-block-device"),
    pytest.param(RAID1_ONE_MEMBER, "device.sda.members", id="raid1-one-member", marks=needs_raid),
    pytest.param(RAID_UNKNOWN_MEMBER, "device.sda.members", id="raid-unknown-member",
                 marks=needs_raid),
    pytest.param(["-m", "workload.iodepth=1,0"], "workload.iodepth", id="multirun-one-bad-job"),
    pytest.param(["run.duration_s=nan"], "run.duration_s", id="nan-duration"),
    pytest.param(["run.duration_s=inf"], "run.duration_s", id="inf-duration"),
    pytest.param(["run.duration_s=1e30"], "run.duration_s", id="overflowing-duration"),
    pytest.param(["workload.runtime_s=1e30"], "workload.runtime_s", id="overflowing-runtime"),
    pytest.param(["results.sample_ms=nan", "results.details=true"], "results.sample_ms",
                 id="nan-sample-interval"),
    pytest.param(["block.read_expire_ms=inf"], "block.read_expire_ms", id="inf-expiry"),
    pytest.param(["cpu.ghz=inf"], "cpu.ghz", id="inf-clock"),
    pytest.param(["kernel=5.15"], "block.scheduler", id="legacy-elevator-on-5.15"),
    pytest.param(["block=kyber"], "block.scheduler", id="blk-mq-scheduler-on-2.6.18"),
    pytest.param(["kernel=3.1"], "kernel", id="unknown-kernel-release"),
    pytest.param(["kernel.version=4.4"], "kernel.version", id="unknown-kernel-version"),
    pytest.param(["device@device.sda=hdd_sata_7200", "device.sda.write_cache_bytes=8t"],
                 "device.sda.write_cache_bytes", id="write-cache-larger-than-the-buffer"),
]


def _split(args):
    flags = [a for a in args if a.startswith("-")]   # argparse: flags before overrides
    return flags, [a for a in args if not a.startswith("-")]


def _check(code: int, stdout: str, stderr: str, key: str, tmp_path) -> None:
    assert code == 2, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {key}: "), lines[0]
    assert "Traceback" not in stderr + stdout
    assert stdout.strip() == ""
    assert all_files(tmp_path) == []


@pytest.mark.parametrize("args,key", CASES)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, capfd, args, key):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    flags, overrides = _split(args)
    code = main([*flags, f"results.dir={tmp_path / 'outputs'}", "hydra/launcher=serial", *overrides])
    out, err = capfd.readouterr()
    _check(code, out, err, key, tmp_path)


@pytest.mark.parametrize("args,key", [CASES[0], CASES[4]], ids=["unknown-key", "negative-size"])
def test_bad_input_from_the_command_line(tmp_path, args, key):
    proc = run_cli(f"results.dir={tmp_path / 'outputs'}", *args, cwd=tmp_path)
    _check(proc.returncode, proc.stdout, proc.stderr, key, tmp_path)


@pytest.mark.parametrize("flags", [[], ["-m", "hydra/launcher=serial"]], ids=["run", "sweep"])
@pytest.mark.parametrize("target", ["f", "f/sub"], ids=["a-file", "under-a-file"])
def test_a_results_dir_that_is_no_directory_is_one_line_before_anything_runs(
        tmp_path, monkeypatch, capfd, flags, target):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f").write_text("")
    code = main([*flags, f"results.dir={tmp_path / target}", "workload.runtime_s=0.01"])
    out, err = capfd.readouterr()
    assert code == 2, err
    assert err.strip() == (f"error: results.dir: '{tmp_path / 'f'}' is not a directory"
                           if target == "f" else f"error: results.dir: cannot create "
                           f"'{tmp_path / target}': '{tmp_path / 'f'}' is not a directory")
    assert "Traceback" not in out + err
    assert all_files(tmp_path) == [tmp_path / "f"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_results_dir_is_one_line_before_anything_runs(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    try:
        code = main([f"results.dir={tmp_path / 'ro' / 'out'}", "workload.runtime_s=0.01"])
    finally:
        (tmp_path / "ro").chmod(0o755)
    err = capfd.readouterr().err
    assert code == 2, err
    assert err.strip() == f"error: results.dir: cannot write to '{tmp_path / 'ro'}': permission denied"
    assert all_files(tmp_path) == [tmp_path / "ro"]


CSV_HEADER = "time_us,op,offset_bytes,size_bytes\n"


@pytest.mark.parametrize("name, text, message", [
    ("t.csv", CSV_HEADER, "{f}: no requests"),
    ("t.csv", "", "{f}: no requests"),
    ("t.trace", "\n", "{f}: no requests"),
    ("t.csv", CSV_HEADER + "0,R,0,4096\n100,W,abc,4096\n", "{f} line 3: offset_bytes must be an integer, got 'abc'"),
    ("t.csv", CSV_HEADER + "0,R,-4096,4096\n", "{f} line 2: offset_bytes must be >= 0, got -4096"),
    ("t.csv", CSV_HEADER + "0,R,0,0\n", "{f} line 2: size_bytes must be > 0, got 0"),
    ("t.csv", CSV_HEADER + "nan,R,0,4096\n", "{f} line 2: time_us must be finite, got 'nan'"),
    ("t.csv", CSV_HEADER + "0,R,0,4096\n5,R,999999999999999,4096\n",
     "{f} line 3: offset 999999999999999 + size 4096 is beyond the end of device 'sda'"),
    ("t.trace", "R Hit 4583176 4 663.0 45422.0\nR Hit abc 4 1.0 2.0\n",
     "{f} line 2: lbn must be an integer, got 'abc'"),
    ("t.trace", "R Hit 100 4 663.0 -1\n", "{f} line 1: gap must be >= 0, got -1"),
], ids=["header-only", "empty-csv", "empty-trace", "not-a-number", "negative-offset",
        "zero-size", "nan-time", "beyond-the-device", "trace-not-a-number", "trace-negative-gap"])
def test_a_bad_trace_file_is_one_line_naming_the_file_and_line(tmp_path, monkeypatch, capfd,
                                                               name, text, message):
    monkeypatch.chdir(tmp_path)
    trace = tmp_path / name
    trace.write_text(text)
    code = main([f"results.dir={tmp_path / 'outputs'}", "workload=trace",
                 f"workload.iolog={trace}"])
    out, err = capfd.readouterr()
    assert code == 2, err
    assert err.startswith("error: workload.iolog: " + message.format(f=trace)), err
    assert err.count("\n") == 1 and "Traceback" not in out + err and out == ""
    assert all_files(tmp_path) == [trace]
