"""Keep numba's on-disk cache honest: one cache directory per version of models/.

numba's ``cache=True`` re-compiles a function when *its own* source file changes, but
not when a function it calls in another module changes, so after an edit (or a
``git pull``) a run could silently execute stale machine code. Pointing
``NUMBA_CACHE_DIR`` at a directory named by a hash of every ``models/**/*.py`` makes
any change to the model sources start from a clean cache. It must run before numba is
first imported: ``pipeline/__init__.py``, ``tests/conftest.py`` and ``bench/`` call it.
A ``NUMBA_CACHE_DIR`` set by the user is left alone.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

_MODELS = Path(__file__).resolve().parents[1] / "models"


def models_source_hash() -> str:
    h = hashlib.sha256()
    for path in sorted(_MODELS.rglob("*.py")):
        h.update(str(path.relative_to(_MODELS)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR") or not _MODELS.is_dir():
        return
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dbio-sim" / "numba"
    os.environ["NUMBA_CACHE_DIR"] = str(base / models_source_hash())
