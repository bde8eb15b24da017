"""bench.bench_flushing measures what it says: the simulated seconds asked for, the CPU
they cost and the hour that cost extrapolates to, and the transactions the case
committed at its rate."""
import pytest

from bench.bench_flushing import main


def test_a_short_run_reports_its_seconds_cpu_and_the_hour_it_extrapolates_to(capsys):
    out = main(["--seconds", "2"])
    assert capsys.readouterr().out.count("\n") == 1            # one JSON line
    assert out["case"] == "hdd_mysql55_native"
    assert 2.0 <= out["sim_s"] < 2.5             # the last transactions end after 2 s
    assert out["cpu_s"] > 0
    assert out["cpu_min_per_sim_hour"] == pytest.approx(out["cpu_s"] / out["sim_s"] * 60,
                                                        rel=0.05)   # (both rounded)
    assert 600 < out["tps"] < 1000               # the case's sysbench --rate=800
    assert out["events_per_trx"] > 1
