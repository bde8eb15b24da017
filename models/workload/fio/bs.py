"""How big each of a fio job's I/Os is: ``bs``, ``bsrange`` and ``bssplit``, per
direction, as fio reads them (options.c) and draws a size (``get_next_buflen``,
io_u.c), for the direct (``models.workload.fio``) and the buffered
(``models.workload.fio.buffered``) job alike.

- ``bs=r[,w[,t]]``: one size per direction (``bs=4k,64k``: 4 KiB reads, 64 KiB
  writes); one value holds for every direction, an empty one keeps fio's 4k.
- ``bsrange=min-max[,min-max]``: a size drawn per I/O as fio draws it - ``min`` plus a
  uniform share of ``max``, aligned down to ``min`` and capped at ``max`` (so
  ``bsrange=4k-16k`` gives 4, 8, 12 and 16 KiB a quarter of the I/Os each).
- ``bssplit=bs/pct:bs/pct...[,...]``: each I/O takes a size with its percentage;
  sizes without one share what the others leave (integer division, as fio); the list
  is ordered by percentage, as fio sorts it, and a draw takes the first entry whose
  running sum reaches it - the last entry gets what integer division left over.
  Percentages over 100 are refused (fio refuses them only with two or more sizes
  without a percentage); a size left a share of 0 is never drawn and is dropped.
- The smallest size of a direction (``min_bs``) is its offset grid: random offsets are
  multiples of it unless ``ba=r[,w[,t]]`` (``blockalign``) gives another alignment
  (``ba=512`` with ``bs=4k``: 4 KiB I/Os at any sector, as on a misaligned
  partition; ``block_align``), and a size that would pass the end of the job's region
  is drawn again (fio's ``io_u_fits`` loop).
- Sizes draw from a stream of their own (fio's ``bsrange_state``), so a job whose
  sizes vary draws the same offsets as one whose sizes do not.

Deliberately not modelled: ``bs_unaligned``, ``bs_is_seq_rand``, trims.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...units import parse_size

DEFAULT_BS = 4096
CHUNK = 4096                # draws per refill


@dataclass(frozen=True)
class DirSizes:
    """One direction's sizes: fio's ``min_bs`` / ``max_bs`` and ``bssplit`` entries
    ((bytes, percent), ordered by percent)."""

    min_bs: int
    max_bs: int
    split: tuple[tuple[int, int], ...] = ()

    @property
    def fixed(self) -> bool:
        return self.min_bs == self.max_bs


def _per_direction(text, key: str) -> list[str]:
    """fio's ``read[,write[,trim]]`` -> [read, write] texts ('' where left empty)."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) > 3:
        raise ValueError(f"{key}: expected read[,write[,trim]], got {text!r}")
    return parts * 2 if len(parts) == 1 else parts[:2]


def _size(text: str, key: str, whole) -> int:
    n = parse_size(text, key)
    if n < 512 or n % 512:
        raise ValueError(f"{key}: must be a positive multiple of 512 bytes, got {whole!r}")
    return n


def share_out(pcts: list) -> list[int]:
    """fio's rule for split entries given without a percentage (None; ``bssplit_ddir``,
    ``zone_split_ddir``): they share what the others leave, in integer division - all
    of it for a lone entry."""
    missing = pcts.count(None)
    if not missing:
        return list(pcts)
    given = sum(p for p in pcts if p is not None)
    share = 100 if missing == 1 and len(pcts) == 1 else (100 - given) // missing
    return [share if p is None else p for p in pcts]


def _split(text: str, key: str, whole) -> tuple[tuple[int, int], ...]:
    sizes, pcts = [], []
    for item in text.split(":"):
        if not item.strip():
            break                              # fio stops at an empty entry
        bs_text, sep, pct_text = item.partition("/")
        bs = _size(bs_text.strip(), key, whole)
        pct = None
        if sep:
            pct_text = pct_text.strip()
            if not pct_text.isdigit():          # (fio's atoi would read junk as 0)
                raise ValueError(f"{key}: expected size/percent entries such as "
                                 f"4k/50:64k/50, got {whole!r}")
            pct = min(int(pct_text), 100) or None    # fio: /0 is a size without one
        sizes.append(bs)
        pcts.append(pct)
    if not sizes:
        raise ValueError(f"{key}: expected size/percent entries such as 4k/50:64k/50, "
                         f"got {whole!r}")
    given = sum(p for p in pcts if p is not None)
    if given > 100:
        raise ValueError(f"{key}: the percentages add up to {given}, more than 100 "
                         f"({whole!r})")
    # a size left no share is never drawn (fio would keep it as the smallest size and
    # could then find no size that fits at the region's end)
    return tuple(sorted(((bs, pct) for bs, pct in zip(sizes, share_out(pcts)) if pct),
                        key=lambda e: e[1]))


def block_sizes(bs, bsrange="", bssplit="") -> tuple[DirSizes, DirSizes]:
    """(reads, writes) from the job's ``bs``, ``bsrange`` and ``bssplit`` (either of the
    last two over ``bs``, as fio's ``min_bs`` / ``max_bs`` are); ``ValueError`` naming
    the option."""
    if bsrange and bssplit:
        raise ValueError("bssplit: set bsrange or bssplit, not both")
    out = [DirSizes(_size(t, "bs", bs), _size(t, "bs", bs)) if t
           else DirSizes(DEFAULT_BS, DEFAULT_BS) for t in _per_direction(bs, "bs")]
    if bsrange:
        for d, t in enumerate(_per_direction(bsrange, "bsrange")):
            if not t:
                continue
            lo, sep, hi = t.partition("-")
            if not sep:
                raise ValueError(f"bsrange: expected min-max such as 4k-64k, got {bsrange!r}")
            lo, hi = _size(lo.strip(), "bsrange", bsrange), _size(hi.strip(), "bsrange", bsrange)
            if lo > hi:
                raise ValueError(f"bsrange: min above max in {bsrange!r}")
            out[d] = DirSizes(lo, hi)
    if bssplit:
        for d, t in enumerate(_per_direction(bssplit, "bssplit")):
            if t:
                split = _split(t, "bssplit", bssplit)
                sizes = [bs for bs, _ in split]
                out[d] = DirSizes(min(sizes), max(sizes), split)
    return out[0], out[1]


def block_align(ba, sizes: tuple[DirSizes, DirSizes]) -> tuple[int, int]:
    """(reads, writes) alignment of random offsets: fio's ``ba=r[,w[,t]]``
    (``blockalign``; one value holds for every direction), each direction's ``min_bs``
    where none is given (fio's ``fixup_options``); ``ValueError`` naming ``ba``."""
    if not str(ba).strip():
        return sizes[0].min_bs, sizes[1].min_bs
    parts = _per_direction(ba, "ba")
    r, w = (_size(t, "ba", ba) if t else s.min_bs for t, s in zip(parts, sizes))
    return r, w


class SizeDraw:
    """The size of a job's next I/O of a direction (fio's ``get_next_buflen``)."""

    def __init__(self, sizes: tuple[DirSizes, DirSizes], rng: np.random.Generator) -> None:
        self.sizes = sizes
        self.fixed = all(s.fixed for s in sizes)
        # a stream of its own (fio's bsrange_state), spawned only when sizes vary:
        # the job's stream (its offsets) is the same either way
        self.rng = (None if self.fixed else
                    np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0]))
        self._u: list = []
        self._i = 0

    def _uniform(self) -> float:
        if self._i >= len(self._u):
            self._u, self._i = self.rng.random(CHUNK).tolist(), 0
        self._i += 1
        return self._u[self._i - 1]

    def draw(self, op: int, room_bytes: int) -> int:
        """Bytes of the next I/O of ``op`` with ``room_bytes`` left before the end of
        the region (at least the direction's ``min_bs``)."""
        s = self.sizes[op]
        if s.min_bs == s.max_bs:
            return s.min_bs
        lo, hi = s.min_bs, s.max_bs
        while True:
            u = self._uniform()
            if s.split:
                cum = 0
                for n, pct in s.split:
                    buflen = n
                    cum += pct
                    if u * 100.0 < cum and n <= room_bytes:
                        break
            else:
                buflen = lo + int(hi * u)
            buflen -= buflen % lo
            if buflen > hi:
                buflen = hi
            if buflen <= room_bytes:
                return buflen
