"""Input files by content: a run's identity covers what it reads, not only its path.

A run that reads a file (a trace replayed by ``workload=trace``, any file a registry
entry declares in ``WorkloadKind.inputs``) gets one parameter column per file,
``<section>.<key>_sha256``: the SHA-256 of the file's bytes. The column is part of the
config hash, so a file edited after a sweep makes a new run instead of reusing the old
row as "done already", and a query can tell runs of two versions of one file apart.

The digest is taken where the spec is validated (the driver); the worker reads the
file where it builds the run (on a cluster, the same path on every node). Digests are
cached per (path, size, modification time) within the process, so a sweep of many
jobs over one large trace reads it once.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

_CHUNK = 1 << 20
_cache: dict[tuple[str, int, int], str] = {}


def digest(path: Path) -> str:
    """Hex SHA-256 of the file's contents (read in 1 MB chunks)."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    out = h.hexdigest()
    _cache[key] = out
    return out
