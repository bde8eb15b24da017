"""Random read-ahead (``buf_read_ahead_random``, MySQL 5.6 ``buf0rea.cc``;
``innodb_random_read_ahead=ON``).

After a synchronous read of a page: if at least ``5 + 64/8 = 13`` pages of its
64-page area are in the pool, accessed, and recently used (``buf_page_peek_if_young``:
an old page accessed less than ``innodb_old_blocks_time`` ago, or a young page not in
the older quarter of the young sublist), the rest of the area is read asynchronously.
Nothing is done while more than half the pool has reads pending.
"""
from __future__ import annotations

from .base import READ_AHEAD_AREA, ReadAhead
from .linear import IBUF_BITMAP_EVERY

RANDOM_THRESHOLD = 5 + READ_AHEAD_AREA // 8


class RandomReadAhead(ReadAhead):
    name = "random"

    def after_miss(self, page: int):
        low = page - page % READ_AHEAD_AREA
        high = min(low + READ_AHEAD_AREA, self.ctx.layout.n_pages)
        if self.too_many_pending():
            return None
        bp = self.ctx.bp
        recent = 0
        for i in range(low, high):
            if bp.recently_used(i):
                recent += 1
                if recent >= RANDOM_THRESHOLD:
                    return self._read([j for j in range(low, high) if j % IBUF_BITMAP_EVERY != 1])
        return None
