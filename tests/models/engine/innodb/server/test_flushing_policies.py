"""The background flushing algorithms of issue 16, each asserted both ways: XtraDB's
reflex bands, estimate's rate from the log's progress, keep_average's even flushing,
and a too-small log stalling throughput without checkpoint-age flushing but not with
estimate. Policy decisions are checked on a server whose flush list is set by hand;
the behaviour over time on short runs (RAM device at 20 MB/s, 4 clients)."""
import functools

import numpy as np
import pytest

from models.engine.innodb.buffer.flushing import Estimate, KeepAverage, Reflex, policy_for
from models.engine.innodb.ops import TableDef
from models.engine.innodb.server import InnoDBServerConfig
from tests.models.engine.innodb.server.stack import build, updates

T100K = (TableDef("sbtest1", 100_000, 180, ("k",)),)
PERCONA = dict(version="percona_5.1", innodb_adaptive_flushing=False,
               commit_protocol="mysql51_builtin", innodb_max_dirty_pages_pct=90)


def _server(method, **kw):
    sim, srv, fs, q = build(tables=T100K, innodb_buffer_pool_size="32M",
                            innodb_log_file_size="4M", innodb_adaptive_checkpoint=method,
                            **{**PERCONA, **kw})
    srv.preload()
    return srv


def _age(srv, age_frac, n_pages=200, spread=0.0):
    """``n_pages`` leaves dirty, the oldest ``age_frac`` of max_checkpoint_age old, the
    others evenly younger down to ``(age_frac - spread)``."""
    m = srv.ckpt.max_checkpoint_age
    srv.redo.lsn += 4 * m
    leaves = (list(srv.pool.old) + list(srv.pool.young))[:n_pages]
    for i, p in enumerate(leaves):
        frac = age_frac - spread * i / max(1, n_pages - 1)
        srv.pool.modify(p, srv.redo.lsn - int(frac * m))
    return m


@pytest.mark.parametrize("version,key,value,cls", [
    ("percona_5.1", "innodb_adaptive_checkpoint", "reflex", Reflex),
    ("percona_5.1", "innodb_adaptive_checkpoint", "estimate", Estimate),
    ("percona_5.5", "innodb_adaptive_flushing_method", "keep_average", KeepAverage)])
def test_the_percona_variable_selects_the_policy(version, key, value, cls):
    on = version == "percona_5.5"        # 5.1: innodb_adaptive_flushing takes priority
    cfg = InnoDBServerConfig(version=version, innodb_adaptive_flushing=on, **{key: value})
    assert policy_for(cfg) is cls
    assert policy_for(InnoDBServerConfig(version=version, innodb_adaptive_flushing=not on,
                                         **{key: value})).__name__ == "MySQL55"


@pytest.mark.parametrize("frac,expected,skip", [
    (0.49, None, False), (0.51, 20, True), (0.74, 20, True), (0.76, 200, True),
    (0.86, 200, True), (0.88, None, False)])
def test_reflex_nothing_below_half_weak_then_strong_then_leaves_it_to_the_storm(
        frac, expected, skip):
    srv = _server("reflex", innodb_io_capacity=200)
    _age(srv, frac)
    pol = srv.cleaner.policy
    batch = pol.plan(True)
    assert (batch.pages if batch else None) == expected      # PCT_IO(10), PCT_IO(100)
    assert pol.skip_sleep is skip


def test_estimate_rate_is_dirty_pages_over_remaining_age_times_the_log_progress():
    srv = _server("estimate")
    m = _age(srv, 0.6, n_pages=300, spread=0.4)                # ages 0.6 .. 0.2 of m
    pol = srv.cleaner.policy
    fl = srv.pool.flush_list
    lsn = srv.redo.lsn
    avg_age = sum(lsn - om for om in fl.values()) / len(fl)
    for progress in (m // 100, m // 50, m // 25):
        pol.lsn_old = lsn - progress
        batch = pol.plan(True)
        expected = len(fl) * progress / (m - avg_age)           # n^2 x dLSN / level
        assert batch.pages == pytest.approx(expected, rel=1e-6, abs=1)
        assert batch.lsn_limit == next(iter(fl.values())) + progress
    assert pol.lsn_old == lsn
    assert pol.plan(True) is None                               # the log did not move
    nodblwr = _server("estimate", innodb_doublewrite=False)
    _age(nodblwr, 0.6, n_pages=300, spread=0.4)
    nodblwr.cleaner.policy.lsn_old = nodblwr.redo.lsn - m // 25
    assert nodblwr.cleaner.policy.plan(True).pages == int(expected) * 7 // 8
    young = _server("estimate")
    _age(young, 0.24)                                           # below m / 4: nothing
    young.cleaner.policy.lsn_old = young.redo.lsn - m // 25
    assert young.cleaner.policy.plan(True) is None


@functools.lru_cache(maxsize=None)     # the tests only read the server and its series
def _run(method, seconds, ram_MBps=20.0, clients=4, think_us=5000):
    sim, srv, fs, q = build(tables=T100K, ram_MBps=ram_MBps, innodb_flush_log_at_trx_commit=2,
                            log_bin=False, innodb_buffer_pool_size="32M",
                            innodb_log_file_size="4M", innodb_adaptive_checkpoint=method,
                            **PERCONA)
    make = updates(rows=100_000)
    end = int(seconds * 1e9)

    def client(i):
        rng = np.random.default_rng([1, i])
        while sim.now_ns < end:
            yield from srv.run(i, make(rng, i))
            yield think_us * 1000

    def stopper():
        yield end
        srv.stop()

    srv.preload()
    srv.start()
    for i in range(clients):
        sim.spawn(client(i))
    sim.spawn(stopper())
    sim.run(until_ns=end + 10**9)
    return srv, srv.timeseries()


def _cv(x):
    x = np.asarray(x, dtype=float)
    return x.std() / x.mean()


def test_keep_average_flushes_evenly_reflex_in_bursts():
    srv, ts = _run("keep_average", 10)
    flushed = [r["flushed_list"] for r in ts[2:]]
    assert np.mean(flushed) > 200
    assert _cv(flushed) < 0.15, flushed
    srv, ts = _run("reflex", 10)
    flushed = [r["flushed_list"] for r in ts[2:]]
    assert np.mean(flushed) > 200
    assert _cv(flushed) > 0.5, flushed


def test_too_small_log_stalls_throughput_without_age_flushing_estimate_keeps_a_band():
    """``none``: the age climbs to the async point, user threads' preflush writes most of
    the pool at once - the device's 20 MB/s taken by the page writes, the log writes
    queue behind them - and throughput falls under a quarter for seconds, again and
    again (it fell to nothing while a batch io-fixed all its pages up front, before
    they were fixed chunk by chunk); ``estimate`` flushes from a quarter of the margin
    and throughput stays in a band."""
    srv, ts = _run("none", 16)
    tps = np.array([r["trx"] for r in ts])
    age = np.array([r["checkpoint_age"] for r in ts])
    low = tps < 0.25 * np.median(tps)
    assert low.sum() >= 2 and (np.diff(np.nonzero(low)[0]) > 1).any()   # repeated dips
    assert age.max() >= srv.ckpt.max_modified_age_async
    srv, ts = _run("estimate", 16)
    tps = np.array([r["trx"] for r in ts])
    age = np.array([r["checkpoint_age"] for r in ts])
    assert tps[2:].min() > 0.5 * np.median(tps)
    assert age.max() < srv.ckpt.max_modified_age_async


def test_the_series_says_whose_batches_wrote_the_flush_list():
    """Of ``flushed_list``, the pages user threads' own batches wrote are counted apart
    as they are written: with ``none`` every flush-list page of the dips is the
    threads' preflush past the async point (nothing flushes in the background), with
    ``estimate`` none is (the background thread keeps the age under it)."""
    srv, ts = _run("none", 16)
    lst = np.array([r["flushed_list"] for r in ts])
    pre = np.array([r["flushed_preflush"] for r in ts])
    tps = np.array([r["trx"] for r in ts])
    low = tps < 0.25 * np.median(tps)
    assert (pre <= lst).all()
    assert pre[low].sum() == lst[low].sum() > 0
    assert srv.status()["Innodb_buffer_pool_pages_preflushed"] >= pre.sum()
    assert srv.status()["Innodb_checkpoint_async_preflushes"] > 0
    srv, ts = _run("estimate", 16)
    assert sum(r["flushed_list"] for r in ts) > 1000
    assert sum(r["flushed_preflush"] + r["flushed_sync"] for r in ts) == 0
    assert srv.status()["Innodb_buffer_pool_pages_preflushed"] == 0


@pytest.mark.parametrize("kw,message", [
    (dict(version="5.5", innodb_adaptive_checkpoint="estimate"),
     "innodb_adaptive_checkpoint: a Percona Server variable (version percona_5.1)"),
    (dict(version="percona_5.5", innodb_adaptive_checkpoint="reflex"),
     "innodb_adaptive_checkpoint: a Percona Server variable"),
    (dict(version="percona_5.5", innodb_adaptive_flushing_method="reflex"),
     "innodb_adaptive_flushing_method: must be one of native, estimate, keep_average"),
    (dict(version="5.6", innodb_flush_neighbor_pages="cont"),
     "innodb_flush_neighbor_pages: a Percona Server variable"),
    (dict(version="percona_5.1", innodb_flush_neighbors=0),
     "innodb_flush_neighbors: a MySQL 5.6 variable")])
def test_percona_variables_only_on_percona_versions(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        InnoDBServerConfig(**kw)


@pytest.mark.parametrize("value,rule", [("area", 2), ("cont", 1), ("none", 0)])
def test_flush_neighbor_pages_is_the_neighbour_rule(value, rule):
    cfg = InnoDBServerConfig(version="percona_5.5", innodb_flush_neighbor_pages=value)
    assert cfg.flush_neighbors == rule and cfg.generation == "5.5"
    assert InnoDBServerConfig(version="5.5").flush_neighbors == 2     # no variable: the area
    assert InnoDBServerConfig(version="5.6", innodb_flush_neighbors=1).flush_neighbors == 1
