"""Read-ahead configuration and the hooks a scanning thread calls.

A policy sees the buffer pool, the table layout and the scan's position. The scan
calls, in order: ``before_scan()`` once (a generator the thread runs - a warm-up),
``before_leaf(i)`` before it fetches the i-th leaf in key order (a generator or
None), ``after_miss(page)`` after a synchronous read, and ``on_first_access(page)``
when it touches a page for the first time (what ``buf_page_get_gen`` does before it
calls ``buf_read_ahead_linear``). ``after_miss`` and ``on_first_access`` return None
or an Event the thread waits on (it found no free aio slot).

Modes (``read_ahead``) and the policies each runs:

- ``none``: no read-ahead at all (one synchronous 16 KB read per missing leaf).
- ``linear``: InnoDB's default, linear read-ahead at ``innodb_read_ahead_threshold``.
- ``random``: ``innodb_random_read_ahead=ON`` with linear read-ahead (both stock).
- ``physical``: a warm-up reading the whole .ibd file sequentially before the scan
  (``warmup_oversize`` says what it does when the file exceeds the buffer pool:
  ``refuse`` it, read the ``partial`` file that fits, or read it ``full``y anyway and
  evict its own pages), then the scan with linear read-ahead.
- ``logical``: logical read-ahead (``innodb_lra_size`` MB per batch, scaled by
  ``run.scale`` with the table; ``innodb_lra_sleep`` ms after every
  ``innodb_lra_n_node_recs_before_sleep`` node pointers) with linear read-ahead.

``aio_pages_per_submit`` is how many asynchronous page reads one ``io_submit()``
carries (1 in stock InnoDB; up to all of a read-ahead batch with the multi-page
patch of MySQL bug #68659).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....checks import at_least
from ....sim import Simulator

READ_AHEAD_MODES = ("none", "linear", "random", "physical", "logical")
WARMUP_OVERSIZE = ("refuse", "partial", "full")
READ_AHEAD_AREA = 64        # BUF_READ_AHEAD_AREA: one extent of 16 KB pages
PEND_LIMIT = 2              # BUF_READ_AHEAD_PEND_LIMIT


@dataclass(frozen=True)
class ReadAheadConfig:
    read_ahead: str = "linear"
    innodb_read_ahead_threshold: int = 56
    innodb_lra_size: int = 1024
    innodb_lra_sleep: int = 50
    innodb_lra_n_node_recs_before_sleep: int = 1024
    aio_pages_per_submit: int = 1
    warmup_oversize: str = "partial"

    def __post_init__(self) -> None:
        if self.read_ahead not in READ_AHEAD_MODES:
            raise ValueError(f"read_ahead: must be one of {', '.join(READ_AHEAD_MODES)}, "
                             f"got {self.read_ahead!r}")
        if not 0 <= self.innodb_read_ahead_threshold <= 64:
            raise ValueError("innodb_read_ahead_threshold: must be in 0..64, got "
                             f"{self.innodb_read_ahead_threshold}")
        if not 0 <= self.innodb_lra_size <= 16384:
            raise ValueError(f"innodb_lra_size: must be in 0..16384 (MB), got {self.innodb_lra_size}")
        if self.read_ahead == "logical" and self.innodb_lra_size == 0:
            raise ValueError("innodb_lra_size: must be > 0 for read_ahead=logical")
        if not 0 <= self.innodb_lra_sleep <= 1000:
            raise ValueError(f"innodb_lra_sleep: must be in 0..1000 (ms), got {self.innodb_lra_sleep}")
        at_least(self, 1, "innodb_lra_n_node_recs_before_sleep")
        if not 1 <= self.aio_pages_per_submit <= 1024:
            raise ValueError(f"aio_pages_per_submit: must be in 1..1024, got {self.aio_pages_per_submit}")
        if self.warmup_oversize not in WARMUP_OVERSIZE:
            raise ValueError(f"warmup_oversize: must be one of {', '.join(WARMUP_OVERSIZE)}, "
                             f"got {self.warmup_oversize!r}")


class ScanContext:
    """What a policy may look at: the clock, the buffer pool, the layout."""

    def __init__(self, sim: Simulator, bp, layout, cfg: ReadAheadConfig, scale: float) -> None:
        self.sim = sim
        self.bp = bp
        self.layout = layout
        self.cfg = cfg
        self.scale = scale
        # key-order position of every clustered leaf (FIL_PAGE_PREV / NEXT lookups)
        self.leaf_pos = np.full(layout.n_pages, -1, np.int64)
        self.leaf_pos[layout.leaves] = np.arange(len(layout.leaves))

    def prev_next(self, page: int) -> tuple[int, int]:
        """(FIL_PAGE_PREV, FIL_PAGE_NEXT) of a clustered leaf; (-1, -1) otherwise."""
        i = int(self.leaf_pos[page])
        if i < 0:
            return -1, -1
        leaves = self.layout.leaves
        return (int(leaves[i - 1]) if i > 0 else -1,
                int(leaves[i + 1]) if i + 1 < len(leaves) else -1)


class ReadAhead:
    """A policy that does nothing (the hooks' defaults)."""

    name = "none"

    def __init__(self, ctx: ScanContext) -> None:
        self.ctx = ctx
        self.triggers = 0
        self.pages_requested = 0

    def before_scan(self):
        return
        yield  # a generator that does nothing

    def before_leaf(self, i: int):
        return None

    def after_miss(self, page: int):
        return None

    def on_first_access(self, page: int):
        return None

    def _read(self, pages):
        """Asynchronous reads of ``pages`` (not already in the pool)."""
        n, ev = self.ctx.bp.read_async(pages, self.ctx.cfg.aio_pages_per_submit)
        self.pages_requested += n
        self.triggers += 1
        return ev

    def too_many_pending(self) -> bool:
        bp = self.ctx.bp
        return len(bp.pending) > bp.capacity // PEND_LIMIT

    def stats(self) -> dict:
        return {f"ra_{self.name}_triggers": self.triggers,
                f"ra_{self.name}_pages": self.pages_requested}


def make_read_ahead(ctx: ScanContext) -> list[ReadAhead]:
    """The policies of ``ctx.cfg.read_ahead`` (module docstring)."""
    from .linear import LinearReadAhead
    from .logical import LogicalReadAhead
    from .physical import PhysicalWarmup
    from .random import RandomReadAhead

    mode = ctx.cfg.read_ahead
    if mode == "none":
        return []
    policies: list[ReadAhead] = []
    if mode == "random":
        policies.append(RandomReadAhead(ctx))
    elif mode == "physical":
        policies.append(PhysicalWarmup(ctx))
    elif mode == "logical":
        policies.append(LogicalReadAhead(ctx))
    policies.append(LinearReadAhead(ctx))
    return policies
