"""Flushing mechanisms: neighbours in the extent, the background flush batches of each
version (5.1 master thread 100 pages, 5.5 innodb_io_capacity above the dirty limit, back
to back; 5.6 page cleaner flushing PCT_IO(100) a second when idle), the master thread's
10-second part, 5.6 adaptive flushing's pct_for_lsn."""
import math

import pytest

from models.engine.innodb.buffer.cleaner import LSN_MAX
from models.engine.innodb.ops import TableDef
from tests.models.engine.innodb.server.stack import build


def _dirty(srv, pages):
    lsn = srv.redo.lsn
    for p in pages:
        srv.pool.modify(p, lsn)


@pytest.mark.parametrize("neighbors,expected", [(0, 1), (1, 3), (2, 4)])
def test_flush_neighbors_contiguous_or_whole_area(neighbors, expected):
    sim, srv, fs, q = build(innodb_buffer_pool_size="16M", innodb_flush_neighbors=neighbors)
    srv.files.open()
    srv.preload()
    leaf0 = srv.tables["sbtest1"].primary.path(0)[-1]
    base = leaf0 - leaf0 % 64 + 8
    _dirty(srv, [base, base + 1, base + 2, base + 5])   # a gap after base + 2
    box = {}

    def go():
        box["n"] = yield from srv.flusher.flush_list_batch(1, LSN_MAX)
    sim.spawn(go())
    sim.run(until_ns=10**9)
    assert box["n"] == expected
    assert len(srv.pool.flush_list) == 4 - expected
    assert srv.flusher.flushed_neighbors == expected - 1


def _background(version, seconds=3.5, server=False, **kw):
    """The flusher (and the server if ``server``) after ``seconds`` of an idle server
    with 1,200 dirty leaves."""
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="32M", version=version,
                            commit_protocol="mysql51_builtin" if version != "5.6"
                            else "mysql56_binlog_group_commit", **kw)
    srv.preload()
    leaves = (list(srv.pool.old) + list(srv.pool.young))[:1200]
    _dirty(srv, leaves)
    srv.start()
    sim.run(until_ns=int(seconds * 1e9) + 1000)
    srv.stop()
    return (srv.flusher, srv) if server else srv.flusher


def test_background_flush_rate_per_version():
    # three and a half seconds; a batch may overshoot by the neighbours of its last page
    # (before 5.6 the whole 64-page area)
    # above innodb_max_dirty_pages_pct: 5.1 flushes 100 pages a batch (no io_capacity),
    # and the master thread does not sleep after such a batch (skip_sleep): the batches
    # follow each other until the 1,200 pages are written, far more than one a second
    fl = _background("5.1", innodb_max_dirty_pages_pct=0)
    assert fl.flushed_list == 1200 and fl.list_batches >= 8
    assert fl.flushed_list / fl.list_batches < 100 + 64
    # 5.5: PCT_IO(100) = innodb_io_capacity per batch, back to back as well
    fl = _background("5.5", innodb_max_dirty_pages_pct=0, innodb_io_capacity=200)
    assert fl.flushed_list == 1200 and fl.list_batches >= 4
    assert fl.flushed_list / fl.list_batches < 200 + 64
    # below the limit, adaptive off: 5.5 leaves the pages dirty
    assert _background("5.5", innodb_max_dirty_pages_pct=90,
                       innodb_adaptive_flushing=False).flushed_list == 0
    # 5.6: an idle server's page cleaner flushes PCT_IO(100) whatever the dirty share,
    # and sleeps between its loops: one batch a second
    fl = _background("5.6", innodb_max_dirty_pages_pct=90, innodb_io_capacity=200)
    assert 600 <= fl.flushed_list < 3 * (200 + 64) and fl.list_batches == 3


@pytest.mark.parametrize("dirty_pct,busy_ios,pending,expected", [
    (50, 0, 0, [200, 20]),        # spare I/O capacity: PCT_IO(100), then PCT_IO(10)
    (75, 0, 0, [200, 200]),       # more than 70 % dirty: PCT_IO(100) for the checkpoint
    (50, 400, 0, [20]),           # PCT_IO(200) I/Os in the last 10 s: no spare capacity
    (50, 399, 0, [200, 20]),
    (50, 0, 6, [20]),             # PCT_IO(3) I/Os pending: none either
    (75, 400, 6, [200])])
def test_master_thread_ten_second_part(dirty_pct, busy_ios, pending, expected):
    """``srv_master_thread``'s flushing after every ten 1-second loops (5.1, 5.5,
    XtraDB): asked batch by batch, from the state the batch before left."""
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="16M", version="5.5",
                            innodb_io_capacity=200, commit_protocol="mysql51_builtin")
    srv.preload()
    pool, pol = srv.pool, srv.cleaner.policy
    leaves = list(pool.old) + list(pool.young)
    _dirty(srv, leaves[:int(dirty_pct / 100 * (pool.lru_len() + pool.free)) + 1])
    assert (pool.dirty_pct() > 70) == (dirty_pct > 70)
    pol.n_ios_very_old = pol.n_ios() - busy_ios
    for p in leaves[-pending:] if pending else []:
        pool.reading[p] = None
    assert [b.pages for b in pol.ten_second_batches()] == expected
    assert pol.n_ios_very_old == pol.n_ios()            # the next ten seconds start


@pytest.mark.parametrize("version,dirty_pct,redo_bytes,pages,skip", [
    ("5.5", 90, 10**12, 200, True),          # native rate capped at PCT_IO(100): no sleep
    ("5.5", 90, 10**6, None, False),
    ("5.5", 0, 0, 200, True),                # above innodb_max_dirty_pages_pct
    ("percona_5.5", 90, 10**12, 200, False),  # XtraDB 5.5 sleeps on either way
    ("percona_5.5", 0, 0, 200, False)])
def test_master_thread_skips_its_sleep_after_a_full_pct_io_batch(
        version, dirty_pct, redo_bytes, pages, skip):
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="16M", version=version,
                            innodb_io_capacity=200, innodb_max_dirty_pages_pct=dirty_pct,
                            commit_protocol="mysql51_builtin")
    srv.preload()
    leaves = list(srv.pool.old) + list(srv.pool.young)
    _dirty(srv, leaves[:100])
    pol = srv.cleaner.policy
    pol.stat_hist.append((redo_bytes, 0))
    batch = pol.plan(True)
    assert (batch.pages if batch else None) == pages
    assert pol.skip_sleep is skip


def test_ten_second_part_flushes_every_ten_seconds_not_on_the_page_cleaner():
    # 5.5 with adaptive flushing off writes nothing below the dirty limit until the
    # tenth loop: then PCT_IO(100) (an idle server has spare I/O) and PCT_IO(10)
    # (1,200 of 2,048 pages dirty: under 70 %), neighbours of the last page included
    for seconds, lo, hi in ((9.5, 0, 0), (10.5, 220, 220 + 2 * 64)):
        fl, srv = _background("5.5", seconds, server=True, innodb_max_dirty_pages_pct=90,
                              innodb_adaptive_flushing=False, innodb_io_capacity=200)
        assert lo <= fl.flushed_list <= hi
        assert srv.cleaner.flushed_ten_second == fl.flushed_list
        assert fl.list_batches == (2 if lo else 0)
    fl, srv = _background("5.6", 10.5, server=True, innodb_max_dirty_pages_pct=90,
                          innodb_io_capacity=200)
    assert srv.cleaner.flushed_ten_second == 0 and fl.flushed_list > 0


def test_pct_for_lsn_is_af_get_pct_for_lsn():
    sim, srv, fs, q = build(innodb_io_capacity=200, innodb_io_capacity_max=2000)
    bg, ck = srv.cleaner.policy, srv.ckpt
    lwm = 0.10 * ck.capacity
    assert bg.pct_for_lsn(int(lwm) - 1) == 0
    age = ck.max_modified_age_async
    assert bg.pct_for_lsn(age) == pytest.approx(10 * 100 * math.sqrt(100) / 7.5)
    half = bg.pct_for_lsn(age // 2)
    assert 0 < half < bg.pct_for_lsn(age)
    sim, srv, fs, q = build(innodb_adaptive_flushing=False)
    assert srv.cleaner.policy.pct_for_lsn(srv.ckpt.max_modified_age_async // 2) == 0
    assert srv.cleaner.policy.pct_for_lsn(srv.ckpt.max_modified_age_async) > 0


def test_pct_for_lsn_divides_as_the_source_does():
    # af_get_pct_for_lsn's lsn_age_factor and io_capacity_max / io_capacity are integer
    # quotients: 700 under the default maximum 2000 is a factor of 2 (not 2.86), and an
    # age 99.9 % of the async point is a factor of 99
    sim, srv, fs, q = build(innodb_io_capacity=700)
    bg, ck = srv.cleaner.policy, srv.ckpt
    assert bg.io_capacity_max == 2000
    age = ck.max_modified_age_async
    assert bg.pct_for_lsn(age) == pytest.approx(2 * 100 * math.sqrt(100) / 7.5)
    assert bg.pct_for_lsn(age - age // 1000 - 1) == pytest.approx(2 * 99 * math.sqrt(99) / 7.5)


def _free_check_past_async(version, busy=False):
    """A user thread's ``log_free_check`` with the checkpoint age between the async and
    the sync point (200 dirty leaves, ages spread from just past the async point down to
    half of it); ``busy``: another flush-list batch is running. Returns the simulated
    ns the thread spent, the pages flushed and the preflush count."""
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="32M", innodb_log_file_size="4M",
                            version=version, ram_MBps=20.0,
                            commit_protocol="mysql51_builtin" if version != "5.6"
                            else "mysql56_binlog_group_commit")
    srv.files.open()
    srv.preload()
    ck = srv.ckpt
    srv.redo.lsn += 4 * ck.max_checkpoint_age
    ck.last_checkpoint_lsn = srv.redo.lsn                     # no checkpoint due
    a = ck.max_modified_age_async
    past = (ck.max_modified_age_sync - a) // 2                 # half-way to the sync point
    leaves = (list(srv.pool.old) + list(srv.pool.young))[:200]
    for i, p in enumerate(leaves):                             # oldest first
        srv.pool.modify(p, srv.redo.lsn - (a + past) + i * (a // 2) // 200)
    box = {}
    if busy:
        from models.sim import Event
        srv.flusher.list_batch_end = Event(sim)

    def user():
        t0 = sim.now_ns
        yield from ck.free_check()
        box["ns"] = sim.now_ns - t0
    sim.spawn(user())
    sim.run(until_ns=10**10)
    return box["ns"], srv.flusher.flushed_list, ck.async_preflushes, ck.sync_waits


def test_55_user_thread_runs_the_async_preflush_itself_56_leaves_it_to_the_cleaner():
    # 5.5 (log_checkpoint_margin): past the async point the thread flushes every page
    # older than oldest + (age - async point) itself and is held until its writes end
    ns, flushed, pre, waits = _free_check_past_async("5.5")
    assert pre == 1 and waits == 0
    assert 0 < flushed < 200                       # not the whole flush list
    assert ns > 1_000_000                          # held for the batch's writes (> 1 ms)
    # another batch running: the thread goes on at once (not urgent)
    ns, flushed, pre, waits = _free_check_past_async("5.5", busy=True)
    assert (ns, flushed, pre) == (0, 0, 0)
    # 5.6: below the sync point a user thread flushes nothing and does not wait
    ns, flushed, pre, waits = _free_check_past_async("5.6")
    assert (ns, flushed, pre, waits) == (0, 0, 0, 0)


def _batch_with_a_page_cleaned_meanwhile(neighbors, pick):
    """A flush-list batch over the dirtied pages ``pick(srv)`` returns (32 MB pool on an
    SSD, doublewrite on); at its first doublewrite write another flush cleans the last
    of them. Returns the server, those pages, the pages io-fixed at that moment and
    what the batch returned."""
    sim, srv, fs, q = build(tables=(TableDef("sbtest1", 100_000, 180, ("k",)),),
                            innodb_buffer_pool_size="32M", innodb_flush_neighbors=neighbors,
                            device="ssd")
    srv.files.open()
    srv.preload()
    pages = pick(srv)
    _dirty(srv, pages)
    box = {}

    def go():
        box["n"] = yield from srv.flusher.flush_list_batch(1 << 30, LSN_MAX)

    def watch():
        while srv.dblwr.writes == 0:
            yield sim.timeout(1000)
        box["fixed"] = len(srv.pool.io_fixed)
        srv.pool.flush_list.pop(pages[-1])
    sim.spawn(go())
    sim.spawn(watch())
    sim.run(until_ns=10**10)
    return srv, pages, box["fixed"], box["n"]


def test_a_batch_fixes_its_pages_chunk_by_chunk():
    # buf_flush_page io-fixes a page as it enters the doublewrite buffer: while the
    # first chunk of a 300-page batch (120 pages in 5.6) is being written, the pages
    # of the later chunks are not fixed (a user thread may latch and change them),
    # and a page written by another flush before its turn is skipped, not written twice
    srv, _, fixed_at_first_write, n = _batch_with_a_page_cleaned_meanwhile(
        0, lambda srv: (list(srv.pool.old) + list(srv.pool.young))[:300])
    pool = srv.pool
    assert fixed_at_first_write == srv.dblwr.batch_pages
    assert n == 299 and srv.flusher.pages_flushed == 299
    assert srv.dblwr.writes == 3 and srv.dblwr.pages_written == 299
    assert not pool.io_fixed and not pool.flush_list


def _three_areas(srv):
    leaf0 = srv.tables["sbtest1"].primary.path(0)[-1]
    base = leaf0 - leaf0 % 64 + 64
    pages = list(range(base, base + 3 * 64))
    assert all(srv.pool.resident(p) for p in pages)
    return pages


def test_a_neighbour_written_by_another_flush_is_not_counted_flushed():
    # innodb_flush_neighbors=2, three whole areas dirty: the batch takes each area's
    # first page and its 63 neighbours (192 pages, two doublewrite chunks); a neighbour
    # of the last area cleaned by another flush before its chunk is neither written
    # nor counted a flushed neighbour
    srv, _, _, n = _batch_with_a_page_cleaned_meanwhile(2, _three_areas)
    assert n == 191 and srv.flusher.flushed_neighbors == 188


def test_the_5_6_lru_batch_leaves_buf_lru_min_len_pages_on_the_lru_list():
    # a small pool of clean pages and a scan depth larger than it: 5.6's LRU batch
    # frees pages from the tail but stops at BUF_LRU_MIN_LEN (256) on the list
    from models.engine.innodb.buffer.flush import BUF_LRU_MIN_LEN
    from tests.models.engine.innodb.server.stack import build
    sim, srv, fs, q = build(innodb_buffer_pool_size="16M", innodb_lru_scan_depth=1024)
    srv.preload()
    assert srv.pool.lru_len() > BUF_LRU_MIN_LEN
    sim.spawn(srv.flusher.lru_tail(1024))
    sim.run(until_ns=10**9)
    assert srv.pool.lru_len() == BUF_LRU_MIN_LEN
