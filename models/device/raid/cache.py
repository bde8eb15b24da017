"""The dirty data of a RAID controller's write-back cache: a sorted set of disjoint byte
extents of the array's logical address space.

What it models: overwriting dirty data costs no new cache space (write hits coalesce,
e.g. a redo log rewriting its last block); adjacent writes merge into one extent, so
the destage of a sequential stream is one large member write. Destage takes either
the oldest extent first (``take_oldest``: the order the data was written; an extent's
age is that of its oldest byte) or extents in ascending address order from a cursor
that wraps (``take``: a C-SCAN elevator, so a full cache is written back as sorted
sweeps).

Kept as parallel sorted lists (``starts``, ``ends``, ``ages``) searched with ``bisect``
- O(log n) search, O(n) memmove inserts in C, no per-byte or per-block Python objects -
and, for ``take_oldest``, a heap of (age, start) entries checked against the lists
when popped (entries of merged or destaged extents are skipped).
``CacheLines`` is the space accounting: the controller's cache is managed in lines, and
a line holding anything dirty or being destaged is in use. Deliberately not modelled:
clean (read) data, per-sector dirty bitmaps.
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right


class DirtyExtents:
    """Disjoint, non-adjacent ``[start, end)`` extents; ``bytes`` is their total;
    ``ages`` the sequence number of each extent's oldest write."""

    __slots__ = ("starts", "ends", "ages", "bytes", "by_age", "_seq", "_heap")

    def __init__(self, by_age: bool = False) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.ages: list[int] = []
        self.bytes = 0
        self.by_age = by_age                        # keep the heap ``take_oldest`` needs
        self._seq = 0
        self._heap: list[tuple[int, int]] = []     # (age, start), validated lazily

    def _push(self, age: int, start: int) -> None:
        if self.by_age:
            heapq.heappush(self._heap, (age, start))

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
        starts, ends, ages = self.starts, self.ends, self.ages
        i = bisect_left(ends, start)             # first extent that ends at/after start
        j = bisect_right(starts, end)            # extents from i to j-1 touch the range
        if i == j:
            self._seq += 1
            starts.insert(i, start)
            ends.insert(i, end)
            ages.insert(i, self._seq)
            self._push(self._seq, start)
            self.bytes += end - start
            return end - start
        old = 0
        for k in range(i, j):
            old += ends[k] - starts[k]
        s = min(start, starts[i])
        e = max(end, ends[j - 1])
        oldest = min(range(i, j), key=ages.__getitem__)
        age = ages[oldest]
        moved = s != starts[oldest]
        starts[i:j] = [s]
        ends[i:j] = [e]
        ages[i:j] = [age]
        if moved:
            self._push(age, s)
        added = (e - s) - old
        self.bytes += added
        return added

    def take_oldest(self, max_bytes: int) -> tuple[int, int] | None:
        """Remove and return up to ``max_bytes`` from the start of the extent written
        longest ago, or None when nothing is dirty."""
        starts, ends, ages, heap = self.starts, self.ends, self.ages, self._heap
        if not starts:
            return None
        while True:
            age, s = heapq.heappop(heap)
            i = bisect_right(starts, s) - 1
            if i >= 0 and starts[i] == s and ages[i] == age:
                break
        e = min(ends[i], s + max_bytes)
        if e == ends[i]:
            del starts[i], ends[i], ages[i]
        else:
            starts[i] = e
            self._push(age, e)
        self.bytes -= e - s
        return s, e

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
        ages = self.ages
        if s == starts[i]:
            if e == ends[i]:
                del starts[i], ends[i], ages[i]
            else:
                starts[i] = e
                self._push(ages[i], e)
        elif e == ends[i]:
            ends[i] = s
        else:                                   # from the middle: split the extent
            starts.insert(i + 1, e)
            ends.insert(i + 1, ends[i])
            ages.insert(i + 1, ages[i])
            self._push(ages[i], e)
            ends[i] = s
        self.bytes -= e - s
        return s, e


class CacheLines:
    """The cache lines holding dirty or destaging data (``line_bytes`` each)."""

    __slots__ = ("line_bytes", "lines")

    def __init__(self, line_bytes: int) -> None:
        self.line_bytes = line_bytes
        self.lines: set[int] = set()

    @property
    def used_bytes(self) -> int:
        return len(self.lines) * self.line_bytes

    def _range(self, start: int, end: int) -> range:
        L = self.line_bytes
        return range(start // L, (end - 1) // L + 1)

    def need(self, start: int, end: int) -> int:
        """Bytes of new lines ``[start, end)`` would take."""
        lines = self.lines
        return self.line_bytes * sum(1 for k in self._range(start, end) if k not in lines)

    def take(self, start: int, end: int) -> None:
        self.lines.update(self._range(start, end))

    def release(self, start: int, end: int, in_use) -> None:
        """Free the lines of ``[start, end)`` for which ``in_use(a, b)`` is False."""
        L, lines = self.line_bytes, self.lines
        for k in self._range(start, end):
            if k in lines and not in_use(k * L, (k + 1) * L):
                lines.discard(k)
