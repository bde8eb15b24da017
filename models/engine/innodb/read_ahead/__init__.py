"""InnoDB read-ahead policies for a full-table scan, one module per policy.

``base`` holds the configuration and the hooks a scan calls; ``linear`` and
``random`` are stock InnoDB (``buf_read_ahead_linear`` / ``buf_read_ahead_random``),
``physical`` a buffer-pool warm-up that reads the whole .ibd file sequentially, and
``logical`` Facebook's logical read-ahead over the clustered index's level-1 pages.
"""
from .base import READ_AHEAD_MODES, ReadAhead, ReadAheadConfig, make_read_ahead

__all__ = ["READ_AHEAD_MODES", "ReadAhead", "ReadAheadConfig", "make_read_ahead"]
