"""The dirty data of a RAID controller's write-back cache: a sorted set of disjoint byte
extents of the array's logical address space.

What it models: overwriting dirty data costs no new cache space (write hits coalesce,
e.g. a redo log rewriting its last block); adjacent writes merge into one extent, so
the destage of a sequential stream is one large member write; destage takes extents in
ascending address order from a cursor that wraps (C-SCAN elevator), so a full cache
is written back as sorted sweeps.

Kept as two parallel sorted lists (``starts``, ``ends``) searched with ``bisect``:
O(log n) search, O(n) memmove inserts in C, no per-byte or per-block Python objects.
Deliberately not modelled: cache lines, clean (read) data, per-sector dirty bitmaps.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right


class DirtyExtents:
    """Disjoint, non-adjacent ``[start, end)`` extents; ``bytes`` is their total."""

    __slots__ = ("starts", "ends", "bytes")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.bytes = 0

    def __len__(self) -> int:
        return len(self.starts)

    def covered(self, start: int, end: int) -> int:
        """Bytes of ``[start, end)`` already dirty."""
        starts, ends = self.starts, self.ends
        i = bisect_right(ends, start)            # first extent ending after start
        n = 0
        while i < len(starts) and starts[i] < end:
            n += min(end, ends[i]) - max(start, starts[i])
            i += 1
        return n

    def add(self, start: int, end: int) -> int:
        """Mark ``[start, end)`` dirty; returns the bytes that were not dirty before."""
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, start)             # first extent that ends at/after start
        j = bisect_right(starts, end)            # extents from i to j-1 touch the range
        if i == j:
            starts.insert(i, start)
            ends.insert(i, end)
            self.bytes += end - start
            return end - start
        old = 0
        for k in range(i, j):
            old += ends[k] - starts[k]
        s = min(start, starts[i])
        e = max(end, ends[j - 1])
        starts[i:j] = [s]
        ends[i:j] = [e]
        added = (e - s) - old
        self.bytes += added
        return added

    def take(self, cursor: int, max_bytes: int) -> tuple[int, int] | None:
        """Remove and return up to ``max_bytes`` of the first extent at or after
        ``cursor`` (wrapping to the lowest), or None when nothing is dirty."""
        starts, ends = self.starts, self.ends
        if not starts:
            return None
        i = bisect_right(ends, cursor)
        if i == len(starts):
            i = 0
        s = max(starts[i], cursor) if starts[i] < cursor < ends[i] else starts[i]
        e = min(ends[i], s + max_bytes)
        if s == starts[i]:
            if e == ends[i]:
                del starts[i]
                del ends[i]
            else:
                starts[i] = e
        elif e == ends[i]:
            ends[i] = s
        else:                                   # from the middle: split the extent
            starts.insert(i + 1, e)
            ends.insert(i + 1, ends[i])
            ends[i] = s
        self.bytes -= e - s
        return s, e
