"""A results directory that fills up or goes read-only in the middle of a sweep, and
one that can never be written (``/proc``, ``/sys``).

Mid-sweep: one line naming the directory and the error, exit status 74 (EX_IOERR),
every result written before intact, nothing half-written, and the same command resumes
once there is room. Up front: ``/proc`` and ``/sys`` fail the writability check (exit
2, nothing run). The mid-sweep tests mount a small tmpfs (root only; skipped
elsewhere) and run serially in this process: ~3 s each.
"""
from __future__ import annotations

import os
import subprocess

import pyarrow.parquet as pq
import pytest

import pipeline.build
import pipeline.version
from pipeline import sink
from pipeline.run import main

from .helpers import parquet_files

SWEEP = ["hydra/launcher=serial", "workload.bs=4k,8k,16k,32k,64k", "workload.runtime_s=0.05",
         "workload.iodepth=2", "results.summary=false", "results.details=true",
         "results.sample_ms=1"]


@pytest.fixture(autouse=True)
def fixed_code_version(monkeypatch):
    monkeypatch.setattr(pipeline.version, "code_version", lambda: "test:disk")


def _mount(path, *opts) -> bool:
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(opts), "tmpfs", str(path)],
                       capture_output=True)
    return r.returncode == 0


@pytest.fixture
def small_fs(tmp_path):
    """A 200 KiB tmpfs: room for about three runs of SWEEP with their details."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or not _mount(mnt, "size=200k"):
        pytest.skip("needs root to mount a tmpfs")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def _intact(root):
    """Every run in the tree is whole: a one-row summary with its detail table."""
    summaries = sorted(root.glob("experiment=*/run=*/summary.parquet"))
    for s in summaries:
        assert pq.read_table(s).num_rows == 1
        assert pq.read_table(s.parent / "_details" / "iostat.parquet").num_rows > 0
    assert not list(root.rglob("*.partial"))
    assert not sink.staging_dir(root).exists()
    return len(summaries)


def test_a_disk_that_fills_mid_sweep_is_one_line_exit_74_and_resumes(small_fs, capfd):
    root = small_fs / "out"
    code = main(["-m", f"results.dir={root}", *SWEEP])
    line = _error_line(capfd.readouterr().err)
    assert code == 74
    assert line.startswith(f"error: results.dir: cannot write results under '{root}': "
                           "No space left on device [ENOSPC]; ")
    done = _intact(root)
    assert 1 <= done < 5 and f"; {done} ok, 0 failed, {5 - done} not run;" in line
    assert len(parquet_files(root)) == 2 * done

    subprocess.run(["mount", "-o", "remount,size=4m", str(small_fs)], check=True)
    code = main(["-m", f"results.dir={root}", *SWEEP])
    err = capfd.readouterr().err
    assert code == 0, err
    assert f"{5 - done} ok, 0 failed, {done} skipped" in err
    assert _intact(root) == 5


def test_a_directory_that_goes_read_only_mid_sweep_is_one_line_and_keeps_results(
        small_fs, capfd, monkeypatch):
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_fs)], check=True)
    real, calls = pipeline.build.simulate, []

    def remounted_read_only_during_third_run(spec):
        calls.append(spec.config_hash)
        if len(calls) == 3:
            subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
        return real(spec)

    monkeypatch.setattr(pipeline.build, "simulate", remounted_read_only_during_third_run)
    root = small_fs / "out"
    code = main(["-m", f"results.dir={root}", *SWEEP])
    line = _error_line(capfd.readouterr().err)
    assert code == 74
    assert "Read-only file system [EROFS]; 2 ok, 0 failed, 3 not run;" in line
    assert _intact(root) == 2


@pytest.mark.parametrize("where", ["/proc/dbio-results", "/sys/dbio-results", "/proc"])
def test_results_dir_under_proc_or_sys_fails_the_upfront_check(where, tmp_path, capfd):
    code = main([f"results.dir={where}", "workload.runtime_s=0.01"])
    line = _error_line(capfd.readouterr().err)
    assert code == 2 and line.startswith("error: results.dir: cannot write to ")
    assert not os.path.exists(where) or where == "/proc"
