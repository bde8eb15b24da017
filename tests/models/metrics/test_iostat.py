"""iostat -x columns from two /proc/diskstats snapshots, as sysstat derives them
(old and sysstat >= 12 column sets)."""
from __future__ import annotations

import pytest

from models.device.request import FLUSH, READ, WRITE
from models.metrics.iostat import IOSTAT_COLUMNS, IostatCounters, iostat_between


def _counters():
    """2 s: 100 reads of 8 KB (ticks 5 ms each), 40 writes of 64 KB merged from 160 bios
    (ticks 20 ms each), 10 flushes (1 ms each)."""
    c = IostatCounters()
    before = c.snapshot(0)
    t = 0
    for op, n, size, tick_ns, merges in ((READ, 100, 8192, 5_000_000, 0),
                                         (WRITE, 40, 65536, 20_000_000, 3),
                                         (FLUSH, 10, 0, 1_000_000, 0)):
        for _ in range(n):
            c.start(t)
            for _ in range(merges):
                c.merge(op)
            c.done(op, size, t, t + tick_ns)
            t += tick_ns
    after = c.snapshot(2_000_000_000)
    return iostat_between(before, after)


def test_sysstat12_columns():
    st = _counters()
    assert st["r_s"] == 50 and st["w_s"] == 20 and st["f_s"] == 5
    assert st["rkB_s"] == pytest.approx(100 * 8 / 2) and st["wkB_s"] == pytest.approx(40 * 64 / 2)
    assert st["rMB_s"] == pytest.approx(st["rkB_s"] / 1024)
    assert st["wrqm_s"] == 60 and st["wrqm_pct"] == pytest.approx(100 * 120 / (120 + 40))
    assert st["rrqm_pct"] == 0
    assert st["rareq_sz"] == pytest.approx(8.0) and st["wareq_sz"] == pytest.approx(64.0)
    assert st["avgrq_sz"] == pytest.approx((100 * 16 + 40 * 128) / 140)    # sectors, both
    assert st["r_await_ms"] == pytest.approx(5) and st["w_await_ms"] == pytest.approx(20)
    assert st["f_await_ms"] == pytest.approx(1)
    # one request in flight at a time for 0.5 + 0.8 + 0.01 s of the 2 s
    assert st["util_pct"] == pytest.approx(100 * 1.31 / 2)
    assert st["avgqu_sz"] == pytest.approx(1.31 / 2)
    assert set(st) == set(IOSTAT_COLUMNS)


def test_an_empty_interval_is_all_zero():
    c = IostatCounters()
    s = c.snapshot(0)
    st = iostat_between(s, c.snapshot(10**9))
    assert set(st) == set(IOSTAT_COLUMNS) and not any(st.values())
