"""O_DIRECT: reads and writes that bypass the page cache.

Dirty cached pages of the range are written and the range's clean pages dropped first
(``filemap_write_and_wait_range`` + invalidation); holes are allocated as unwritten
extents (converted, with the size update, when the write completes - a metadata
change ``fdatasync`` must commit); bios of physically contiguous runs go straight to
the block layer and the caller waits for all of them. Unwritten extents and holes read
as zeros without I/O. Offsets and sizes must be 512-byte aligned.

Deliberately not modelled: the fallback to buffered I/O for unaligned or hole-filling
direct writes some filesystems did, AIO (``io_submit``) - a caller wanting several
I/Os in flight starts several ``pwrite``/``pread`` operations at once.
"""
from __future__ import annotations

import numpy as np

from ..device.request import READ, WRITE, IORequest
from .buffered import update_mtime
from .config import PAGE_BYTES
from .file import CACHED, DIRTY, HASDATA, LOCKED, UNWRITTEN, WRITEBACK, File
from .writeback import BIO_MAX_PAGES, runs

P = PAGE_BYTES


def flush_cached_range(fs, f: File, p0: int, p1: int):
    """Before O_DIRECT: write out and drop the range's cached pages."""
    if f.nr_cached == 0 or p0 >= f.cap:
        return
    if f.pages_with(DIRTY | WRITEBACK, p0, p1).size:
        yield from fs.writeback.write_range(f, p0, p1, sync_all=True)
        yield from fs.writeback.wait_range(f, p0, p1)
    cached = f.pages_with(CACHED, p0, p1)
    cached = cached[(f.state[cached] & (DIRTY | WRITEBACK | LOCKED)) == 0]
    if cached.size:
        f.state[cached] &= ~np.uint8(CACHED)
        f.nr_cached -= int(cached.size)
        fs.cache.nr_cached -= int(cached.size)

def contiguous_block(f: File, p0: int, p1: int, op: int) -> int:
    """The first block of pages [p0, p1) if they are one physically contiguous run of
    allocated blocks (and, for a read, none unwritten) no longer than a bio; else -1.
    The common case of a database page (16 KB: 4 pages), on Python ints."""
    n = p1 - p0
    if n > BIO_MAX_PAGES:
        return -1
    blocks = f.block[p0:p1].tolist()
    b0 = blocks[0]
    if b0 < 0 or blocks[-1] - b0 != n - 1 or (n > 2 and blocks != list(range(b0, b0 + n))):
        return -1
    if op == READ:
        for s in f.state[p0:p1].tolist():
            if s & UNWRITTEN:
                return -1
    return b0


def direct_bios(fs, f: File, op: int, off: int, n: int, issuer: int) -> list:
    """Bios for bytes [off, off+n): one per physically contiguous run of written
    blocks (holes and unwritten extents read as zeros without I/O)."""
    p0, p1 = off // P, -(-(off + n) // P)
    b0 = contiguous_block(f, p0, p1, op)
    if b0 >= 0:
        return [IORequest(op, b0 * P + (off - p0 * P), n, None, True, False, issuer)]
    return run_bios(f, op, off, n, issuer)


def run_bios(f: File, op: int, off: int, n: int, issuer: int) -> list:
    """``direct_bios`` of any layout: the runs of the block map, on arrays."""
    p0, p1 = off // P, -(-(off + n) // P)
    pages = np.arange(p0, p1)
    blocks = f.block[p0:p1].copy()
    if op == READ:
        blocks[(f.state[p0:p1] & UNWRITTEN) != 0] = -1
    bios = []
    for s, e in runs(pages, blocks):
        if blocks[s] < 0:
            continue
        lo = max(off, (p0 + s) * P)
        hi = min(off + n, (p0 + e) * P)
        dev = int(blocks[s]) * P + (lo - (p0 + s) * P)
        bios.append(IORequest(op, dev, hi - lo, None, True, False, issuer))
    return bios

def write(fs, f: File, off: int, n: int, issuer: int):
    cfg = fs.cfg
    yield cfg.syscall_ns
    p0, p1 = off // P, -(-(off + n) // P)
    f.ensure(p1)
    yield from flush_cached_range(fs, f, p0, p1)
    if contiguous_block(f, p0, p1, WRITE) < 0:
        holes = np.flatnonzero(f.block[p0:p1] < 0) + p0
        if holes.size:
            yield from fs.allocate(f, holes, unwritten=True)
    bios = direct_bios(fs, f, WRITE, off, n, issuer)
    yield from fs.submit_and_wait(bios)
    f.state[p0:p1] |= np.uint8(HASDATA)
    f.wepoch[p0:p1] = fs.flush_epoch
    fs.policy.end_io(fs, f, p0, p1 - p0)
    if off + n > f.size_bytes:
        f.size_bytes = off + n
        f.disksize_bytes = f.size_bytes
        fs.journal.dirty_meta((fs.layout.inode(f.ino),), f, datasync=True)
    update_mtime(fs, f)
    return n

def read(fs, f: File, off: int, n: int, issuer: int):
    yield fs.cfg.syscall_ns
    n = max(0, min(n, f.size_bytes - off))
    if n == 0:
        return 0
    p0, p1 = off // P, -(-(off + n) // P)
    f.ensure(p1)
    if f.nr_cached and f.pages_with(DIRTY | WRITEBACK, p0, p1).size:
        yield from fs.writeback.write_range(f, p0, p1, sync_all=True)
        yield from fs.writeback.wait_range(f, p0, p1)
    bios = direct_bios(fs, f, READ, off, n, issuer)
    if bios:
        yield from fs.submit_and_wait(bios)
    return n
