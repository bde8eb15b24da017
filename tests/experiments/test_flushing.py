"""E8 through the pipeline (experiment=flushing at its YAML's load, sysbench --rate=800,
60 simulated s = run.scale 1/60; sizes 1/64 of the published setup): from the
per-second series (detail table ``engine``), MySQL 5.5's native adaptive flushing
lets the checkpoint age reach the async point, a user thread's preflush then writes
thousands of pages at once, they fill the RAID controller's cache and the commits
behind them wait - throughput dips, again and again; XtraDB's ``estimate`` flushes by
checkpoint age and keeps throughput in a band. (The 5.6 page cleaner does not, at this
scale: README, E8 - its 30-loop averages outlast the 13 s log cycle.) The dips need
a controller cache smaller than a storm: the unscaled 256 MB cache absorbs every
storm of the 1/64 pool and no second dips. Each run costs ~20 s of one core.

These run with ``innodb_change_buffering=none``: with the change buffer (5.5's default
``all``, merged after these tests were written) the same 60 s show one dip, not three
(``test_native_dips_with_the_change_buffer``, a strict xfail): the k-index changes of
the cold pool's first minute go to the change buffer and are merged by the master
thread, which spreads the flushing; why that removes the dips at 1/64 of the sizes is
not analysed yet."""
import numpy as np
import pytest

from tests.experiments.helpers import run_point

pytestmark = pytest.mark.slow

SCALE = "run.scale=0.0167"      # the experiment's meta.min_scale
RATE = 800
SETTLED_S = 15          # the cold pool's reads and the first climb of the age are over


NO_IBUF = "engine.innodb_change_buffering=none"


def _series(case: str, *overrides: str, ibuf: bool = False) -> dict:
    over = overrides if ibuf else (NO_IBUF, *overrides)
    _, tables = run_point("flushing", f"case/flushing={case}", SCALE, *over,
                          details=True)
    rows = tables["engine"]
    rows = rows.to_pylist() if hasattr(rows, "to_pylist") else rows
    rows = [r for r in rows if r["t_s"] > SETTLED_S]
    col = {k: np.array([r[k] for r in rows], dtype=float)
           for k in ("t_s", "trx", "checkpoint_age", "max_modified_age_async",
                     "flushed_list")}
    return col


def _dip_episodes(s: dict) -> list[float]:
    """The first second of each run of seconds committing under 3/4 of the rate."""
    low = np.nonzero(s["trx"] < 0.75 * RATE)[0]
    return [s["t_s"][i] for j, i in enumerate(low) if j == 0 or low[j - 1] != i - 1]


def test_native_dips_repeat_at_the_async_point_estimate_keeps_a_band():
    native = _series("hdd_mysql55_native")
    dips = _dip_episodes(native)
    assert len(dips) >= 3, native["trx"]                      # repeated, not one
    assert min(np.diff(dips)) >= 5, dips                      # a pattern, not one storm
    for t in dips:                                            # each at the async point
        i = int(np.nonzero(native["t_s"] == t)[0][0])
        near = slice(max(0, i - 1), i + 1)
        assert (native["checkpoint_age"][near]
                >= 0.98 * native["max_modified_age_async"][near]).any(), t
    assert native["trx"].min() < 0.6 * RATE                   # a hard drop, not noise
    estimate = _series("hdd_percona_estimate")
    assert _dip_episodes(estimate) == [], estimate["trx"]
    assert estimate["checkpoint_age"].max() > 0.9 * estimate["max_modified_age_async"].max()


def test_the_dips_need_a_controller_cache_smaller_than_the_storm():
    big = _series("hdd_mysql55_native", "device.sda.cache_size_bytes=268435456")
    # the storms are still there (a second flushing > 4x the median) ...
    assert big["flushed_list"].max() > 4 * np.median(big["flushed_list"])
    # ... but the 256 MB cache takes them and no second dips
    assert _dip_episodes(big) == [], big["trx"]


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="with the change buffer on (5.5's default) one dip in 60 s, not a "
                          "repeating pattern (module docstring)")
def test_native_dips_with_the_change_buffer():
    native = _series("hdd_mysql55_native", ibuf=True)
    assert len(_dip_episodes(native)) >= 3, native["trx"]
