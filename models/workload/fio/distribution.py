"""fio's ``random_distribution``: which block of the region a random I/O goes to.

Modelled, as fio's HOWTO and lib/zipf.c, lib/gauss.c describe them (block indices in
``[0, n)``, ``n`` = region size / bs):

- ``random``: uniform (``Generator.integers``, the job's default stream).
- ``zipf:<theta>``: block ranks with probability ~ 1 / rank^theta, drawn with Gray et
  al.'s quick Zipf generator ("Quickly generating billion-record synthetic
  databases", SIGMOD 1994) as fio does (zeta(n) summed over at most 10 M ranks, as fio
  caps it); theta > 0, != 1.
- ``pareto:<h>``: rank = (n - 1) * u^(log h / log(1 - h)), u uniform; 0 < h < 1.
- ``normal:<pct>``: the mean of 12 uniform draws in [0, n] (an Irwin-Hall approximation
  of a Gaussian around the middle of the region, as fio's ``gauss_next``), plus a
  uniform deviation of width pct % of the region; 0 <= pct <= 100.
- ``zoned:<access>/<size>:...``: the region cut into consecutive zones, each a size %
  of the region, taking that access % of the I/Os, uniform within the zone (fio's
  ``__get_next_rand_offset_zoned`` over ``zone_state_index``: a draw of 1..100 picks
  the zone); ``zoned_abs:<access>/<bytes>:...`` with zone sizes in bytes
  (``zoned_abs:60/1g:40/9g``). The access percentages must add up to 100; zone sizes
  left without a value share what the others leave (integer division); the region
  past the last zone is not accessed, as in fio; zones past the region's end are
  refused (fio: "zoned_abs sizes exceed file size"). Zones are not scattered: the
  first zone is the region's start, as fio lays them.

As in fio, the ranks of zipf and pareto (and the normal draws) are scattered over the
region by a fixed hash and a random offset, so the hot blocks are not the first ones
(they are spread like a database's hot pages). The hash here is a permutation of the
region (rank * a mod n, a ~ n / golden ratio and coprime with n: Fibonacci hashing),
not fio's ``__hash_u64`` bit for bit; an optional second value (``zipf:1.2:0.25``) is
fio's centre, the offset as a fraction of the region.

Not modelled: ``sequence`` and per-direction distributions (``random_distribution=a,b``,
zoned lists per direction included).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...units import parse_size
from .bs import share_out

KINDS = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs")
_ZIPF_MAX_GEN = 10_000_000        # fio's cap on the ranks summed into zeta(n)


@dataclass(frozen=True)
class Distribution:
    kind: str = "random"
    value: float = 0.0
    center: float | None = None   # fraction of the region (fio's optional second value)
    zones: tuple[tuple[int, float], ...] = ()   # zoned: (access %, size % or bytes)


def parse_distribution(text: str) -> Distribution:
    """``random`` | ``zipf:<theta>`` | ``pareto:<h>`` | ``normal:<pct>`` (each with an
    optional ``:<center>``), fio's spelling; ``ValueError`` naming the option."""
    parts = str(text).strip().split(":")
    kind = parts[0].lower()
    key = "random_distribution"
    if kind not in KINDS:
        raise ValueError(f"{key}: must be random, zipf:<theta>, pareto:<h>, normal:<pct>, "
                         f"zoned:<access>/<size %>:... or zoned_abs:<access>/<bytes>:..., "
                         f"got {text!r}")
    if kind in ("zoned", "zoned_abs"):
        return Distribution(kind, zones=_zones(kind, parts[1:], text))
    if kind == "random":
        if len(parts) != 1:
            raise ValueError(f"{key}: 'random' takes no value, got {text!r}")
        return Distribution()
    if len(parts) not in (2, 3):
        raise ValueError(f"{key}: expected {kind}:<value>[:<center>], got {text!r}")
    try:
        vals = [float(p) for p in parts[1:]]
    except ValueError:
        raise ValueError(f"{key}: expected {kind}:<value>[:<center>] with numbers, got {text!r}") from None
    v = vals[0]
    if kind == "zipf" and not (v > 0 and v != 1):
        raise ValueError(f"{key}: zipf theta must be > 0 and != 1, got {v:g}")
    if kind == "pareto" and not 0 < v < 1:
        raise ValueError(f"{key}: pareto h must be in (0, 1), got {v:g}")
    if kind == "normal" and not 0 <= v <= 100:
        raise ValueError(f"{key}: normal deviation must be in 0..100 (percent), got {v:g}")
    center = vals[1] if len(vals) > 1 else None
    if center is not None and not 0 <= center <= 1:
        raise ValueError(f"{key}: the centre must be in [0, 1], got {center:g}")
    return Distribution(kind, v, center)


def _zones(kind: str, items: list[str], text) -> tuple[tuple[int, float], ...]:
    """fio's ``zone_split_ddir``: (access %, size % or bytes) per zone."""
    key = "random_distribution"
    absolute = kind == "zoned_abs"
    if "," in str(text):
        raise ValueError(f"{key}: a zoned distribution per direction is not modelled "
                         f"(one list for reads and writes), got {text!r}")
    access_pcts, sizes = [], []
    for item in items:
        if not item.strip():
            break
        a, sep, size = item.partition("/")
        try:
            pct = int(a.strip())
            if absolute:
                val = float(parse_size(size.strip(), key)) if sep else 0.0
            else:
                val = min(int(size.strip()), 100) if sep and size.strip() else None
        except ValueError:
            raise ValueError(f"{key}: expected {kind}:<access %>/<size{' bytes' if absolute else ' %'}>"
                             f":... such as {kind}:60/{'1g' if absolute else '10'}:40/"
                             f"{'9g' if absolute else '90'}, got {text!r}") from None
        if not 0 <= pct <= 100:
            raise ValueError(f"{key}: zone access percentages must be in 0..100, got {text!r}")
        access_pcts.append(pct)
        sizes.append(val)
    if not sizes:
        raise ValueError(f"{key}: {kind} needs at least one <access>/<size> zone, got {text!r}")
    if sum(access_pcts) != 100:
        raise ValueError(f"{key}: the zones' access percentages add up to "
                         f"{sum(access_pcts)}, not 100 ({text!r})")
    if not absolute:
        if sum(v for v in sizes if v is not None) > 100:
            raise ValueError(f"{key}: the zones' size percentages add up to more than 100 "
                             f"({text!r})")
        sizes = share_out(sizes)
    return tuple((a, float(v)) for a, v in zip(access_pcts, sizes))


@lru_cache(maxsize=16)
def _zeta(n: int, theta: float) -> float:
    total, i, stop = 0.0, 1, min(n, _ZIPF_MAX_GEN)
    while i <= stop:
        j = min(stop, i + (1 << 20) - 1)
        total += float(np.sum(np.arange(i, j + 1, dtype=np.float64) ** -theta))
        i = j + 1
    return total


def _stride(n: int) -> int:
    """An odd multiplier near n / golden ratio, coprime with n: rank -> rank * a mod n
    is then a permutation of the region (Fibonacci hashing)."""
    a = max(1, int(n * 0.6180339887498949)) | 1
    while math.gcd(a, n) != 1:
        a += 2
    return a % n if n > 1 else 0


_LOW = 21


def _scatter(rank: np.ndarray, n: int, offset: int, a: int) -> np.ndarray:
    """(rank * a + offset) mod n without overflowing 64 bits (n < 2**42)."""
    r = rank.astype(np.uint64)
    un = np.uint64(n)
    x = (r * np.uint64(a >> _LOW)) % un
    x = (x * np.uint64(1 << _LOW)) % un
    x = (x + r * np.uint64(a & ((1 << _LOW) - 1))) % un
    return ((x + np.uint64(offset % n)) % un).astype(np.int64)


class BlockSampler:
    """Draws block indices in ``[0, n)`` for one job from ``rng``."""

    def __init__(self, dist: Distribution, n: int, rng: np.random.Generator,
                 block_bytes: int = 4096) -> None:
        self.dist = dist
        self.n = int(n)
        self.rng = rng
        if dist.kind == "random":
            return
        if dist.kind in ("zoned", "zoned_abs"):
            self._zone_table(block_bytes)
            return
        if self.n >= 1 << 42:
            raise ValueError(f"random_distribution: {self.n} blocks is more than this sampler "
                             "spreads (2**42)")
        self.stride = _stride(self.n)
        self.offset = (int(rng.integers(0, self.n)) if dist.center is None
                       else int(self.n * dist.center) % self.n)
        if dist.kind == "zipf":
            theta = dist.value
            self.zetan = _zeta(self.n, theta)
            zeta2 = 1.0 + 0.5 ** theta
            self.alpha = 1.0 / (1.0 - theta)
            self.eta = ((1.0 - (2.0 / self.n) ** (1.0 - theta)) / (1.0 - zeta2 / self.zetan)
                        if self.n > 2 else 1.0)
        elif dist.kind == "pareto":
            self.power = np.log(dist.value) / np.log(1.0 - dist.value)
        else:
            self.stddev = min(int(np.ceil(self.n * dist.value / 100.0)), self.n // 2)

    def _zone_table(self, block_bytes: int) -> None:
        """fio's ``zone_state_index``: for each draw 1..100 its zone's first block and
        width in blocks."""
        n, starts, widths = self.n, [], []
        prev = 0.0
        for access, size in self.dist.zones:
            end = prev + size
            if self.dist.kind == "zoned":       # percent of the region's blocks
                first, width = int(prev) * n // 100, n * int(end - prev) // 100
            else:                               # bytes, on the block grid
                first, width = int(prev) // block_bytes, int(end) // block_bytes - int(prev) // block_bytes
                if first + width > n:
                    raise ValueError(f"random_distribution: the zones ({int(end)} bytes) exceed "
                                     f"the job's region ({n * block_bytes} bytes)")
            starts += [first] * access
            widths += [width] * access
            prev = end
        self.zone_first = np.array(starts, np.int64)
        self.zone_width = np.array(widths, np.float64)

    def draw(self, count: int) -> np.ndarray:
        rng, n, kind = self.rng, self.n, self.dist.kind
        if kind == "random":
            return rng.integers(0, n, count)
        if kind in ("zoned", "zoned_abs"):
            zone = rng.integers(0, 100, count)
            within = np.floor(rng.random(count) * self.zone_width[zone]).astype(np.int64)
            return np.minimum(self.zone_first[zone] + within, n - 1)
        if kind == "zipf":
            theta = self.dist.value
            u = rng.random(count)
            z = u * self.zetan
            with np.errstate(invalid="ignore", over="ignore"):
                tail = 1 + np.floor(n * np.power(self.eta * u - self.eta + 1.0, self.alpha))
            rank = np.where(z < 1.0, 1, np.where(z < 1.0 + 0.5 ** theta, 2, tail))
            rank = np.clip(np.nan_to_num(rank, nan=n, posinf=n), 1, n).astype(np.int64) - 1
            return _scatter(rank, n, self.offset, self.stride)
        if kind == "pareto":
            rank = np.floor((n - 1) * rng.random(count) ** self.power).astype(np.int64)
            return _scatter(rank, n, self.offset, self.stride)
        s = np.ceil(rng.integers(0, n + 1, (count, 12)).sum(axis=1) / 12.0).astype(np.int64)
        if self.stddev:
            dev = (self.stddev * rng.random(count)).astype(np.int64) - self.stddev // 2
            s = np.clip(s + dev, 0, n - 1)
        return _scatter(np.minimum(s, n - 1), n, self.offset, self.stride)
