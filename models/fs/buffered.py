"""Buffered I/O through the page cache: ``write()`` and ``read()``.

``write`` (``generic_perform_write`` with the filesystem's ``write_begin``): syscall
CPU; a journal handle (ext3/ext4: may wait for a checkpoint); read-modify-write - a
write that covers only part of a 4 KB page that is not cached reads the page first,
if the page has a written block (holes, unwritten extents and new pages past the
written data are zero-filled instead); with ``stable_pages`` a wait for pages under
writeback; block allocation (ext3) or reservation (delayed allocation); the copy
(CPU per page); the size and mtime updates; ``balance_dirty_pages``.

``read``: cached pages are copied; missing pages are read in physically contiguous
bios, with a sequential read-ahead window that starts at 4 pages and doubles up to
``read_ahead_kb`` (``ondemand_readahead`` without its async-marker refinements).

Deliberately not modelled: i_mutex between concurrent writers of one file, the
``iov_iter`` fault-in path, mmap.
"""
from __future__ import annotations

import numpy as np

from ..sim import all_of
from .config import PAGE_BYTES
from .file import CACHED, DELALLOC, DIRTY, LOCKED, UNWRITTEN, WRITEBACK, File
from .writeback import NOT_ON_DEVICE

P = PAGE_BYTES


def write(fs, f: File, off: int, n: int, issuer: int, per_block_calls: bool = False):
    # The steps that may sleep are entered only when their own test says they will
    # (journal space, a collision with the committing transaction, a read-modify-write,
    # the dirty limit): the common write is straight-line code between its two sleeps.
    cfg, cache, policy = fs.cfg, fs.cache, fs.policy
    p0, p1 = off // P, -(-(off + n) // P)
    yield cfg.syscall_ns * ((p1 - p0) if per_block_calls else 1)
    if n == 0:
        return 0
    if p1 > f.cap:
        f.ensure(p1)
    if policy.write_starts_handle and fs.journal.handle_must_wait():
        yield from fs.journal.start_handle()
    need = partial_pages_to_read(f, off, off + n, p0, p1)
    if need:
        fs.stats_rmw_reads += len(need)
        yield from read_pages_wait(fs, f, np.array(need, np.int64), issuer)
    if policy.ordered_collisions and policy.write_collides(fs, f, p0, p1):
        yield from policy.before_data_write(fs, f, p0, p1, issuer)
    if cfg.stable_pages:
        while True:
            busy = f.pages_with(WRITEBACK, p0, p1)
            if busy.size == 0:
                break
            fs.stats_stable_page_waits += 1
            yield from fs.writeback.wait_pages(f, busy)
    one = p1 - p0 == 1          # scalar bookkeeping for the common one-page write
    state = f.state
    if one:
        if f.block.item(p0) < 0 and not state.item(p0) & DELALLOC:
            yield from policy.on_write_holes(fs, f, np.array([p0], np.int64))
    else:
        holes = np.flatnonzero((f.block[p0:p1] < 0) & ((state[p0:p1] & DELALLOC) == 0)) + p0
        if holes.size:
            yield from policy.on_write_holes(fs, f, holes)
    if cfg.copy_ns_per_page:
        yield cfg.copy_ns_per_page * (p1 - p0)
    state = f.state                 # (the sleeps above may have grown the arrays)
    if one:
        s = state.item(p0)
        new_cached = 0 if s & CACHED else 1
        new_dirty = 0 if s & DIRTY else 1
        state[p0] = s | policy.write_flags
        f.wepoch[p0] = NOT_ON_DEVICE
        f.lru[p0] = cache.next_tick()
    else:
        st = state[p0:p1]
        new_cached = int(np.count_nonzero((st & CACHED) == 0))
        new_dirty = int(np.count_nonzero((st & DIRTY) == 0))
        st |= np.uint8(policy.write_flags)
        f.wepoch[p0:p1] = NOT_ON_DEVICE
        f.lru[p0:p1] = cache.next_tick()
    f.nr_cached += new_cached
    if new_dirty:
        f.note_dirty(p0, p1)
    f.nr_dirty += new_dirty
    if new_dirty and f.dirtied_ns < 0:
        f.dirtied_ns = fs.sim.now_ns
    policy.note_data_write(fs, f, p0, p1)
    if off + n > f.size_bytes:
        f.size_bytes = off + n
        policy.size_changed(fs, f)
    update_mtime(fs, f)
    cache.cached(new_cached)
    cache.dirtied(new_dirty)
    if cache.over_limit():
        yield from cache.balance_dirty_pages()
    return n

def update_mtime(fs, f: File) -> None:
    tick = fs.sim.now_ns // fs.policy.timestamp_granularity_ns
    if tick != f.mtime_s:
        f.mtime_s = tick
        fs.policy.touch_mtime(fs, f)

def partial_pages_to_read(f: File, start: int, end: int, p0: int, p1: int) -> list[int]:
    """Read-modify-write: the first/last page of bytes [start, end), if only partly
    overwritten, not cached and backed by a written block, must be read before the
    copy; the pages to read."""
    need = []
    state, block = f.state, f.block
    if start % P and not state.item(p0) & (CACHED | DELALLOC | UNWRITTEN) and block.item(p0) >= 0:
        need.append(p0)
    last = p1 - 1
    if (end % P and (last != p0 or not start % P)
            and not state.item(last) & (CACHED | DELALLOC | UNWRITTEN) and block.item(last) >= 0):
        need.append(last)
    return need

def read_pages_wait(fs, f: File, pages: np.ndarray, issuer: int):
    """Generator: bring ``pages`` into the cache (reading those with written blocks)."""
    st = f.state[pages]
    inflight = pages[(st & LOCKED) != 0]
    todo = pages[(st & (CACHED | LOCKED)) == 0]
    zero = todo[(f.block[todo] < 0) | ((f.state[todo] & UNWRITTEN) != 0)]
    if zero.size:
        fs.mark_cached(f, zero)
    todo = todo[(f.block[todo] >= 0) & ((f.state[todo] & UNWRITTEN) == 0)]
    evs = fs.writeback.pending_events(f, inflight) if inflight.size else []
    if todo.size:
        f.state[todo] |= np.uint8(LOCKED)
        _bios, new_evs, gate = fs.writeback.read_pages(f, todo, issuer)
        evs += new_evs
        if gate is not None:
            yield gate
    if evs:
        yield from fs.wait(all_of(fs.sim, evs))

def read(fs, f: File, off: int, n: int, issuer: int):
    cfg = fs.cfg
    yield cfg.syscall_ns
    n = max(0, min(n, f.size_bytes - off))
    if n == 0:
        return 0
    p0, p1 = off // P, -(-(off + n) // P)
    f.ensure(f.npages)
    ra_max = fs.cache.cfg.read_ahead_kb // 4
    if p0 == f.ra_next and ra_max:
        f.ra_pages = min(max(2 * f.ra_pages, 4), ra_max)
    else:
        f.ra_pages = 0
    f.ra_next = p1
    want = np.arange(p0, p1)
    missing = want[(f.state[p0:p1] & CACHED) == 0]
    if missing.size or f.ra_pages:
        ra_end = min(f.npages, p1 + f.ra_pages)
        if ra_end > p1:
            extra = np.arange(p1, ra_end)
            extra = extra[(f.state[p1:ra_end] & (CACHED | LOCKED)) == 0]
            extra = extra[(f.block[extra] >= 0) & ((f.state[extra] & UNWRITTEN) == 0)]
            if extra.size:
                f.state[extra] |= np.uint8(LOCKED)
                _b, _e, gate = fs.writeback.read_pages(f, extra, issuer, sync=False)
        if missing.size:
            yield from read_pages_wait(fs, f, missing, issuer)
    f.lru[p0:p1] = fs.cache.next_tick()
    if cfg.copy_ns_per_page:
        yield cfg.copy_ns_per_page * (p1 - p0)
    return n
