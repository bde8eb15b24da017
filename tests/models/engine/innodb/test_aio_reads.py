"""A tablespace's reads into the server's buffer pool: synchronous misses through the
block layer, LRU midpoint insertion, read-ahead's aio slots and multi-page submits."""
from models.device.request import READ
from tests.models.engine.innodb.scan_stack import reads

KB = 1024
PAGE = 16 * KB
SIZES = {"1m": 2**20, "4m": 4 * 2**20, "16m": 16 * 2**20}


def _pool(pool="1m", queue_depth=1, service_ns=100_000, offset=1 << 20,
          innodb_old_blocks_time=1000, innodb_read_io_threads=4):
    return reads(SIZES[pool], queue_depth, service_ns, offset,
                 read_io_threads=innodb_read_io_threads, old_blocks_time=innodb_old_blocks_time)


def _read(sim, bp, page, access=1):
    ev = bp.fetch(page)
    if ev is not None:
        sim.run()
        assert ev.triggered
    for _ in range(access):
        bp.access(page)


def test_miss_is_one_16k_read_at_the_pages_file_offset_then_a_hit():
    sim, dev, blk, bp = _pool()
    ev = bp.fetch(5)
    assert ev is not None and not ev.triggered
    sim.run()
    assert ev.triggered and dev.served == [(0, READ, (1 << 20) + 5 * PAGE, PAGE)]
    assert bp.fetch(5) is None
    st = bp.stats()
    assert (st["bp_read_requests"], st["bp_sync_reads"], st["bp_hit_rate"]) == (2, 1, 0.5)


def test_a_page_being_read_ahead_is_waited_for_not_read_twice():
    sim, dev, blk, bp = _pool()
    n, gate = bp.read_async([7, 8])
    assert n == 2 and gate is None
    ev = bp.fetch(8)
    assert ev is not None
    sim.run()
    assert ev.triggered and len(dev.served) == 2
    assert bp.stats()["bp_sync_reads"] == 0 and bp.stats()["bp_pending_waits"] == 1


def test_old_sublist_holds_innodb_old_blocks_pct_of_the_list():
    sim, dev, blk, bp = _pool(pool="4m", queue_depth=32, service_ns=1000)
    for p in range(1000):
        _read(sim, bp, p, access=0)
    assert len(bp) == bp.capacity == 256
    old, young = bp.pool.old, bp.pool.young
    assert abs(len(old) - 0.37 * 256) <= 20
    # pages read once enter the old sublist and leave it in read order: the old
    # sublist is the most recent reads, the young one what the pool filled up with
    assert list(old) == list(range(1000 - len(old), 1000))
    assert max(young) < 256


def test_innodb_old_blocks_time_keeps_a_scan_from_evicting_hot_pages():
    def run(old_blocks_time):
        sim, dev, blk, bp = _pool(pool="1m", queue_depth=32, service_ns=1000,
                                  innodb_old_blocks_time=old_blocks_time)
        hot = list(range(30))
        for p in hot:
            _read(sim, bp, p)
        sim.after(2_000_000_000, lambda _a: None)
        sim.run()                                          # 2 s later: used again
        for p in hot:
            _read(sim, bp, p)
        for p in range(1000, 1300):                       # a scan: two quick touches each
            _read(sim, bp, p, access=2)
        return sum(bp.resident(p) for p in hot)

    assert run(1000) == 30     # scanned pages stay old and are evicted first
    assert run(0) < 30         # every second touch makes a scanned page young


def test_pages_per_submit_lets_the_block_layer_merge_a_batch():
    sim, dev, blk, bp = _pool(pool="4m")
    bp.read_async(range(64), pages_per_submit=64)
    sim.run()
    assert [s[3] for s in dev.served] == [512 * KB, 512 * KB]
    sim, dev, blk, bp = _pool(pool="4m")
    bp.read_async(range(64), pages_per_submit=1)
    sim.run()
    # the first single-page io_submit goes straight to the idle device; the rest queue
    # behind it and merge in the scheduler
    sizes = [s[3] for s in dev.served]
    assert sizes[0] == PAGE and sum(sizes) == 64 * PAGE and len(sizes) > 2
    assert bp.stats()["bp_io_submits"] == 64


def test_no_free_aio_slot_makes_the_submitter_wait():
    sim, dev, blk, bp = _pool(pool="16m", queue_depth=32, service_ns=10_000,
                              innodb_read_io_threads=1)
    n, gate = bp.read_async(range(600), pages_per_submit=1)
    assert n == 600 and gate is not None and not gate.triggered
    assert bp.aio_in_flight == 256
    max_in_flight = []
    gate.add_callback(lambda _v: max_in_flight.append(bp.aio_in_flight))
    sim.run()
    assert gate.triggered and max_in_flight[0] <= 256
    assert all(bp.resident(p) for p in range(600))


def test_read_ahead_pages_evicted_unused_are_counted():
    sim, dev, blk, bp = _pool(pool="1m", queue_depth=32, service_ns=1000)
    bp.read_async(range(40))
    sim.run()
    bp.read_async(range(40, 80))
    sim.run()
    assert bp.stats()["bp_read_ahead_evicted"] == 16
    assert bp.stats()["bp_async_reads"] == 80
