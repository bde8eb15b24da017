"""bench.bench_dbt2 measures what it says: a placement run fresh and then with its warm
replay restored, the same summary both times, the replay's CPU as their difference and
the full length that costs (a 1-warehouse case, not E3's 100)."""
import pytest

from bench.bench_dbt2 import FULL_S, main

SMALL = ["workload.warehouses=1", "workload.connections=8", "workload.duration=0.5",
         "run.scale=1", "engine.innodb_buffer_pool_size=16M"]


def test_a_small_case_reports_the_replay_apart_and_the_full_length_it_extrapolates_to(capsys):
    out = main(["--case", "all_hdd", *SMALL])
    assert capsys.readouterr().out.count("\n") == 1            # one JSON line
    assert out["case"] == "all_hdd" and out["notpm"] > 0
    assert 0.5 <= out["sim_s"] < 1.0
    assert out["cpu_s_fresh"] > out["cpu_s_restored"] > 0       # the replay is skipped
    assert out["cpu_s_replay"] == pytest.approx(out["cpu_s_fresh"] - out["cpu_s_restored"],
                                                abs=0.02)
    assert out["cpu_min_600s_fresh"] == pytest.approx(
        (out["cpu_s_replay"] + out["cpu_s_per_sim_s"] * FULL_S) / 60, rel=0.05)
