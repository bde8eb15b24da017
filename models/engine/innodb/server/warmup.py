"""A warm pool as a long run leaves it: the workload's own page references replayed
through the buffer pool outside simulated time (``InnoDBServer.warm_replay``).

A pool preloaded in table order (``InnoDBServer.preload``) holds the upper B+tree levels
and the first tables' leaves, all clean. A server that has run the workload for a while
holds what its LRU kept - the pages the access skew (TPC-C's NURand) makes hot, of every
table - and its pages are dirty where the workload changed them: once the pool has
turned over, a read needs a frame whose LRU-tail page is as likely dirty as the pages
the workload reads and then changes. The published DBT-2 runs (E3) are in that state
(w/s ~ r/s); a short simulated run from the preloaded pool is not, and a timed warm-up
of the minutes it takes to turn a 2 GB pool over costs more CPU than the run itself.

The replay: transactions from the workload's generator (the caller's: TPC-C's replay has
its own random stream and places its orders in the run's districts, as the run's past),
each operation's pages as the server computes them (``TableLayout.read_pages`` /
``change_pages``; a right-end insert the table's right-most loaded leaf, no leaf is
allocated), through the pool's own code:

- a resident page is accessed (``MidpointLRU.access``: midpoint insertion, made young);
- a missing page takes a free frame, else the first clean page of the LRU tail's
  ``BUF_LRU_SEARCH_SCAN_THRESHOLD`` (``WritePool.warm_insert``), else the LRU-tail
  page, which the replay counts as written (a user thread's single-page flush) - its
  write happens before the measured run and is not simulated;
- each change is a mini-transaction of the server's redo size for its kind (the
  caller's ``redo_bytes``: the record and its undo record's), so the replay's LSN moves
  as the run's does (``redo.lsn_advance``, block headers and trailers included); a
  changed page joins the flush list at the LSN of its first change, and its newest
  modification is its last change's;
- the checkpoint age is kept under the async point (``max_modified_age_async``) the
  way 5.1 / 5.5's free check keeps it there (``log_checkpoint_margin``'s preflush):
  once a change takes the age past it, the oldest dirty pages are written until it is
  back under (counted ``age_flushed``; their writes are not simulated either);
- at its end the log is as that run left it (``RedoLog.warm_start``: written and
  flushed up to the replay's LSN) and a checkpoint is at the oldest dirty page's
  oldest modification: the measured run starts with the dirty pages' oldest
  modifications spread over the redo of the changes that made them dirty, as a
  running server's are, and with that checkpoint age.

It stops once its misses reach ``turnovers`` x the pool's frames, or its page references
``MAX_REFS_PER_FRAME`` times that (a pool that holds about all the data never turns
over). The replay has no timing: its clock moves ``innodb_old_blocks_time`` (at least
1 ms) per transaction, so a page accessed again in a later transaction is made young,
one accessed again within the same transaction is not; afterwards the first-access
times are forgotten, as a preloaded page's are.

Deliberately not modelled: the background flushing during the replay other than the
async point's (a flushing algorithm's - the master thread's, the page cleaner's LRU-tail
and flush-list batches - would have cleaned more pages and kept the age lower: the
dirty fraction left is the one single-page flushes and the async point leave, an upper
bound, and 5.6's page cleaner starts its run above the age it keeps), the neighbours
a preflush writes with each page, the undo pages, the commit records and locks of the
replayed transactions, the leaves their inserts would allocate (rows placed in the
replay are read from the last loaded leaf of their group), and the change buffer: the
replay gets and dirties every secondary leaf a change touches, where the server would
buffer a change to a leaf not in the pool.
"""
from __future__ import annotations

from ..ops import PRIMARY, WRITE_KINDS
from ..redo import lsn_advance

# a pool the workload hardly misses in (a hit rate above 1 - 1/64: one that holds about
# all of the data) never turns over: the replay stops after this many page references
# per frame and turnover
MAX_REFS_PER_FRAME = 64
STATUS_COUNTERS = ("read_requests", "reads", "write_requests", "pages_created",
                   "made_young", "pages_evicted", "wait_free")


class _Clock:
    """The replay's stand-in for the simulator's clock (``now_ns`` only)."""

    __slots__ = ("now_ns",)

    def __init__(self) -> None:
        self.now_ns = 0


def replay(server, transactions, turnovers: float, redo_bytes: dict[str, int]) -> dict:
    """Replay ``transactions`` (an iterator of ``ops.Transaction``) into ``server``'s
    pool until its misses reach ``turnovers`` x its frames (or the iterator ends);
    ``redo_bytes``: the log bytes of a change of each kind. Returns what it did:
    transactions, page references, misses, pages written back (dirty LRU-tail pages
    evicted), pages written to keep the checkpoint age under the async point, and the
    pool's dirty pages and checkpoint age at the end."""
    if server.started:
        raise ValueError("warm_replay: the server has started")
    if not turnovers > 0:
        raise ValueError(f"turnovers: must be > 0, got {turnovers}")
    pool, tables = server.pool, server.tables
    target = int(turnovers * pool.capacity)
    saved = {k: getattr(pool, k) for k in STATUS_COUNTERS}
    clock, sim = _Clock(), pool.sim
    step = max(pool.old_time_ns, 1_000_000)
    pool.sim = clock
    old, young, access, flush_list = pool.old, pool.young, pool.access, pool.flush_list
    right_end: dict[str, int] = {}
    redo, ckpt, newest = server.redo, server.ckpt, pool.newest
    lsn, block, age_limit = redo.lsn, redo.block, ckpt.max_modified_age_async
    popitem = flush_list.popitem
    misses = written = age_flushed = refs = n_trx = 0

    def get(p: int) -> None:
        nonlocal misses, written
        if p in old or p in young:
            access(p)
            return
        misses += 1
        if pool.warm_insert(p):
            written += 1
        access(p)

    try:
        max_refs = MAX_REFS_PER_FRAME * target
        for trx in transactions:
            if misses >= target or refs >= max_refs:
                break
            n_trx += 1
            clock.now_ns += step
            for op in trx.ops:
                tbl = tables[op.table]
                if op.kind in WRITE_KINDS:
                    if op.kind == "insert" and tbl.tdef.clustered_key != "primary":
                        leaf = right_end.get(op.table)
                        if leaf is None:
                            leaf = right_end[op.table] = tbl.primary.path(tbl.rows - 1)[-1]
                        pages, changed = [leaf], [leaf]
                    elif op.key > tbl.rows and tbl.tdef.groups == 1:
                        continue                    # beyond the load: a leaf not allocated
                    else:
                        pages, changed = tbl.change_pages(op)
                else:
                    if op.index == PRIMARY and tbl.tdef.groups == 1 and op.key > tbl.rows:
                        continue
                    pages, changed = tbl.read_pages(op), ()
                refs += len(pages)
                for p in pages:
                    get(p)
                if not changed:
                    continue
                lsn = lsn_advance(lsn, redo_bytes[op.kind], block)
                for p in changed:
                    if p in old or p in young:
                        if p not in flush_list:
                            flush_list[p] = lsn
                        newest[p] = lsn
                # the async point's preflush: the oldest pages, until the age is under it
                while flush_list and lsn - next(iter(flush_list.values())) > age_limit:
                    newest.pop(popitem(last=False)[0], None)
                    age_flushed += 1
    finally:
        pool.sim = sim
    pool.first_access.clear()
    for k, v in saved.items():
        setattr(pool, k, v)
    redo.warm_start(lsn)
    ckpt.last_checkpoint_lsn = pool.oldest_modification() or lsn
    return {"transactions": n_trx, "page_refs": refs, "misses": misses,
            "written": written, "age_flushed": age_flushed,
            "dirty_pages": len(flush_list), "checkpoint_age": ckpt.checkpoint_age()}


def snapshot(server) -> dict:
    """What ``replay`` left in ``server`` (copies): the pool's LRU lists and their
    clocks, its free frames, flush list and newest modifications, the log's LSN and the
    checkpoint. ``restore`` puts them into another server built from the same
    configuration and preloaded the same way - the state the replay would have left
    there (a workload keeps a snapshot to skip replaying the same past again)."""
    pool = server.pool
    return {"young": list(pool.young), "old": list(pool.old),
            "young_clock": dict(pool.young_clock), "evictions": pool.evictions,
            "free": pool.free, "flush_list": list(pool.flush_list.items()),
            "newest": dict(pool.newest), "lsn": server.redo.lsn,
            "checkpoint_lsn": server.ckpt.last_checkpoint_lsn}


def restore(server, snap: dict) -> None:
    """``snap`` (``snapshot``) into ``server``, in place of a ``replay`` (before
    ``start``; the pool's containers are refilled, not replaced)."""
    if server.started:
        raise ValueError("warm_restore: the server has started")
    pool = server.pool
    for name in ("young", "old"):
        lst = getattr(pool, name)
        lst.clear()
        lst.update(dict.fromkeys(snap[name]))
    pool.first_access.clear()
    pool.young_clock.clear()
    pool.young_clock.update(snap["young_clock"])
    pool.evictions, pool.free = snap["evictions"], snap["free"]
    pool.flush_list.clear()
    pool.flush_list.update(snap["flush_list"])
    pool.newest.clear()
    pool.newest.update(snap["newest"])
    server.redo.warm_start(snap["lsn"])
    server.ckpt.last_checkpoint_lsn = snap["checkpoint_lsn"]
