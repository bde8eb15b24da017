"""The server's buffer pool and a tablespace's reads into it, on a fake device, for the
scan and read-ahead tests: page ``p`` of the tablespace is the 16 KB at ``offset + p *
16 KB`` of the device (a contiguous file, as ``DataFiles`` reads it with O_DIRECT)."""
from __future__ import annotations

import numpy as np

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, IORequest
from models.engine.innodb.buffer.aio_reads import TablespaceReads
from models.engine.innodb.buffer.pool import WritePool
from models.sim import Event, Simulator
from tests.models.fakes import FixedDevice

PAGE = 16384
MASK = (1 << 32) - 1


class FileReads:
    """``DataFiles``' read calls over one contiguous file at ``offset`` of ``queue``."""

    def __init__(self, sim, queue, offset: int) -> None:
        self.sim, self.queue, self.offset = sim, queue, offset

    def _bio(self, page, on_done):
        return IORequest(READ, self.offset + (page & MASK) * PAGE, PAGE, on_done, True, False, 0)

    def read(self, page):
        ev = Event(self.sim)
        self.queue.submit(self._bio(page, lambda _b: ev.succeed()))
        return ev

    def read_batch(self, pages, on_done):
        bios = [self._bio(p, lambda _b, p=p: on_done(p)) for p in pages]
        self.queue.submit(bios if len(bios) > 1 else bios[0], plug=len(bios) > 1)


def reads(pool_bytes=2**20, queue_depth=1, service_ns=100_000, offset=1 << 20,
          page_kind=None, read_io_threads=4, old_blocks_pct=37, old_blocks_time=1000):
    """(sim, dev, queue, TablespaceReads) of space 0 (pool page ids = page numbers)."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=service_ns, queue_depth=queue_depth)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=512))
    pool = WritePool(sim, max(64, pool_bytes // PAGE), old_blocks_pct, old_blocks_time, None)
    kind = page_kind if page_kind is not None else np.zeros(4096, np.int8)
    return sim, dev, blk, TablespaceReads(sim, pool, FileReads(sim, blk, offset), 0, kind,
                                          read_io_threads)
