"""Parsing of human size strings the way fio and MySQL write them (``4k``, ``1m``, ``2G``)."""
from __future__ import annotations

_SUFFIX = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
           "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3, "t": 1024**4,
           "tb": 1024**4, "tib": 1024**4}


def parse_size(value: int | str, key: str) -> int:
    """Bytes from an int or a string with a binary suffix (fio semantics: k = 1024).

    Raises ``ValueError("<key>: ...")`` for anything else or a negative size.
    """
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected a size such as 4k or 1g, got {value!r}")
    if isinstance(value, int):
        n = value
    else:
        s = str(value).strip().lower()
        i = len(s)
        while i and not s[i - 1].isdigit():
            i -= 1
        num, suffix = s[:i], s[i:].strip()
        if suffix not in _SUFFIX or not num:
            raise ValueError(f"{key}: expected a size such as 4k or 1g, got {value!r}")
        try:
            n = int(float(num) * _SUFFIX[suffix])
        except ValueError:
            raise ValueError(f"{key}: expected a size such as 4k or 1g, got {value!r}") from None
    if n < 0:
        raise ValueError(f"{key}: must not be negative, got {value!r}")
    return n
