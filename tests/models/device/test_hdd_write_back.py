"""HDD write cache and media writes on the data-sheet drives: a FLUSH completes only
when the data is on the platter (also data a background destage is writing), a
stream of cached writes is accepted while the arm writes back (the sustained rate is
the media rate, no write waits for a whole cache's worth), and a sequential write
crosses track switches at the sheet's sustained rate, as a read does."""
from models.device.hdd import HDD
from models.device.hdd_datasheet import CHEETAH_15K7, CONSTELLATION_ES3, hdd_from_datasheet
from models.device.hdd_mech import build_state, xfer
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


def test_cached_sequential_writes_stream_at_the_media_rate_once_the_cache_is_full():
    cfg = hdd_from_datasheet(CHEETAH_15K7, write_cache=True)     # 16 MB buffer
    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    bs, depth, total = 64 * 1024, 32, 96 * 2**20
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
    # the last 64 MB: the cache has been full since the first ~16 MB
    k = len(ends) // 3
    rate = (len(ends) - k) * bs / ((ends[-1] - ends[k]) / 1e9) / 1e6
    assert rate > 0.9 * CHEETAH_15K7.sustained_outer_MBps
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
