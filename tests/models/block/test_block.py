"""Block layer: merging up to max_sectors_kb, plugging, nr_requests, schedulers."""
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Simulator
from tests.models.fakes import FixedDevice, PerByteDevice

KB = 1024
MB = 1024 * KB


def _bios(n, size=16 * KB, start=0, op=READ, done=None):
    return [IORequest(op, start + i * size, size, done) for i in range(n)]


def test_batch_of_64_adjacent_reads_merges_into_max_sectors_requests():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    done = []
    assert blk.submit(_bios(64, done=done.append), plug=True) is None
    sim.run()
    assert len(done) == 64
    assert [s[3] for s in dev.served] == [256 * KB] * 4
    st = blk.iostat((0, (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), 0, 0))
    assert blk.counters.ios[READ] == 4 and blk.counters.merges[READ] == 60
    assert st["avgrq_sz"] == 512.0


def test_one_by_one_submission_mostly_does_not_merge():
    """One bio per io_submit, the next when the previous completes (a reader that waits):
    the queue never holds two requests, so nothing merges."""
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    bios = _bios(64)

    def next_one(_done=None):
        if bios:
            assert blk.submit(bios.pop(0)) is None

    for bio in bios:
        bio.on_done = next_one
    next_one()
    sim.run()
    assert len(dev.served) == 64
    assert blk.counters.merges[READ] == 0


def test_one_by_one_submission_merges_behind_a_full_device_queue():
    """64 single-bio submissions at once: 32 fill the device's tags, the rest merge."""
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=32)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    for bio in _bios(64):
        blk.submit(bio)
    sim.run()
    assert [s[3] for s in dev.served] == [16 * KB] * 32 + [256 * KB, 256 * KB]
    assert blk.counters.merges[READ] == 30


def test_queued_requests_merge_when_the_device_is_busy():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=512))
    for bio in _bios(8):
        blk.submit(bio)
    sim.run()
    # the first goes to the device, the other seven merge behind it into one request
    assert [s[3] for s in dev.served] == [16 * KB, 7 * 16 * KB]
    assert blk.counters.merges[READ] == 6


def test_large_bio_is_split_and_completes_once():
    sim = Simulator()
    dev = FixedDevice(sim, queue_depth=4)
    blk = BlockQueue(sim, dev, BlockConfig(max_sectors_kb=256))
    done = []
    blk.submit(IORequest(READ, 0, 1024 * KB, done.append))
    sim.run()
    assert len(done) == 1 and done[0].size_bytes == 1024 * KB
    assert blk.counters.ios[READ] == 4 and blk.counters.merges[READ] == 0


def test_nr_requests_blocks_the_next_submitter_until_a_request_completes():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=4))
    gates = []
    for i in range(5):  # far apart: no merging; five threads (a thread filling the
        # list would go on as a batcher: test_a_thread_that_fills_the_list_...)
        gates.append(blk.submit(IORequest(WRITE, i * 10 * 2**20, 4096, issuer=i + 1)))
    assert gates[:4] == [None] * 4
    fifth = gates[4]
    assert fifth is not None and not fifth.triggered
    woke = []
    fifth.add_callback(lambda _v: woke.append(sim.now_ns))
    sim.run()
    assert woke == [1000]  # the first completion frees a request
    assert blk.counters.ios[WRITE] == 5



def test_a_thread_that_fills_the_list_goes_on_as_a_batcher_to_3_2_nr_requests():
    """get_request: the allocation that fills the list (count + 1 >= nr_requests) marks
    it full and its thread a batcher, which may go on past it - to 3/2 nr_requests
    ("prevent huge request allocations") - while another thread sleeps at once."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=4))
    gates = [blk.submit(IORequest(WRITE, i * 2**20, 4096, issuer=1)) for i in range(7)]
    assert gates[:6] == [None] * 6 and gates[6] is not None
    assert blk.requests_held(op=WRITE) == 6
    assert blk.submit(IORequest(WRITE, 50 * 2**20, 4096, issuer=2)) is not None


def test_a_batch_is_32_requests_or_20_ms():
    """ioc_batching: nr_batch_requests == 32, or some left and within BLK_BATCH_TIME."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10**9, queue_depth=1)      # nothing completes
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=64))
    for i in range(95):                # 63 below the full mark, then a batch of 32
        assert blk.submit(IORequest(WRITE, i * 2**20, 4096, issuer=1)) is None, i
    assert blk.submit(IORequest(WRITE, 200 * 2**20, 4096, issuer=1)) is not None

    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10**9, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=64))
    for i in range(64):                # fills the list: a batch begins, 31 left
        assert blk.submit(IORequest(WRITE, i * 2**20, 4096, issuer=1)) is None
    late = []

    def later(t_ns, off):
        yield t_ns - sim.now_ns
        late.append(blk.submit(IORequest(WRITE, off, 4096, issuer=1)))
    sim.spawn(later(19_000_000, 300 * 2**20))      # within 20 ms: allocates
    sim.spawn(later(21_000_000, 301 * 2**20))      # after: sleeps
    sim.run(until_ns=30_000_000)
    assert late[0] is None and late[1] is not None


def test_a_woken_sleeper_takes_its_batch():
    """A thread woken by a freed request becomes a batcher: its three bios are queued
    at the first completion, not one per completion."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=4))
    for i in range(4):
        blk.submit(IORequest(WRITE, i * 2**20, 4096, issuer=1 + i))
    call = blk.submit([IORequest(WRITE, (10 + i) * 2**20, 4096, issuer=9) for i in range(3)])
    assert call is not None
    woke = []
    call.add_callback(lambda _v: woke.append((sim.now_ns, blk.requests_held(op=WRITE))))
    sim.run()
    assert woke == [(1000, 6)]

def test_blocked_submitter_can_still_merge_without_a_new_request():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=2))
    blk.submit(IORequest(WRITE, 0, 4096, issuer=1))
    blk.submit(IORequest(WRITE, 2**20, 4096, issuer=2))
    assert blk.submit(IORequest(WRITE, 2**20 + 4096, 4096, issuer=3)) is None  # back merge
    assert blk.submit(IORequest(WRITE, 5 * 2**20, 4096, issuer=3)) is not None


def test_bio_merges_while_other_submitters_sleep_for_a_request():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=2))
    blk.submit(IORequest(WRITE, 0, 4096, issuer=1))
    blk.submit(IORequest(WRITE, 2**20, 4096, issuer=2))
    sleeper = blk.submit(IORequest(WRITE, 9 * 2**20, 4096, issuer=3))
    assert sleeper is not None and len(blk.waiting[WRITE]) == 1
    # mergeable: joins the queued request at once, without waiting behind the sleeper
    assert blk.submit(IORequest(WRITE, 2**20 + 4096, 4096, issuer=4)) is None
    # not mergeable: waits behind the sleeper (FIFO)
    assert blk.submit(IORequest(WRITE, 20 * 2**20, 4096, issuer=4)) is not None
    assert len(blk.waiting[WRITE]) == 2



def _full_of_writes(lists, sync, n=2):
    """A noop queue of ``n`` requests per list, its write (or sync) list full (by ``n``
    threads: the later submitters are others, no batchers)."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=n, request_lists=lists))
    for i in range(n):
        assert blk.submit(IORequest(WRITE, i * 2**20, 4096, sync=sync, issuer=10 + i)) is None
    return sim, dev, blk


@pytest.mark.parametrize("lists,sync,reader_sleeps", [
    ("read_write", True, False),     # 2.6.18: a read has its own list
    ("read_write", False, False),
    ("sync_async", False, False),    # 2.6.30+: background writeback's async list
    ("sync_async", True, True),      # ... but O_DIRECT writes share the readers' list
])
def test_a_full_write_list_holds_back_only_requests_of_its_own_list(lists, sync, reader_sleeps):
    sim, dev, blk = _full_of_writes(lists, sync)
    assert blk.submit(IORequest(WRITE, 9 * 2**20, 4096, sync=sync)) is not None
    read = blk.submit(IORequest(READ, 20 * 2**20, 4096))
    assert (read is not None) == reader_sleeps
    sim.run()
    # noop serves in arrival order of requests: the read, once it has one, before the
    # sleeping write; a sleeping read after the write that got the first free request
    order = [(s[1], s[2]) for s in dev.served]
    assert order.index((READ, 20 * 2**20)) == (3 if reader_sleeps else 2)


def test_congestion_counts_the_write_list_only():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(nr_requests=8))     # congested from 8-1+1 = 8
    for i in range(8):
        blk.submit(IORequest(READ, i * 2**20, 4096))
    assert blk.requests_held(op=READ) == 8 and not blk.congested()
    for i in range(7):
        blk.submit(IORequest(WRITE, (20 + i) * 2**20, 4096))
    assert blk.requests_held(op=WRITE) == 7 and not blk.congested()
    blk.submit(IORequest(WRITE, 40 * 2**20, 4096))
    assert blk.congested()


def test_a_sleeping_call_moves_to_the_list_its_next_bio_needs():
    """One io_submit of a write then a read, the write list full: the submitter sleeps
    for a write request, then - the read list free - queues its read at once."""
    sim, dev, blk = _full_of_writes("read_write", True)
    call = blk.submit([IORequest(WRITE, 9 * 2**20, 4096), IORequest(READ, 30 * 2**20, 4096)])
    assert call is not None
    woke = []
    call.add_callback(lambda _v: woke.append((sim.now_ns, blk.requests_held(op=READ))))
    sim.run()
    assert woke == [(1000, 1)]      # the first write completion frees the write request
    assert blk.requests_held(op=READ) == 0 and blk.requests_held(op=WRITE) == 0

def test_deadline_dispatches_in_sector_order_batches():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline", fifo_batch=16))
    offsets = [50, 10, 40, 20, 30]
    for off in offsets:
        blk.submit(IORequest(WRITE, off * 2**20, 4096))
    sim.run()
    # the first went straight to the idle device; the rest in ascending sector order
    assert [s[2] // 2**20 for s in dev.served] == [50, 10, 20, 30, 40]


@pytest.mark.parametrize("contiguous, fifo_batch, step, expected", [
    # 2.6.28+: the batch of 2 ends, the expired write goes next
    (False, 2, MB, [800, 0, 1, 900, 2, 3, 4, 5]),
    # a long batch keeps sweeping in sector order past the expiry
    (False, 100, MB, [800, 0, 1, 2, 3, 4, 5, 900]),
    # 2.6.18: a request that does not start where the last ended ends any batch
    (True, 100, MB, [800, 0, 900, 1, 2, 3, 4, 5]),
    # while each starts where the last ended, the batch goes on
    (True, 100, 4 * KB, [800, 0, 1, 2, 3, 4, 5, 900]),
])
def test_deadline_expiry_is_checked_when_a_batch_ends(contiguous, fifo_batch, step, expected):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10_000_000, queue_depth=1)  # 10 ms per request
    cfg = BlockConfig(scheduler="deadline", write_expire_ms=15, fifo_batch=fifo_batch,
                      max_sectors_kb=4, deadline_contiguous_batches=contiguous)
    blk = BlockQueue(sim, dev, cfg)
    names = {800 * MB: 800, 0: 0, 900 * MB: 900}
    names.update({i * step: i for i in range(1, 6)})
    for off in names:       # 800 MB straight to the idle device, in service 0-10 ms;
        blk.submit(IORequest(WRITE, off, 4096))      # 900 MB expires at 15 ms
    sim.run()
    assert [names[s[2]] for s in dev.served] == expected


@pytest.mark.parametrize("contiguous, expected", [
    # 2.6.18: each sweep that lost its place starts at the lowest sector
    (True, [500, 10, 20, 100, 200, 300]),
    # 2.6.28+: a new batch without a next request starts at the oldest
    (False, [500, 20, 10, 300, 100, 200]),
])
def test_deadline_restarts_a_sweep_at_the_lowest_sector_before_2_6_28(contiguous, expected):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline",
                                           deadline_contiguous_batches=contiguous))
    blk.submit(IORequest(READ, 500 * MB, 4096))       # straight to the idle device
    for op, off in ((WRITE, 300), (WRITE, 100), (WRITE, 200), (READ, 20), (READ, 10)):
        blk.submit(IORequest(op, off * MB, 4096))
    sim.run()
    assert [s[2] // MB for s in dev.served] == expected


@pytest.mark.parametrize("contiguous, expected", [
    # 2.6.18: scattered reads end each batch at once, so every dispatch chooses a
    # direction and counts the writes it passes over: two reads, a write, ...
    (True, "w" + "rrw" + "rrw" + "ww"),
    # 2.6.28+: the reads go as one batch of up to fifo_batch, then the writes
    (False, "w" + "rrrr" + "wwww"),
])
def test_deadline_starves_writes_per_dispatch_when_batches_are_contiguous_only(contiguous, expected):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline", fifo_batch=16, writes_starved=2,
                                           deadline_contiguous_batches=contiguous))
    blk.submit(IORequest(WRITE, 500 * MB, 4096))     # straight to the idle device
    for i in range(4):
        blk.submit(IORequest(WRITE, (600 + i) * MB, 4096))
        blk.submit(IORequest(READ, (10 + i) * MB, 4096))
    sim.run()
    assert "".join("rw"[s[1]] for s in dev.served) == expected


def test_deadline_moves_a_front_merged_request_to_its_new_start():
    """The sector tree is keyed on the start: a request that a front merge extends
    below another queued request's start is served before it."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline", max_sectors_kb=2048))
    blk.submit(IORequest(WRITE, 900 * MB, 4096))     # straight to the idle device
    for off in (5 * MB, 4 * MB + 8 * KB, MB):
        blk.submit(IORequest(WRITE, off, 4096))
    # ends where the 5 MB request starts: a front merge, to 4 MB + 4 KB
    assert blk.submit(IORequest(WRITE, 4 * MB + 4 * KB, MB - 4 * KB)) is None
    sim.run()
    assert [s[2] for s in dev.served] == [900 * MB, MB, 4 * MB + 4 * KB, 4 * MB + 8 * KB]


@pytest.mark.parametrize("scheduler", ["deadline", "cfq"])
def test_a_merge_survivor_takes_the_absorbed_requests_fifo_place(scheduler):
    """deadline_merged_requests / cfq_merged_requests: request A (8 KB) is queued first,
    C far away next, B (0) last; a bio bridging B and A merges into B, which absorbs A
    and takes A's place at the head of the FIFO (deadline: and A's expiry)."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=10**9, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler=scheduler))
    blk.submit(IORequest(WRITE, 90 * MB, 4096, issuer=1))     # dispatched: the device busy
    for t_ns, off in ((0, 8192), (500_000, 50 * MB), (1_000_000, 0), (2_000_000, 4096)):
        sim.at(t_ns, blk.submit, IORequest(WRITE, off, 4096, sync=True, issuer=1))
    sim.run(until_ns=3_000_000)
    q = next(iter(blk.sched.queues.values())) if scheduler == "cfq" else blk.sched.queues[WRITE]
    head = q.oldest()
    assert (head.offset_bytes, head.size_bytes, len(q)) == (0, 12288, 2)
    if scheduler == "deadline":
        assert head.deadline_ns == blk.sched.expire_ns[WRITE]     # A's, queued at 0


def _cfq_order(offsets_mb, service_ns=1_000_000, **cfg):
    """One thread's reads: the first (100 MB) dispatched at once, the rest queued behind
    it at 0; the order the device served them, in MB."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=service_ns, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="cfq", **cfg))
    for off in (100, *offsets_mb):
        blk.submit(IORequest(READ, int(off * MB), 4096, issuer=1))
    sim.run()
    return [s[2] / MB for s in dev.served]


def test_cfq_seeks_back_within_back_seek_max_at_twice_the_cost():
    """cfq_choose_req from the head at 100 MB + 4 KB: 1 MB behind counts 2 MB, so it
    beats 3 MB ahead but not 1.5 MB ahead; 20 MB behind (past back_seek_max, 16 MB)
    goes only when nothing is ahead, and then the lowest first."""
    assert _cfq_order([99, 103]) == [100, 99, 103]
    assert _cfq_order([99, 101.5]) == [100, 101.5, 99]
    assert _cfq_order([80, 200]) == [100, 200, 80]
    assert _cfq_order([80, 60]) == [100, 60, 80]
    assert _cfq_order([99, 103], back_seek_max_kb=0) == [100, 103, 99]


def test_cfq_serves_a_queues_expired_fifo_head_once_a_slice():
    """fifo_expire_sync 125 ms: the read at 900 MB, queued at 0 behind nearer ones, goes
    at the first dispatch after it has waited 125 ms (150 ms: 50 ms a read), then the
    sector order goes on from it (wrapping to the lowest)."""
    order = _cfq_order([900, 101, 102, 103, 104, 105], service_ns=50_000_000,
                       slice_sync_ms=1000)
    assert order == [100, 101, 102, 900, 103, 104, 105]
    assert _cfq_order([900, 101, 102, 103, 104, 105], service_ns=50_000_000,
                      slice_sync_ms=1000, fifo_expire_sync_ms=1000) == \
        [100, 101, 102, 103, 104, 105, 900]


def test_cfq_gives_each_thread_a_slice():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1_000_000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="cfq", slice_sync_ms=3, slice_idle_ms=0))
    for i in range(6):
        for issuer in (1, 2):
            bio = IORequest(READ, (issuer * 1000 + i * 10) * 2**20, 4096, issuer=issuer)
            blk.submit(bio)
    sim.run()
    issuers = [s[2] // 2**20 // 1000 for s in dev.served]
    # 1 ms per request, 3 ms slices that end once a dispatch comes after their end
    # (time_after): the threads alternate four requests at a time
    assert issuers == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2]


def _reader_and_a_backlog(cfg, think_ns=500_000, step=4096, queue_depth=1, n=5):
    """Thread 1 reads ``n`` blocks one at a time, ``think_ns`` after each completes;
    thread 2 queues ``n`` reads far away at 0.1 ms. The order the device served them
    (thread numbers) and the scheduler."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1_000_000, queue_depth=queue_depth)
    blk = BlockQueue(sim, dev, cfg)
    left = [n]

    def next_read(_bio=None):
        if left[0]:
            left[0] -= 1
            off = MB + (n - left[0]) * step
            blk.submit(IORequest(READ, off, 4096, lambda b: sim.after(think_ns, next_read),
                                 issuer=1))
    next_read()
    for i in range(n):
        sim.at(100_000, blk.submit, IORequest(READ, 900 * MB + i * 10 * MB, 4096, issuer=2))
    sim.run()
    return [1 if s[2] < 900 * MB else 2 for s in dev.served], blk.sched


def test_cfq_idles_for_a_thread_that_comes_back_within_slice_idle():
    """2.6.18's slice idling: the reader's queue empties after each read, yet the device
    waits for its next one (0.5 ms later) instead of serving the backlog."""
    order, sched = _reader_and_a_backlog(BlockConfig(scheduler="cfq"))
    assert order == [1] * 5 + [2] * 5
    assert sched.idle_waits == 5
    order, sched = _reader_and_a_backlog(BlockConfig(scheduler="cfq", slice_idle_ms=0))
    assert order == [1] + [2] * 5 + [1] * 4 and sched.idle_waits == 0


def test_cfq_stops_idling_once_the_device_queues_more_than_four():
    """hw_tag: a device seen holding more than 4 requests does command queueing; a queue
    created after that starts with its idle window closed, and an open one closes at
    its thread's next request (2.6.18 never idles again on that device)."""
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1_000_000, queue_depth=8)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="cfq"))
    sched = blk.sched
    for i in range(6):                                       # 5, then 6 in the device
        blk.submit(IORequest(READ, (100 + i) * MB, 4096, issuer=2))
        assert sched.hw_tag == (i >= 4)
    assert not sched.idle_window[("sync", 2)]                # closed at its 6th request
    blk.submit(IORequest(READ, 0, 4096, issuer=1))
    assert not sched.idle_window[("sync", 1)]                # created closed
    sim.run()
    assert sched.idle_waits == 0 and len(dev.served) == 7


def test_cfq_closes_the_idle_window_of_a_thread_that_thinks_longer_than_slice_idle():
    """Think time 10 ms > slice_idle 8 ms: once the average is valid (80 samples of the
    fixed-point decay: the third request) the thread's queue no longer idles."""
    _, sched = _reader_and_a_backlog(BlockConfig(scheduler="cfq"), think_ns=10_000_000, n=8)
    assert not sched.idle_window[("sync", 1)]
    assert sched.idle_waits == 2
    _, sched = _reader_and_a_backlog(BlockConfig(scheduler="cfq"), think_ns=5_000_000, n=8)
    assert sched.idle_window[("sync", 1)] and sched.idle_waits == 8


def test_cfq_idles_2_ms_only_for_a_seeky_thread():
    """A thread whose reads lie more than 64 MB apart on average is seeky: cfq waits
    2 ms for it, so a 3 ms think time loses the device to the backlog, where a
    sequential reader with the same think time keeps it."""
    seq, _ = _reader_and_a_backlog(BlockConfig(scheduler="cfq"), think_ns=3_000_000, n=8)
    assert seq == [1] * 8 + [2] * 8
    seeky, _ = _reader_and_a_backlog(BlockConfig(scheduler="cfq"), think_ns=3_000_000, n=8,
                                     step=100 * MB)
    assert seeky != seq and seeky[:3] == [1, 1, 1]


def test_cfq_lets_the_thread_it_idles_for_allocate_once_a_slice_past_a_full_list():
    """cfq_may_queue / ELV_MQUEUE_MUST: thread 2's five queued reads (a batcher: 3/2 of
    nr_requests 4) keep the read list full. The reader cfq idles for gets one request
    past it in the slice - its second read is served at once -, then sleeps for a
    request like anyone else while cfq idles in vain (2.6.18 before: [1, 2 x 5, 1 x 4])."""
    order, sched = _reader_and_a_backlog(BlockConfig(scheduler="cfq", nr_requests=4))
    assert order == [1, 1] + [2] * 5 + [1] * 3
    assert sched.idle_waits == 4


def test_flush_bypasses_the_scheduler_queue():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=1000, queue_depth=1)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline"))
    for i in range(3):
        blk.submit(IORequest(WRITE, i * 2**20, 4096))
    blk.submit(IORequest(FLUSH, 0, 0))
    sim.run()
    assert [s[1] for s in dev.served] == [WRITE, FLUSH, WRITE, WRITE]
    assert blk.counters.ios[FLUSH] == 1


class WriteThroughDevice(FixedDevice):
    """A drive with its write cache off (``queue/write_cache`` "write through")."""

    write_cache_mode = "write through"


@pytest.mark.parametrize("scheduler", ["deadline", "none"])
def test_a_flush_for_a_drive_without_a_write_cache_completes_at_once_unsent(scheduler):
    from models.block import MQQueue
    done = []
    for kind in (WriteThroughDevice, FixedDevice):
        sim = Simulator()
        dev = kind(sim, service_ns=1000)
        cfg = BlockConfig(scheduler=scheduler)
        blk = MQQueue(sim, dev, cfg) if scheduler == "none" else BlockQueue(sim, dev, cfg)
        blk.submit(IORequest(WRITE, 0, 4096))
        for bios in (IORequest(FLUSH, 0, 0), [IORequest(FLUSH, 0, 0)]):   # one, a list
            flush = bios if type(bios) is IORequest else bios[0]
            flush.on_done = lambda bio: done.append((dev.name, bio.done_ns, sim.now_ns))
            sim.at(0, blk.submit, bios)
        sim.run()
        if dev.write_cache_mode == "write through":
            assert [s[1] for s in dev.served] == [WRITE]
            assert blk.counters.ios[FLUSH] == 0 and done == [(dev.name, 0, 0)] * 2
        else:
            assert [s[1] for s in dev.served] == [WRITE, FLUSH, FLUSH]
            assert blk.counters.ios[FLUSH] == 2
        done.clear()


def test_a_drive_reports_its_write_cache_as_sysfs_does():
    from models.device.hdd import HDD, default_15k_sas
    sim = Simulator()
    assert HDD(sim, "a", default_15k_sas()).write_cache_mode == "write through"
    assert HDD(sim, "b", default_15k_sas(write_cache=True)).write_cache_mode == "write back"


@pytest.mark.parametrize("scheduler", ["noop", "deadline", "cfq"])
def test_iostat_identity_and_littles_law(scheduler):
    """(r/s + w/s) x svctm = %util x 10; avgqu-sz = arrival rate x await (Little)."""
    import numpy as np
    sim = Simulator()
    dev = PerByteDevice(sim, overhead_ns=200_000, mb_per_s=100, queue_depth=4)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=10_000))
    rng = np.random.default_rng(7)
    t = 0
    for _ in range(4000):
        t += int(rng.exponential(400_000))
        op = READ if rng.random() < 0.7 else WRITE
        off = int(rng.integers(0, 2**20)) * 4096
        sim.at(t, lambda bio: blk.submit(bio), IORequest(op, off, 4096 * int(rng.integers(1, 5))))
    before = blk.snapshot()
    sim.run()
    st = blk.iostat(before)
    assert st["util_pct"] > 30
    assert (st["r_s"] + st["w_s"]) * st["svctm_ms"] == pytest.approx(st["util_pct"] * 10, rel=1e-9)
    # everything submitted completed inside the window, so Little's law is exact
    assert st["avgqu_sz"] == pytest.approx((st["r_s"] + st["w_s"]) * st["await_ms"] / 1000, rel=1e-6)
