"""Buffered I/O through the page cache: ``write()`` and ``read()``.

``write`` (``generic_perform_write`` with the filesystem's ``write_begin``): syscall
CPU; a journal handle (ext3/ext4: may wait for a checkpoint); read-modify-write - a
write that covers only part of a 4 KB page that is not cached reads the page first,
if the page has a written block (holes, unwritten extents and new pages past the
written data are zero-filled instead); with ``stable_pages`` a wait for pages under
writeback; block allocation (ext3) or reservation (delayed allocation); the copy
(CPU per page); the size and mtime updates; ``balance_dirty_pages``.

``read`` (``do_generic_file_read`` and mm/readahead.c): cached pages are copied; a
missing page starts the synchronous read-ahead, a page carrying the ``PG_readahead``
marker the asynchronous one (``ondemand_readahead``, with the per-file
``file_ra_state`` start / size / async_size). A sequential stream - a read at page 0,
at the page after the previous read, at the expected offset of the current window,
or an oversize read - gets an initial window (``get_init_ra_size``: the request
rounded up to a power of two, x4 or x2 while small, at most ``read_ahead_kb``), then
each next window (``get_next_ra_size``: x4 or x2, at most ``read_ahead_kb``) is read
when the reader reaches the first page of the current window's async part, so the
device works one window ahead of a reader. Each window's missing pages go to the
block layer as one plugged batch of physically contiguous bios (a 4 KB sequential
reader issues 128 KB bios at the default 128 KB). A small read elsewhere reads just
its missing pages and leaves the state alone. ``read_ahead_kb=0``: the missing pages
of the call, nothing more. ``posix_fadvise`` (``Filesystem.fadvise``) sets a file's
window: SEQUENTIAL twice ``read_ahead_kb``, RANDOM none (the call's missing pages, as
FMODE_RANDOM's ``force_page_cache_readahead`` of the request; before 2.6.34 RANDOM
zeroed the window and the kernel read the pages one ``readpage`` at a time - here
one batch), NORMAL back to ``read_ahead_kb``.

Deliberately not modelled: i_mutex between concurrent writers of one file, the
``iov_iter`` fault-in path, mmap; of read-ahead: ``try_context_readahead`` (a
miss after cached pages is read as a random one), the skip of asynchronous
read-ahead on a read-congested queue, ``bdi->io_pages``, ``FMODE_RANDOM``
(``POSIX_FADV_RANDOM``), per-fd state for several opens of one file.
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
    """Generator: ``do_generic_file_read``. Page by page: a missing page starts the
    synchronous read-ahead (``page_cache_sync_readahead``), a page with the
    ``PG_readahead`` marker the asynchronous one (the marker is cleared first), a page
    still being read is waited for. Only the pages that need one of these are visited."""
    cfg = fs.cfg
    yield cfg.syscall_ns
    n = max(0, min(n, f.size_bytes - off))
    if n == 0:
        return 0
    p0, p1 = off // P, -(-(off + n) // P)
    f.ensure(f.npages)
    ra_max = fs.cache.cfg.read_ahead_kb // 4 if f.ra_pages is None else f.ra_pages
    marks = f.ra_marks
    i = p0
    while i < p1:
        if p1 - i == 1:
            j = i if (not f.state.item(i) & CACHED or i in marks) else p1
        else:
            idx = np.flatnonzero((f.state[i:p1] & CACHED) == 0)
            j = i + int(idx[0]) if idx.size else p1
            if marks:
                j = min([m for m in marks if i <= m < j], default=j)
        if j >= p1:
            break
        if not f.state.item(j) & (CACHED | LOCKED):
            marks.discard(j)                # a new page: no marker
            if not ra_max:                  # read-ahead off: the missing pages as they are
                rest = np.arange(j, p1)
                yield from read_pages_wait(fs, f, rest[(f.state[j:p1] & CACHED) == 0], issuer)
                break
            yield from ondemand_readahead(fs, f, j, p1 - j, False, ra_max, issuer)
        if j in marks:
            marks.discard(j)
            if not f.state.item(j) & WRITEBACK:
                yield from ondemand_readahead(fs, f, j, p1 - j, True, ra_max, issuer)
        if not f.state.item(j) & CACHED:
            # in flight (waited for), or not covered by the window: read alone (readpage)
            yield from read_pages_wait(fs, f, np.array([j], np.int64), issuer)
        i = j + 1
    f.ra_prev_page = p1 - 1
    f.lru[p0:p1] = fs.cache.next_tick()
    if cfg.copy_ns_per_page:
        yield cfg.copy_ns_per_page * (p1 - p0)
    return n

# -- read-ahead (mm/readahead.c) --------------------------------------------------------
def init_ra_size(req_pages: int, max_pages: int) -> int:
    """``get_init_ra_size``: the first window of a sequential stream."""
    size = 1 << max(0, req_pages - 1).bit_length()     # roundup_pow_of_two
    if size <= max_pages // 32:
        return 4 * size
    if size <= max_pages // 4:
        return 2 * size
    return max_pages

def next_ra_size(cur_pages: int, max_pages: int) -> int:
    """``get_next_ra_size``: each next window of the stream."""
    return min(4 * cur_pages if cur_pages < max_pages // 16 else 2 * cur_pages, max_pages)

def ondemand_readahead(fs, f: File, offset: int, req_pages: int, hit_marker: bool,
                       max_pages: int, issuer: int):
    """Generator: ``ondemand_readahead`` for page ``offset`` of a read of ``req_pages``
    pages (from ``offset`` to the end of the call)."""
    if offset == 0:
        pass                                            # start of file: initial window
    elif offset in (f.ra_start + f.ra_size - f.ra_async_size, f.ra_start + f.ra_size):
        # the expected offset: push the window forward, ramping its size up
        f.ra_start += f.ra_size
        f.ra_size = next_ra_size(f.ra_size, max_pages)
        f.ra_async_size = f.ra_size
        yield from ra_submit(fs, f, offset, max_pages, issuer)
        return
    elif hit_marker:
        # a marker without matching state (interleaved streams): the pages present after
        # ``offset`` are the old async window (page_cache_next_hole)
        end = min(offset + 1 + max_pages, f.cap)
        holes = np.flatnonzero((f.state[offset + 1:end] & (CACHED | LOCKED)) == 0)
        start = offset + 1 + int(holes[0]) if holes.size else end
        if start - offset > max_pages:
            return
        f.ra_start = start
        f.ra_size = next_ra_size(start - offset + req_pages, max_pages)
        f.ra_async_size = f.ra_size
        yield from ra_submit(fs, f, offset, max_pages, issuer)
        return
    elif req_pages <= max_pages and not 0 <= offset - f.ra_prev_page <= 1:
        # a small read away from the previous one: read as is, keep the state
        yield from read_window(fs, f, offset, req_pages, 0, issuer)
        return
    # initial window (start of file, an oversize read, or a sequential cache miss)
    f.ra_start = offset
    f.ra_size = init_ra_size(req_pages, max_pages)
    f.ra_async_size = f.ra_size - req_pages if f.ra_size > req_pages else f.ra_size
    yield from ra_submit(fs, f, offset, max_pages, issuer)

def ra_submit(fs, f: File, offset: int, max_pages: int, issuer: int):
    """Generator: ``readit:`` and ``ra_submit`` of the window in ``f``'s state."""
    if offset == f.ra_start and f.ra_size == f.ra_async_size:
        # the reader would hit this window's marker at once: merge the next window
        f.ra_async_size = next_ra_size(f.ra_size, max_pages)
        f.ra_size += f.ra_async_size
    yield from read_window(fs, f, f.ra_start, f.ra_size, f.ra_async_size, issuer)

def read_window(fs, f: File, start: int, size: int, async_size: int, issuer: int):
    """Generator: ``__do_page_cache_readahead``: read the pages of [start, start + size)
    (up to the end of the file) that are not in the cache, as one plugged batch of
    physically contiguous bios, and put ``PG_readahead`` on page start + size -
    async_size if this call adds it. Holes and unwritten pages are zero-filled."""
    end = min(start + size, f.npages)
    if end <= start:
        return
    st = f.state
    pages = np.flatnonzero((st[start:end] & (CACHED | LOCKED)) == 0) + start
    if pages.size == 0:
        return
    mark = start + size - async_size
    if async_size and mark < end and not st.item(mark) & (CACHED | LOCKED):
        f.ra_marks.add(mark)
    zero = (f.block[pages] < 0) | ((st[pages] & UNWRITTEN) != 0)
    if zero.any():
        fs.mark_cached(f, pages[zero])
        pages = pages[~zero]
        if pages.size == 0:
            return
    st[pages] |= np.uint8(LOCKED)
    _bios, _evs, gate = fs.writeback.read_pages(f, pages, issuer)
    if gate is not None:
        yield gate
