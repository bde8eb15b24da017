"""Keep numba's on-disk cache honest, and shared by every copy of the same models/.

numba's ``cache=True`` re-compiles a function when *its own* source file changes, but
not when a function it calls in another module changes, so after an edit (or a
``git pull``) a run could silently execute stale machine code. Pointing
``NUMBA_CACHE_DIR`` at a directory named by a hash of every ``models/**/*.py`` makes
any change to the model sources start from a clean cache.

Inside that directory numba would file each module's kernels under a hash of the
module's absolute directory, so a second checkout of the same sources (a CI clone, a
git worktree, the code Ray ships to a cluster's workers, which lands in a new directory
every Ray session) compiled every kernel again: ~15 s of CPU for the HDD's, ~13 s for
the SSD's. ``ModelsCacheLocator`` files them under their place inside models/ instead
(``models/device/hdd``), with the source's content as its stamp, so any copy of the same
sources finds them. numba picks it through ``NUMBA_CACHE_LOCATOR_CLASSES`` (before its
own locators, which still serve every other cached function); it lives in
``pipeline/numba_locator.py``, which imports numba, so that this module does not.

``configure`` must run before numba is first imported: ``pipeline/__init__.py``,
``tests/conftest.py`` and ``bench/`` call it. A ``NUMBA_CACHE_DIR`` set by the user is
left alone (and so is numba's own choice of locators).

Each version of models/ leaves its own directory (tens of MB); a version no process has
started on for ``UNUSED_DAYS`` is deleted (``prune``, at most once a day), so the cache
does not grow with every edit or ``git pull``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import time
from pathlib import Path

_SIBLING = Path(__file__).resolve().parents[1] / "models"
# a version of models/ whose kernels no process has used for this long is deleted
# (``prune``), looked for at most once a day
UNUSED_DAYS = 30
_DAY_S = 86_400
_USED = ".last_used"        # touched in a version's directory by every process using it
_PRUNED = ".last_pruned"
# numba's locators after ours, in numba's own order
_NUMBA_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator",
                   "IPythonCacheLocator", "ZipCacheLocator")


def models_dir() -> Path | None:
    """The models/ package: beside pipeline/ in a checkout; wherever it is importable
    from when the two were shipped apart (Ray's ``py_modules`` on a cluster)."""
    if _SIBLING.is_dir():
        return _SIBLING
    spec = importlib.util.find_spec("models")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def models_source_hash(models: Path | None = None) -> str:
    models = models or models_dir()
    h = hashlib.sha256()
    for path in sorted(models.rglob("*.py")):
        h.update(str(path.relative_to(models)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    models = models_dir()
    if models is None:
        return
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dbio-sim" / "numba"
    version = base / models_source_hash(models)
    os.environ["NUMBA_CACHE_DIR"] = str(version)
    try:
        version.mkdir(parents=True, exist_ok=True)
        (version / _USED).touch()
        prune(base)
    except OSError:             # a read-only or full cache: numba copes (it compiles)
        pass
    os.environ["DBIO_SIM_MODELS_DIR"] = str(models)
    os.environ.setdefault("NUMBA_CACHE_LOCATOR_CLASSES", ",".join(
        ("pipeline.numba_locator.ModelsCacheLocator", *_NUMBA_LOCATORS)))


def prune(base: Path, now_s: float | None = None) -> list[Path]:
    """Delete the versions under ``base`` that no process has used for ``UNUSED_DAYS``
    (their ``.last_used`` marker, else the directory itself, that old), at most once a
    day (``base/.last_pruned``); the deleted directories. A version in use is touched
    by every process that starts on it, so only caches of sources nobody runs go."""
    now_s = time.time() if now_s is None else now_s
    stamp = base / _PRUNED
    if stamp.exists() and now_s - stamp.stat().st_mtime < _DAY_S:
        return []
    stamp.touch()
    os.utime(stamp, (now_s, now_s))
    gone = []
    for d in base.iterdir():
        if not d.is_dir():
            continue
        marker = d / _USED
        used = (marker if marker.exists() else d).stat().st_mtime
        if now_s - used > UNUSED_DAYS * _DAY_S:
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone
