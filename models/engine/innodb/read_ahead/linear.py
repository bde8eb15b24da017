"""Linear read-ahead (``buf_read_ahead_linear``, MySQL 5.6 ``buf0rea.cc``).

On the first access of a page that is the first or last page of its 64-page area:
if at most ``64 - innodb_read_ahead_threshold`` pages of the area are not in the pool,
not yet accessed, or accessed out of order (descending access times towards the low
border, ascending towards the high one), and the page's FIL_PAGE_NEXT (at the high
border) is the first page of another area - or its FIL_PAGE_PREV (at the low border)
the last page of one - with the page's other neighbour physically adjacent, all
pages of that other area are read asynchronously. Nothing is done while more than
half the pool has reads pending. The area of the next leaf in key order is
prefetched, which on a fragmented table is rarely where the scan goes next.
"""
from __future__ import annotations

from .base import READ_AHEAD_AREA, ReadAhead

IBUF_BITMAP_EVERY = 16384     # page 1 of every 16,384 is an insert-buffer bitmap page


class LinearReadAhead(ReadAhead):
    name = "linear"

    def on_first_access(self, page: int):
        area = READ_AHEAD_AREA
        low = page - page % area
        high = low + area
        n_pages = self.ctx.layout.n_pages
        if (page != low and page != high - 1) or high > n_pages:
            return None
        if self.too_many_pending():
            return None
        ascending = page == high - 1
        threshold = min(area - self.ctx.cfg.innodb_read_ahead_threshold, area)
        bp = self.ctx.bp
        first_access, sp = bp.first_access, bp.space
        fail = 0
        pred_t = 0
        for i in range(low, high):
            t = first_access.get(sp | i, 0)
            if not t:
                fail += 1
            elif pred_t and t != pred_t and (t > pred_t) != ascending:
                fail += 1
            if fail > threshold:
                return None
            if t:
                pred_t = t
        prev, nxt = self.ctx.prev_next(page)
        if page == low and nxt == page + 1:
            new = prev
        elif page == high - 1 and prev == page - 1:
            new = nxt
        else:
            return None
        if new < 0:
            return None
        low = new - new % area
        high = low + area
        if (new != low and new != high - 1) or high > n_pages:
            return None
        return self._read([i for i in range(low, high) if i % IBUF_BITMAP_EVERY != 1])
