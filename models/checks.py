"""Range checks for the config dataclasses' ``__post_init__``.

``at_least(self, 1, "cores", "quantum")`` raises ``ValueError("cores: must be >= 1,
got 0")`` for the first of the named fields below the bound; ``above(self, 0, "ghz")``
does the same for ``must be > 0``; ``at_most(self, MAX_SECONDS, "runtime_s")`` for
``must be <= 1e+09``. The message starts with the key's name, which is what the
pipeline reports the error under (``pipeline.errors.from_value_error``).

- The keys are checked in the order given; the first failing one is reported.
- The value is formatted with ``str`` (``got 0``, ``got -1.5``); checks that quote
  the value with ``repr`` (sizes that may be strings) stay hand-written.
- NaN fails every bound (the test is ``not value >= minimum``), and so does
  infinity: no key of a model means "unbounded" by ``inf``, and the models turn
  times into integer nanoseconds (``must be a finite number >= 0, got inf``).
- ``MAX_SECONDS`` (10**9 s, 31 years) bounds a duration: the simulated clock is
  int64 nanoseconds (292 years), and the bound leaves room for sums of times
  (``at_most(self, MAX_SECONDS * 1e3, "read_expire_ms")`` for one in ms).
- None is not a value here: comparing it raises ``TypeError``, as a hand-written
  ``<`` would; an optional key (``float | None``) keeps its own ``is not None`` check.
"""
from __future__ import annotations

import math
from typing import Any

MAX_SECONDS = 1e9   # longest duration a key may give (31 years; the int64 ns clock: 292)


def _check_finite(key: str, relation: str, bound: float, value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{key}: must be a finite number {relation} {bound}, got {value}")


def at_least(cfg: Any, minimum: float, *keys: str) -> None:
    """``ValueError("<key>: must be >= <minimum>, got <value>")`` for the first of
    ``keys`` whose attribute of ``cfg`` is below ``minimum`` (or NaN, or infinite)."""
    for key in keys:
        value = getattr(cfg, key)
        if not value >= minimum:
            raise ValueError(f"{key}: must be >= {minimum}, got {value}")
        _check_finite(key, ">=", minimum, value)


def above(cfg: Any, minimum: float, *keys: str) -> None:
    """``ValueError("<key>: must be > <minimum>, got <value>")`` for the first of
    ``keys`` whose attribute of ``cfg`` is not greater than ``minimum`` (or NaN, or
    infinite)."""
    for key in keys:
        value = getattr(cfg, key)
        if not value > minimum:
            raise ValueError(f"{key}: must be > {minimum}, got {value}")
        _check_finite(key, ">", minimum, value)


def at_most(cfg: Any, maximum: float, *keys: str) -> None:
    """``ValueError("<key>: must be <= <maximum>, got <value>")`` for the first of
    ``keys`` whose attribute of ``cfg`` is above ``maximum`` (or NaN)."""
    for key in keys:
        value = getattr(cfg, key)
        if not value <= maximum:
            raise ValueError(f"{key}: must be <= {maximum:g}, got {value}")
