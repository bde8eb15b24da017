"""MySQL 5.1's built-in InnoDB: the master thread flushes ``PCT_IO(100)`` pages a second
above ``innodb_max_dirty_pages_pct`` and nothing else; ``innodb_io_capacity`` does not
exist, so ``PCT_IO(100)`` = 100 pages (``srv0srv.c`` of 5.1). Published behaviour
(the MySQL 5.1 source), not reconstructed."""
from __future__ import annotations

from .base import MasterThread


class MySQL51(MasterThread):
    name = "mysql51"

    def __init__(self, cfg, pool, flusher, ckpt) -> None:
        super().__init__(cfg, pool, flusher, ckpt)
        self.io_capacity = 100
