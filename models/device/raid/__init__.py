"""RAID 0 / 1 / 10 behind a controller with a write cache: ``controller`` (``RAID``:
commands fanned out to the members, the cache, destaging, the battery), ``config``
(``RAIDConfig``), ``cache`` (the cache's dirty extents and lines)."""
from .config import RAIDConfig
from .controller import RAID

__all__ = ["RAID", "RAIDConfig"]
