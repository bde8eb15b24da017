"""Helpers of the pipeline tests (run the CLI as CI would, list result files)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"


def run_cli(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m pipeline.run ARGS`` in a subprocess, no stdin, as CI runs it."""
    env = dict(os.environ)
    env.pop("HYDRA_FULL_ERROR", None)
    env.pop("RAY_ADDRESS", None)
    # importable from any cwd, installed or not
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "pipeline.run", *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def parquet_files(root: Path) -> list[Path]:
    return sorted(Path(root).glob("**/*.parquet")) if Path(root).exists() else []


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).rglob("*")) if Path(root).exists() else []
