"""HDD write cache and media writes on the data-sheet drives: a FLUSH completes only
when the data is on the platter (also data a background destage is writing), a
stream of cached writes is accepted while the arm writes back (the sustained rate is
the media rate, no write waits for a whole cache's worth), a sequential write
crosses track switches at the sheet's sustained rate, as a read does, and with the
write cache off a queue of sequential writes streams (``combine_seq_writes``) where
one write at a time loses a revolution each."""
from models.device.hdd import HDD
from models.device.hdd.datasheet import CHEETAH_15K7, CONSTELLATION_ES3, hdd_from_datasheet
from models.device.hdd.mech import build_state, xfer
from models.device.request import FLUSH, WRITE, IORequest
from models.sim import Simulator

MS = 1_000_000


def write_flush_cycles(write_cache: bool, n: int = 200) -> float:
    """fdatasync's device commands at queue depth 1: an 8 KB write (the next 8 KB each
    time), then a FLUSH, then the next write; the mean ns of a write + FLUSH."""
    sim = Simulator()
    dev = HDD(sim, "d", hdd_from_datasheet(CONSTELLATION_ES3, write_cache=write_cache))
    done = []

    def next_write(i):
        if i < n:
            dev.submit(IORequest(WRITE, i * 8192, 8192, None))

    def on_complete(req):
        if req.op == WRITE:
            dev.submit(IORequest(FLUSH, 0, 0, None))
        else:
            done.append(sim.now_ns)
            next_write(len(done))

    dev.on_complete = on_complete
    next_write(0)
    sim.run()
    assert len(done) == n
    return done[-1] / n


def test_a_flush_waits_for_the_write_a_background_destage_is_putting_on_the_platter():
    # each cycle writes 8 KB just behind the head: about one revolution (8.33 ms at
    # 7,200 rpm) whether the drive caches the write or not - the cached write is
    # destaged by the idle drive at once, and the FLUSH waits for that destage
    rev_ns = 60e9 / 7200
    on, off = write_flush_cycles(True), write_flush_cycles(False)
    assert on > 0.9 * rev_ns
    assert abs(on - off) / off < 0.1


def sequential_writes(cfg, bs: int, depth: int, total: int) -> tuple[list[int], list[int]]:
    """``total`` bytes written from LBA 0 in ``bs`` commands, ``depth`` of them queued
    at the drive at a time; each command's latency and completion time (ns)."""
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    lat, ends = [], []
    nxt = [0]

    def submit():
        if nxt[0] < total:
            dev.submit(IORequest(WRITE, nxt[0], bs, None))
            nxt[0] += bs

    def on_complete(req):
        lat.append(req.done_ns - req.dispatch_ns)
        ends.append(req.done_ns)
        submit()

    dev.on_complete = on_complete
    for _ in range(depth):
        submit()
    sim.run()
    assert len(ends) == total // bs
    return lat, ends


def rate_after(ends: list[int], bs: int, first: int) -> float:
    """MB/s (10^6) of the completions from index ``first`` on."""
    return (len(ends) - first) * bs / ((ends[-1] - ends[first]) / 1e9) / 1e6


def test_cached_sequential_writes_stream_at_the_media_rate_once_the_cache_is_full():
    cfg = hdd_from_datasheet(CHEETAH_15K7, write_cache=True)     # 16 MB buffer
    bs = 64 * 1024
    lat, ends = sequential_writes(cfg, bs, 32, 96 * 2**20)
    # the last 64 MB: the cache has been full since the first ~16 MB
    assert rate_after(ends, bs, len(ends) // 3) > 0.9 * CHEETAH_15K7.sustained_outer_MBps
    # a write waits at most for one segment's destage (1 MB here), not the cache's
    assert max(lat) < 20 * MS


def test_a_sequential_media_write_crosses_track_switches_at_the_sheets_rate():
    for sheet in (CHEETAH_15K7, CONSTELLATION_ES3):
        S = build_state(hdd_from_datasheet(sheet))
        n = 200_000.0                       # ~100 MB from LBA 0: ~60 tracks
        rates = []
        for write in (False, True):
            t_start, _, t_end, _, _ = xfer(S, 0.0, n, 0.0, 0.0, 0.0, write, 0.0)
            rates.append(n * 512 / ((t_end - t_start) / 1e9) / 1e6)
        assert rates[0] == rates[1]
        assert abs(rates[1] - sheet.sustained_outer_MBps) / sheet.sustained_outer_MBps < 0.02


def test_queued_sequential_writes_without_the_write_cache_stream_at_the_media_rate():
    # write cache off: a write completes once on the platter. One at a time, each
    # command arrives after the sector that follows the last one passed the head and
    # waits a revolution; queued, the next one's command and data were taken in while
    # the last was on the platter and it writes on (DiskSim's Combine seq writes)
    sheet = CHEETAH_15K7
    rev_ms = 60e3 / sheet.rpm
    bs = 256 * 1024
    media_ms = bs / (sheet.sustained_outer_MBps * 1e6) * 1e3
    one = rate_after(sequential_writes(hdd_from_datasheet(sheet), bs, 1, 32 * 2**20)[1], bs, 8)
    assert abs(one - bs / 1e3 / (rev_ms + media_ms)) / one < 0.05
    for depth in (2, 8):
        queued = rate_after(sequential_writes(hdd_from_datasheet(sheet), bs, depth,
                                              64 * 2**20)[1], bs, 8)
        assert abs(queued - sheet.sustained_outer_MBps) / sheet.sustained_outer_MBps < 0.03
    # without it the queue helps only by SPTF writing the next-but-one while the next
    # comes round: well short of the media rate
    cfg = hdd_from_datasheet(sheet, combine_seq_writes=False)
    rate = rate_after(sequential_writes(cfg, bs, 8, 32 * 2**20)[1], bs, 8)
    assert rate < 0.7 * sheet.sustained_outer_MBps


def test_small_queued_writes_without_the_write_cache_are_bound_by_the_controller():
    # 4 KB writes: the platter passes 4 KB in ~20 us, the controller takes a command in
    # 0.2 ms (its overhead) - the next write's data is late, it waits a revolution, and
    # meanwhile the controller takes in the queued ones, which then stream: about a
    # queue's worth per revolution, far from the media rate and far above one per
    # revolution
    sheet = CHEETAH_15K7
    rev_s = 60 / sheet.rpm
    bs, depth = 4096, 8
    ends = sequential_writes(hdd_from_datasheet(sheet), bs, depth, 8 * 2**20)[1]
    per_s = (len(ends) - 64) / ((ends[-1] - ends[64]) / 1e9)
    assert 0.8 * depth / rev_s < per_s < 1.2 * depth / rev_s
