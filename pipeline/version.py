"""The code version stamped on every result row.

``git describe --always --dirty`` of the working tree when it is a git checkout, else
the installed package version. A tree with uncommitted changes gets ``-dirty`` plus a
hash of the code that computes results (``models/`` and ``pipeline/`` sources), so two
different uncommitted states never share a version: resume and ``pipeline.validate``
reuse a result only for the exact code that made it. Computed once by the driver and
shipped with each run, since cluster workers may have no git.
"""
from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = ("models", "pipeline")


def source_hash() -> str:
    """Hash of every ``*.py`` under ``SOURCE_DIRS`` (paths and contents)."""
    h = hashlib.sha256()
    for d in SOURCE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            h.update(str(path.relative_to(ROOT)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            described = out.stdout.strip()
            if described.endswith("-dirty"):
                described += "." + source_hash()
            return "git:" + described
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        from importlib.metadata import version

        return "pkg:" + version("dbio-sim")
    except Exception:
        return "unknown"
