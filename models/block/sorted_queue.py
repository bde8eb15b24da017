"""A queue of requests kept in sector order (the elevator's rb-tree), with FIFO age.

Each request gets one integer sort key, ``offset_bytes << SEQ_BITS | seq``
(``IORequest.sort_key``): sector order, ties by arrival (``seq`` counts this queue's
insertions and is unique, so the order is total). The key is set when the request
is queued; an elevator whose tree is keyed on the start sector (deadline) moves a
request that a front merge extended downwards with ``rekey``.

The keys live in a ``sortedcontainers.SortedList`` (plain ints compare in C; a
dict maps a key to its request) - short sorted lists under an index of their
maxima - so insert, removal and the next-after lookup
are O(log n) and the cost per operation stays nearly flat from a few dozen queued
requests to the 100,000 that ``nr_requests=100000`` allows (``python -m
bench.bench_elevator``). The arrival order is an ``OrderedDict`` of FIFO places
(``IORequest.fifo_key``, the arrival number) -> request: O(1) removal of any request,
O(1) oldest, and O(1) ``take_fifo_place`` when a merge hands the absorbed request's
place to the survivor.
"""
from __future__ import annotations

from collections import OrderedDict
from sortedcontainers import SortedList

from ..device.request import IORequest

SEQ_BITS = 40          # 1.1e12 insertions per queue before keys could tie
SEQ_MASK = (1 << SEQ_BITS) - 1
# sublist length of the SortedList: shorter than sortedcontainers' default (1000,
# suited to lists of millions) keeps each sublist's insert/delete memmove small
LOAD = 200


class SortedQueue:
    __slots__ = ("keys", "by_key", "fifo", "_seq")

    def __init__(self) -> None:
        self.keys = SortedList()
        self.keys._reset(LOAD)      # sortedcontainers' load-factor knob
        self.by_key: dict[int, IORequest] = {}
        self.fifo: OrderedDict[int, IORequest] = OrderedDict()   # FIFO place -> request
        self._seq = 0

    def __len__(self) -> int:
        return len(self.fifo)

    def add(self, req: IORequest) -> None:
        self._seq += 1
        seq = self._seq
        req.sort_key = key = req.offset_bytes << SEQ_BITS | seq
        self.keys.add(key)
        self.by_key[key] = req
        req.fifo_key = seq
        self.fifo[seq] = req

    def remove(self, req: IORequest) -> int:
        """Drop ``req`` from the queue; returns its sort key."""
        key = req.sort_key
        self.keys.remove(key)
        del self.by_key[key]
        self.fifo.pop(req.fifo_key, None)   # None: its place went to a merge's survivor
        return key

    def take_fifo_place(self, req: IORequest, absorbed: IORequest) -> None:
        """A merge absorbs ``absorbed`` into ``req``: ``req`` moves to the absorbed
        request's FIFO place (``list_move(&rq->queuelist, &next->queuelist)``), which
        ``absorbed``'s removal then leaves alone."""
        del self.fifo[req.fifo_key]
        self.fifo[absorbed.fifo_key] = req
        req.fifo_key, absorbed.fifo_key = absorbed.fifo_key, -1

    def rekey(self, req: IORequest) -> None:
        """``req``'s start moved (a front merge): move it in sector order, keeping its
        arrival number for ties."""
        old = req.sort_key
        self.keys.remove(old)
        del self.by_key[old]
        req.sort_key = key = req.offset_bytes << SEQ_BITS | (old & SEQ_MASK)
        self.keys.add(key)
        self.by_key[key] = req

    def oldest(self) -> IORequest | None:
        for req in self.fifo.values():
            return req
        return None

    def prev_before(self, key: int) -> IORequest | None:
        """Last request in sector order before sort key ``key``."""
        for k in self.keys.irange(None, key, (True, False), reverse=True):
            return self.by_key[k]
        return None

    def next_after(self, key: int | None) -> IORequest | None:
        """First request in sector order after sort key ``key`` (None: the lowest)."""
        for k in self.keys.irange(key, None, (False, True)):
            return self.by_key[k]
        return None
