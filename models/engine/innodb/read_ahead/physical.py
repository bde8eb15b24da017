"""Physical read-ahead: a buffer-pool warm-up that reads the whole .ibd file in file
order before the scan (Facebook's ``buf_warmup()`` UDF), every page - secondary-index
pages, non-leaf pages and free pages included - so the scan that follows finds its
leaves in memory.

The reads are asynchronous, in file order, ``aio_pages_per_submit`` per
``io_submit()`` and bounded by the aio slots, so the disk sees a sequential stream.
When the file has more pages than the buffer pool (``warmup_oversize``): ``refuse``
skips the warm-up; ``partial`` reads only the first pool-size pages of the file;
``full`` reads the whole file anyway, the pool keeping only its last pages (the
warm-up evicts its own earlier pages).
"""
from __future__ import annotations

from .base import ReadAhead


class PhysicalWarmup(ReadAhead):
    name = "physical"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.refused = 0
        self.warmup_ns = 0
        self.warmup_pages = 0

    def before_scan(self):
        ctx = self.ctx
        bp = ctx.bp
        n = ctx.layout.n_pages
        room = bp.capacity - len(bp)
        if n > room:
            mode = ctx.cfg.warmup_oversize
            if mode == "refuse":
                self.refused = 1
                return
            if mode == "partial":
                n = max(0, room)
        t0 = ctx.sim.now_ns
        ev = self._read(range(n))
        if ev is not None:
            yield ev
        yield bp.idle_event()
        self.warmup_pages = n
        self.warmup_ns = ctx.sim.now_ns - t0

    def stats(self) -> dict:
        out = super().stats()
        out.update(warmup_refused=self.refused, warmup_s=self.warmup_ns / 1e9,
                   warmup_pages=self.warmup_pages)
        return out
