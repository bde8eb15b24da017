"""The numba cache locator for models/ (see ``pipeline/numba_cache.py``, which names it
in ``NUMBA_CACHE_LOCATOR_CLASSES``; numba imports this module when it first caches a
function, after ``configure`` has set its environment)."""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator


@lru_cache(maxsize=None)
def _content_stamp(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _models_relative(py_file: str) -> Path | None:
    root = os.environ.get("DBIO_SIM_MODELS_DIR")
    if not root:
        return None
    try:
        return Path(py_file).resolve().parent.relative_to(root)
    except ValueError:
        return None


class ModelsCacheLocator(UserProvidedCacheLocator):
    """numba's locator for ``NUMBA_CACHE_DIR``, for functions defined under models/:
    the cache subdirectory is the module's directory relative to models/ (not a hash of
    its absolute path) and the source stamp is the file's content (not its mtime, which
    a fresh clone changes). Functions elsewhere are left to numba's own locators."""

    @classmethod
    def get_suitable_cache_subpath(cls, py_file):
        rel = _models_relative(py_file)
        return os.path.join("models", *rel.parts)

    def get_source_stamp(self):
        st = os.stat(self._py_file)
        return _content_stamp(self._py_file, st.st_mtime_ns, st.st_size)

    @classmethod
    def from_function(cls, py_func, py_file):
        if _models_relative(py_file) is None:
            return None
        return super().from_function(py_func, py_file)
