"""NOTPM over time: the New-Orders of the measured interval counted per second, the
warm-up found from that series (models/metrics/warmup.py's rule), and NOTPM over the
first minutes and after the warm-up."""
import numpy as np
import pytest

from models.workload.tpcc import TpccConfig
from models.workload.tpcc.report import notpm_over_time
from models.workload.tpcc.workload import Tpcc

from ...engine.innodb.server.stack import build


def test_a_slow_start_is_the_warm_up_and_sustained_is_the_rate_after_it():
    r = notpm_over_time([2] * 60 + [3] * 540)      # New-Orders per second
    assert 60 < r["warmup_s"] < 120                 # the 60 s window leaves the slow start
    assert r["notpm_sustained"] == pytest.approx(180.0)
    # the first minutes: 300 s, at most a quarter of the series (150 s here)
    assert r["notpm_burst"] == pytest.approx(60 * (60 * 2 + 90 * 3) / 150)


def test_a_flat_series_has_no_warm_up():
    assert notpm_over_time([5] * 600) == {"warmup_s": 0, "notpm_burst": 300.0,
                                           "notpm_sustained": 300.0}


def test_the_last_count_is_a_rate_over_the_span_it_covers():
    # 5 a second for 10.5 s: the last count holds 1.5 s of them; a 0.5 s run's one count
    assert notpm_over_time([5] * 9 + [7.5], last_s=1.5) == notpm_over_time([5] * 10)
    assert notpm_over_time([3], last_s=0.5)["notpm_burst"] == pytest.approx(360.0)


# On the flash drive, not the RAM device: ~15 New-Orders a second instead of ~900 (the
# 16 MB pool reads most pages), so each test costs ~3 CPU s instead of ~20.
def run_tpcc(duration: float, rampup: float = 0.0):
    """A 1-warehouse, 4-connection tpcc run of ``duration`` s: (workload, results)."""
    sim, srv, _, _ = build(tables=(), device="ssd", innodb_buffer_pool_size="16M")
    w = Tpcc(sim, TpccConfig(warehouses=1, connections=4, duration=duration, rampup=rampup),
             srv, np.random.default_rng(2))
    w.start()
    sim.run()
    return w, w.results()


def test_every_measured_new_order_is_in_one_second_of_the_series():
    w, out = run_tpcc(3, rampup=1)
    assert len(w.new_orders_per_s) == 3
    assert sum(w.new_orders_per_s) == out["new_order.count"] > 0
    assert out["notpm"] == pytest.approx(60.0 * sum(w.new_orders_per_s) / 3)
    assert out["notpm_sustained"] > 0 and 0 <= out["warmup_s"] <= 3


def test_a_part_second_at_the_end_counts_in_the_last_whole_second():
    w, out = run_tpcc(2.5)
    assert len(w.new_orders_per_s) == 2
    assert sum(w.new_orders_per_s) == out["new_order.count"] > 0


def test_a_run_shorter_than_two_seconds_has_its_notpm_as_burst_and_sustained():
    # one count over the whole 1.2 s: the same rate as NOTPM, not 1.2x it
    _, out = run_tpcc(1.2)
    assert out["new_order.count"] > 0
    assert out["notpm_burst"] == pytest.approx(out["notpm"])
    assert out["notpm_sustained"] == pytest.approx(out["notpm"])
