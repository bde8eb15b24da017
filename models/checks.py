"""Range checks for the config dataclasses' ``__post_init__``.

``at_least(self, 1, "cores", "quantum")`` raises ``ValueError("cores: must be >= 1,
got 0")`` for the first of the named fields below the bound; ``above(self, 0, "ghz")``
does the same for ``must be > 0``. The message starts with the key's name, which is
what the pipeline reports the error under (``pipeline.errors.from_value_error``).

- The keys are checked in the order given; the first failing one is reported.
- The value is formatted with ``str`` (``got 0``, ``got -1.5``); checks that quote
  the value with ``repr`` (sizes that may be strings) stay hand-written.
- NaN fails every bound (the test is ``not value >= minimum``).
- None is not a value here: comparing it raises ``TypeError``, as a hand-written
  ``<`` would; an optional key (``float | None``) keeps its own ``is not None`` check.
"""
from __future__ import annotations

from typing import Any


def at_least(cfg: Any, minimum: float, *keys: str) -> None:
    """``ValueError("<key>: must be >= <minimum>, got <value>")`` for the first of
    ``keys`` whose attribute of ``cfg`` is below ``minimum`` (or NaN)."""
    for key in keys:
        value = getattr(cfg, key)
        if not value >= minimum:
            raise ValueError(f"{key}: must be >= {minimum}, got {value}")


def above(cfg: Any, minimum: float, *keys: str) -> None:
    """``ValueError("<key>: must be > <minimum>, got <value>")`` for the first of
    ``keys`` whose attribute of ``cfg`` is not greater than ``minimum`` (or NaN)."""
    for key in keys:
        value = getattr(cfg, key)
        if not value > minimum:
            raise ValueError(f"{key}: must be > {minimum}, got {value}")
