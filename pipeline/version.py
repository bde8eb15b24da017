"""The code version stamped on every result row.

``git describe --always --dirty`` of the working tree when it is a git checkout
(``-dirty`` marks uncommitted changes), else the installed package version. Computed
once by the driver and shipped with each run, since cluster workers may have no git.
"""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return "git:" + out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        from importlib.metadata import version

        return "pkg:" + version("dbio-sim")
    except Exception:
        return "unknown"
