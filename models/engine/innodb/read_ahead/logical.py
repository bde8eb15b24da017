"""Logical read-ahead (Facebook MySQL 5.6, ``innodb_lra_size``; Matsunobu, "Making full
table scan 10x faster in InnoDB", 2013).

The scanning thread walks the clustered index's level-1 pages (reading them through
the buffer pool), collects the page numbers of the next ``innodb_lra_size`` MB of
leaves that are not already in the pool, sorts them by page number and submits them
as asynchronous reads - mostly sequential on disk, and with multi-page
``io_submit()`` (``aio_pages_per_submit``) merged by the block layer into large
requests. Every ``innodb_lra_n_node_recs_before_sleep`` node pointers it releases the
index lock and sleeps ``innodb_lra_sleep`` ms so that writers can take it. Batches
are double-buffered: when the scan enters batch k, batch k+1 is requested; the first
two are requested before the first row is read. Only clustered-index leaves are
prefetched.

The reads take the buffer pool's aio slots (``innodb_read_io_threads`` x 256): a batch
larger than the free slots keeps the scanning thread in submission until all but the
last slots' worth of it has been read, so for large batches the I/O of batch k+1 and
the scan of batch k do not overlap (sleep + I/O + CPU add up), while a batch that fits
the slots is read while the thread scans the previous one.

Scaling: a batch holds ``innodb_lra_size * run.scale`` MB so that it covers the same
share of a scaled-down table; the aio slots are not scaled, so at small scale batches
of a given ``innodb_lra_size`` are more often below the slot count than at full size.

Not modelled: the CPU of the level-1 walk, the index lock itself (nothing else takes
it here), re-traversal when the tree changed since the last batch.
"""
from __future__ import annotations

import numpy as np

from ..tablespace import PAGE_SIZE
from .base import ReadAhead


class LogicalReadAhead(ReadAhead):
    name = "logical"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        cfg = ctx.cfg
        self.batch_leaves = max(1, int(cfg.innodb_lra_size * 2**20 * ctx.scale) // PAGE_SIZE)
        self.sleep_ns = cfg.innodb_lra_sleep * 1_000_000
        self.recs_per_sleep = cfg.innodb_lra_n_node_recs_before_sleep
        self.next_batch = 0
        self.n_leaves = len(ctx.layout.leaves)
        self.recs_since_sleep = 0
        self.sleeps = 0
        self.level1_reads = 0
        self.batches = 0

    def before_leaf(self, i: int):
        if self.next_batch * self.batch_leaves >= self.n_leaves:
            return None
        if self.next_batch > i // self.batch_leaves + 1:
            return None
        return self._issue(i)

    def _issue(self, i: int):
        ctx = self.ctx
        lay = ctx.layout
        bp = ctx.bp
        while (self.next_batch <= i // self.batch_leaves + 1
               and self.next_batch * self.batch_leaves < self.n_leaves):
            start = self.next_batch * self.batch_leaves
            end = min(start + self.batch_leaves, self.n_leaves)
            self.next_batch += 1
            self.batches += 1
            want = []
            leaves = lay.leaves
            if len(lay.level1):
                k = int(np.searchsorted(lay.level1_first, start, side="right")) - 1
                j = start
                while j < end:
                    node = int(lay.level1[k])
                    ev = bp.fetch(node)
                    if ev is not None:
                        self.level1_reads += 1
                        yield ev
                    bp.access(node)
                    stop = min(end, int(lay.level1_first[k] + lay.level1_count[k]))
                    while j < stop:
                        n = min(stop - j, self.recs_per_sleep - self.recs_since_sleep)
                        want.extend(int(p) for p in leaves[j:j + n] if not bp.peek(int(p)))
                        j += n
                        self.recs_since_sleep += n
                        if self.recs_since_sleep >= self.recs_per_sleep:
                            self.recs_since_sleep = 0
                            if self.sleep_ns:
                                self.sleeps += 1
                                yield self.sleep_ns
                    k += 1
            else:
                want = [int(p) for p in leaves[start:end] if not bp.peek(int(p))]
            want.sort()
            ev = self._read(want)
            if ev is not None:
                yield ev

    def stats(self) -> dict:
        out = super().stats()
        out.update(lra_batches=self.batches, lra_batch_pages=self.batch_leaves,
                   lra_sleeps=self.sleeps, lra_sleep_s=self.sleeps * self.sleep_ns / 1e9,
                   lra_level1_reads=self.level1_reads)
        return out
