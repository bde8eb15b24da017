"""E8 through the pipeline (experiment=flushing at its YAML's load, sysbench --rate=800,
60 simulated s = run.scale 1/60; sizes 1/64 of the published setup; the default
config, change buffer on): from the per-second series (detail table ``engine``),
MySQL 5.5's native adaptive flushing lets the checkpoint age reach the async point
once per log cycle (~13 s here); a user thread's preflush then writes thousands of
pages at once (a *storm*), they fill the RAID controller's cache and the commits
behind them wait - throughput drops, storm after storm; XtraDB's ``estimate`` flushes
by checkpoint age and keeps throughput in a band. The 5.6 page cleaner does not at
1/64 - its first 30 loops have no LSN rate and outlast the 13 s log cycle - but does at
1/16 of the sizes (the last test; README, E8). The drops need a controller cache
smaller than a storm: the unscaled 256 MB cache absorbs every storm of the 1/64 pool.

How deep each storm takes the commits depends on how it falls across second
boundaries and on the run's random stream: over seeds 0-3 the deepest second of each
run is under 3/4 of the rate (409-550 trx/s) and the storms' lowest seconds average
below every quiet second, but a single storm's lowest second ranges from 51 % to 101 %
of the rate (with the change buffer off the storms are larger and the drops deeper:
README, E8). So the tests assert the pattern - storms, each at the async point, their
seconds on average below the quiet ones, a hard drop - on two seeds, not a count of
seconds under a threshold (which held on seed 0 only). Each run costs ~20 s of one
core (the 1/16 runs ~21 s each); the criteria were checked on seeds 0-3.

Since the master thread's 10-second part is modelled (PCT_IO(10) = 400 of the oldest
pages every 10 s under 5.5 and XtraDB) native's storms at 1/64 were smaller and the
repeated hard drops a strict xfail; since the change buffer's background merge runs as
5.5's master thread runs it (only PCT_IO(5) leaves per ten seconds under load) more
changes are buffered, the 10-second part's merges come as bursts, and the drops are
back: the test asserted them on seeds 0 and 1 (seeds 0-3 checked). Since a flush batch
io-fixes its pages chunk by chunk as InnoDB does (``buf_flush_page`` fixes a page as it
enters the doublewrite buffer), not all of them up front, the user threads no longer
wait for pages still queued in a storm, and the drops are shallower: the lowest second
over seeds 0-3 is 448, 632, 505 and 614 trx/s (it was 409, 550, 504 and 494), so seed 1
is a strict xfail, and so is native's drop under half the rate at 1/16 (632 trx/s).
Since ff4921d the RAID's member disks write a destage crossing a track at the sheet's
rate (a media write lost a revolution at every track switch before: half the read
rate), the controller's cache drains faster, and native's storms at 1/64 no longer drop
the commits hard (seed 0: no second under 744 trx/s, seed 1: 724): the repeated hard
drop is a strict xfail on both seeds; the other tests hold. Since de34f4a (a queued
write-through write continuing the one being written streams on) keep_average's lower
throughput on the slow HDDs holds but its pages written per transaction are within 5 %
of estimate's: that explanation is a strict xfail of its own."""
import numpy as np
import pytest

from tests.experiments.helpers import run_point

pytestmark = pytest.mark.slow

SCALE = "run.scale=0.0167"      # the experiment's meta.min_scale
RATE = 800
SETTLED_S = 15          # the cold pool's reads and the first climb of the age are over
STORM = 2.5             # a storm second flushes more than this x the median second


def _series(case: str, *overrides: str, metrics: bool = False):
    summary, tables = run_point("flushing", f"case/flushing={case}", SCALE, *overrides,
                                details=True)
    rows = tables["engine"]
    rows = rows.to_pylist() if hasattr(rows, "to_pylist") else rows
    rows = [r for r in rows if r["t_s"] > SETTLED_S]
    col = {k: np.array([r[k] for r in rows], dtype=float)
           for k in ("t_s", "trx", "checkpoint_age", "max_modified_age_async",
                     "flushed_list", "flushed_lru", "flushed_single")}
    return (col, summary) if metrics else col


def _storms(s: dict) -> list[list[int]]:
    """Runs of consecutive seconds (indices) whose flush-list writes exceed ``STORM`` x
    the median second's."""
    hot = np.nonzero(s["flushed_list"] > STORM * np.median(s["flushed_list"]))[0]
    out: list[list[int]] = []
    for i in hot:
        if out and i - out[-1][-1] <= 1:
            out[-1].append(int(i))
        else:
            out.append([int(i)])
    return out


def _storm_minima(s: dict, storms) -> tuple[list[float], float]:
    """The fewest commits in each storm's seconds (from the second before: a storm's
    first pages may go out at the end of one), and the fewest in any other second."""
    quiet = np.ones(len(s["trx"]), dtype=bool)
    minima = []
    for g in storms:
        lo, hi = max(0, g[0] - 1), min(len(s["trx"]), g[-1] + 2)
        minima.append(float(s["trx"][lo:hi].min()))
        quiet[lo:hi] = False
    return minima, float(s["trx"][quiet].min())


# The master thread's 10-second part (PCT_IO(10) = 400 of the oldest pages every 10 s,
# a page count that does not shrink with the sizes) pulls the checkpoint back; with the
# change buffer merging as 5.5 does under load (PCT_IO(5) leaves per ten seconds, not
# every second) the storms were as deep again (seeds 0-3 passed); since pages are fixed
# chunk by chunk seed 1's lowest second is 632 trx/s (module docstring).
# Since ff4921d the member disks write a destage that crosses a track at the sheet's
# rate (before, each track switch of a write lost a revolution: half the read rate), so
# the RAID's cache drains faster and seed 0's storms take the commits to 762 trx/s
# at the lowest (0.95 of the rate; 448 before): no hard drop at 1/64 on either seed.
@pytest.mark.parametrize("seed", [pytest.param(0, marks=pytest.mark.xfail(
    strict=True, reason="since ff4921d (the disks' media writes at the sheet's rate) "
    "seed 0's storms take the commits to 762 trx/s at the lowest (0.95 of the rate)")),
    pytest.param(1, marks=pytest.mark.xfail(
        strict=True, reason="since a batch io-fixes its pages chunk by chunk seed 1's "
        "storms took the commits to 632 trx/s at the lowest (0.79 of the rate); since "
        "ff4921d no second is under 724 trx/s"))])
def test_native_storms_at_the_async_point_drop_throughput_repeatedly(seed):
    native = _series("hdd_mysql55_native", f"run.seed={seed}")
    storms = _storms(native)
    starts = [native["t_s"][g[0]] for g in storms]
    assert len(storms) >= 3, (starts, native["flushed_list"])      # repeated, not one
    assert min(np.diff(starts)) >= 5, starts                        # one per log cycle
    for g in storms:                                                # each at the async point
        near = slice(max(0, g[0] - 1), g[-1] + 1)
        assert (native["checkpoint_age"][near]
                >= 0.98 * native["max_modified_age_async"][near]).any(), starts
    minima, quiet_min = _storm_minima(native, storms)
    assert min(minima) < 0.75 * RATE, minima                        # a hard drop
    assert np.mean(minima) < quiet_min, (minima, quiet_min)         # the storms', not noise


def test_estimate_flushes_by_age_and_keeps_a_band():
    estimate = _series("hdd_percona_estimate")
    assert estimate["trx"].min() >= 0.9 * RATE, estimate["trx"]      # a band
    assert (estimate["checkpoint_age"].max()
            > 0.9 * estimate["max_modified_age_async"].max())


def test_the_drops_need_a_controller_cache_smaller_than_the_storm():
    big = _series("hdd_mysql55_native", "device.sda.cache_size_bytes=268435456")
    storms = _storms(big)
    assert len(storms) >= 3, big["flushed_list"]      # the storms are still there ...
    minima, quiet_min = _storm_minima(big, storms)
    assert min(minima) >= 0.9 * RATE, minima          # ... but the 256 MB cache takes them


# Published (Percona): keep_average is good on SSD / flash, not on slow hard disks. Here
# "slow" is E8's two 15k disks without the controller's write-back cache
# (``write_back=false``: write-through), where the disks' writes bound throughput below
# the 800 trx/s asked for; with the battery-backed cache nothing bounds it and
# keep_average is as steady there as on the SSD (README, E8).
KEEP_AVERAGE_PEERS = ("percona_estimate", "mysql55_native")
SLOW_HDD = ("device.sda.write_back=false",)


def _pages_per_trx(s: dict) -> float:
    return float((s["flushed_list"] + s["flushed_lru"] + s["flushed_single"]).sum()
                 / s["trx"].sum())


def test_keep_average_does_well_on_the_ssd_not_on_a_slow_hdd():
    """keep_average flushes ten times a second in proportion to the log's progress, so
    it holds the checkpoint age lower than estimate or native and writes pages that are
    dirtied again soon after: more pages written per transaction. On the SSD the drive
    has writes to spare: keep_average holds the rate as the others do (the commits a
    second follow the arrivals) with a p95 latency a fraction of theirs (its writes
    come in small batches ten times a second, not in one-second batches or storms the
    commits queue behind). On the write-through HDDs the disks' writes are the bound and its
    extra writes cost it throughput: the fewest transactions of the three. Seed 0,
    settled seconds: SSD p95 6.9 ms against 130 (estimate) and 83 (native); slow HDD
    394 trx/s against 462 and 479, 1.68 pages written per transaction against 1.47 and
    1.30, the checkpoint age 0.49 of the async point against 0.70 and 0.84 (seed 1,
    all seconds: 363 against 430 and 446 trx/s, 1.55 pages against 1.27 and 1.14)."""
    ssd = {a: _series(f"ssd_{a}", metrics=True)
           for a in ("percona_keep_average", *KEEP_AVERAGE_PEERS)}
    ka, ka_m = ssd["percona_keep_average"]
    assert ka["trx"].mean() >= 0.98 * RATE, ka["trx"]
    for a in KEEP_AVERAGE_PEERS:
        p95 = ssd[a][1]["sysbench.latency_pct_ms"]
        assert ka_m["sysbench.latency_pct_ms"] < 0.5 * p95, (a, p95)

    slow = _slow_hdd_series()
    ka = slow["percona_keep_average"]
    age = lambda s: float((s["checkpoint_age"] / s["max_modified_age_async"]).mean())
    for a in KEEP_AVERAGE_PEERS:
        s = slow[a]
        assert s["trx"].mean() < 0.9 * RATE, (a, s["trx"])             # the disks bound it
        assert ka["trx"].sum() < 0.92 * s["trx"].sum(), (a, ka["trx"].sum(), s["trx"].sum())
        assert age(ka) < age(s), (a, age(ka), age(s))


def _slow_hdd_series() -> dict:
    return {a: _series(f"hdd_{a}", *SLOW_HDD) for a in ("percona_keep_average", *KEEP_AVERAGE_PEERS)}


@pytest.mark.xfail(strict=True, reason="since be73437 (2.6's request batching) estimate "
                   "writes 1.48 pages per transaction on the slow HDDs, keep_average 1.55: "
                   "4.6 % more, not 5 % (seed 0; 1.46 against 1.55 on 685e34f, before "
                   "batching; 1.58 against 1.60 from de34f4a to 1e13c86)")
def test_keep_average_writes_more_pages_per_transaction_on_the_slow_hdd():
    """keep_average holds the checkpoint age lower and writes pages that are dirtied
    again soon after: more pages written per transaction than estimate or native."""
    slow = _slow_hdd_series()
    ka = slow["percona_keep_average"]
    for a in KEEP_AVERAGE_PEERS:
        s = slow[a]
        assert _pages_per_trx(ka) > 1.05 * _pages_per_trx(s), (a, _pages_per_trx(ka),
                                                             _pages_per_trx(s))


# 1/16 of the published sizes instead of 1/64: 1 GB pool, 2 x 32 MB logs, ~720 MB of
# pages, the controller's cache 16 MB; the log cycle is ~53 s instead of ~13 s, and the
# 5.6 page cleaner's `innodb_flushing_avg_loops` (30 one-second loops, its first LSN
# rate) is then shorter than the first climb of the age.
SIXTEENTH = ("engine.innodb_buffer_pool_size=1G", "engine.innodb_log_file_size=32M",
             "workload.table_size=800000", "page_cache.memory_bytes=4g",
             "device.sda.cache_size_bytes=16777216")


def test_at_a_sixteenth_of_the_sizes_the_56_page_cleaner_keeps_the_band():
    cleaner, m = _series("hdd_mysql56_page_cleaner", *SIXTEENTH, metrics=True)
    assert cleaner["flushed_list"].sum() > 0                    # it flushes by age ...
    assert (cleaner["checkpoint_age"] < 0.9 * cleaner["max_modified_age_async"]).all()
    assert m["innodb.Innodb_checkpoint_sync_waits"] == 0
    # ... and holds the band: at most one second under 90 % of the rate (its first
    # batches from the 30th loop on, ~3,500 pages a second, took one to 612 trx/s on
    # seed 1)
    assert (cleaner["trx"] < 0.9 * RATE).sum() <= 1, cleaner["trx"]


@pytest.mark.xfail(strict=True, reason="since a batch io-fixes its pages chunk by chunk "
                   "(not all up front), native's first storm at 1/16 takes the commits to "
                   "632 trx/s (0.79 of the rate), not under half")
def test_at_a_sixteenth_of_the_sizes_native_storms_drop_throughput_under_half():
    native = _series("hdd_mysql55_native", *SIXTEENTH)
    storms = _storms(native)
    assert storms, native["flushed_list"]                       # the first storm (~53 s)
    g = storms[0]
    near = slice(max(0, g[0] - 1), g[-1] + 1)
    assert (native["checkpoint_age"][near]
            >= 0.98 * native["max_modified_age_async"][near]).any()
    minima, _ = _storm_minima(native, storms)
    assert min(minima) < 0.5 * RATE, minima                     # a hard drop
