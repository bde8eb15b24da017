"""The buffer pool that writes and its flushing: ``lru`` (midpoint LRU, shared with the
full scan's pool), ``pool`` (frames, free list, flush list, page states), ``flush``
(flush-list / LRU / single-page flushes, neighbours), ``dblwr`` (doublewrite buffer),
``cleaner`` (page cleaner / master thread once a second)."""
