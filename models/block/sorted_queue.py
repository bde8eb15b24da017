"""A queue of requests kept in sector order (the elevator's rb-tree), with FIFO age.

Entries are ``(offset_bytes, seq, req)`` in a list kept sorted with ``bisect``;
``seq`` is unique, so requests themselves are never compared. Insert and removal are
O(log n) search plus a memmove, which stays cheap up to the 100,000-request queues
that ``nr_requests=100000`` allows.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections import deque

from ..device.request import IORequest


class SortedQueue:
    __slots__ = ("entries", "fifo", "_seq", "_key_of", "_gone")

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, IORequest]] = []
        self.fifo: deque[IORequest] = deque()   # arrival order, lazily pruned
        self._seq = 0
        self._key_of: dict[int, tuple[int, int]] = {}
        self._gone: set[int] = set()

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, req: IORequest) -> None:
        self._seq += 1
        key = (req.offset_bytes, self._seq)
        self._key_of[id(req)] = key
        insort(self.entries, (key[0], key[1], req))
        self.fifo.append(req)

    def remove(self, req: IORequest) -> None:
        key = self._key_of.pop(id(req))
        i = bisect_left(self.entries, key)
        del self.entries[i]
        self._gone.add(id(req))

    def oldest(self) -> IORequest | None:
        fifo, gone = self.fifo, self._gone
        while fifo and id(fifo[0]) in gone:
            gone.discard(id(fifo.popleft()))
        return fifo[0] if fifo else None

    def next_after(self, key: tuple[int, int] | None) -> IORequest | None:
        """First request in sector order after ``key`` (None: from the lowest sector)."""
        if not self.entries:
            return None
        i = 0 if key is None else bisect_right(self.entries, key)
        return self.entries[i][2] if i < len(self.entries) else None

    def key(self, req: IORequest) -> tuple[int, int]:
        return self._key_of[id(req)]
