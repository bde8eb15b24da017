"""The Universal Scalability Law fit (``pipeline.usl``): known coefficients are
recovered, the published Amazon RDS sysbench curve peaks where it was measured to, and
``pipeline.query usl`` / ``pipeline.report --usl`` read a sweep from the results and
refuse bad input with one line (exit 2)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline import query, report, usl
from pipeline.job import summary_table
from pipeline.sink import write_run

N = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128]
# Amazon RDS, sysbench (threads -> tps), as published
RDS_N = [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112]
RDS_TPS = [44.26, 78.66, 183.47, 316.79, 527.50, 576.44, 671.08, 796.30, 1128.46, 1278.88,
           1333.63, 1312.06, 1203.37, 900.18, 733.57, 655.50, 567.87]


def _curve(lam, sigma, kappa, n=N):
    return usl.predict(usl.UslFit(lam, sigma, kappa, 0, 0.0, 0.0), n)


@pytest.mark.parametrize("lam,sigma,kappa", [(1000.0, 0.03, 5e-4), (42.0, 0.2, 1e-5),
                                             (7.0, 0.0, 2e-5)])
def test_known_coefficients_are_recovered(lam, sigma, kappa):
    f = usl.fit(N, _curve(lam, sigma, kappa))
    assert f.lambda_ == pytest.approx(lam, rel=1e-6)
    assert f.sigma == pytest.approx(sigma, rel=1e-6, abs=1e-9)
    assert f.kappa == pytest.approx(kappa, rel=1e-6)
    assert f.peak_n == pytest.approx(math.sqrt((1 - sigma) / kappa), rel=1e-6)
    assert f.r2 == pytest.approx(1.0)


def test_noisy_points_still_put_the_peak_near_the_true_one():
    rng = np.random.default_rng(7)
    x = _curve(1000.0, 0.05, 2e-4) * (1 + 0.02 * rng.standard_normal(len(N)))
    f = usl.fit(N, x)
    assert f.peak_n == pytest.approx(math.sqrt(0.95 / 2e-4), rel=0.05)


def test_without_coherency_there_is_no_peak_and_with_it_there_is():
    amdahl = usl.fit(N, _curve(250.0, 0.1, 0.0))
    assert amdahl.kappa == 0 and "kappa" in amdahl.at_bound
    assert math.isinf(amdahl.peak_n)
    assert amdahl.peak_x == pytest.approx(2500.0)          # lambda / sigma
    crosstalk = usl.fit(N, _curve(250.0, 0.1, 1e-4))
    assert crosstalk.at_bound == () and crosstalk.peak_n == pytest.approx(94.87, rel=1e-3)


def test_coefficients_are_never_negative():
    # superlinear: X(N) = N^1.2 wants sigma < 0; the bound holds it at 0
    f = usl.fit(N, [n ** 1.2 for n in N])
    assert f.sigma == 0 and f.kappa == 0 and f.at_bound == ("sigma", "kappa")


def test_the_rds_sysbench_curve_peaks_between_56_and_80_threads():
    f = usl.fit(RDS_N, RDS_TPS)
    assert 56 <= f.peak_n <= 80
    # the measured rise from 24 to 48 threads is superlinear: sigma sits at its bound 0
    assert f.at_bound == ("sigma",)


def test_a_coefficient_held_at_its_bound_does_not_stop_the_others_reaching_the_optimum():
    """The RDS fit has sigma at 0: its least SSE is then the best over kappa alone
    (lambda closed-form), found here by brute force."""
    f = usl.fit(RDS_N, RDS_TPS)
    n, x = np.array(RDS_N, float), np.array(RDS_TPS)
    kappa = np.linspace(2.5e-4, 3.5e-4, 20001)[:, None]
    g = n / (1 + kappa * n * (n - 1))
    lam = (g @ x) / (g * g).sum(axis=1)
    brute = ((x - lam[:, None] * g) ** 2).sum(axis=1).min()
    assert f.rmse ** 2 * len(n) == pytest.approx(brute, rel=1e-7)


def test_fewer_than_three_concurrencies_are_refused():
    with pytest.raises(usl.UslError, match="2 distinct concurrency"):
        usl.fit([1, 2, 2], [10.0, 18.0, 18.5])


# -- from the results ------------------------------------------------------------------------
def _run(root, h, test, threads, tps, seed=0):
    row = {"experiment": "scal", "config_hash": h, "code_version": "test", "seed": seed,
           "status": "ok", "error": None, "sim_seconds": 1.0, "wall_seconds": 0.5,
           "events_processed": 10, "run.seed": seed, "workload.test": test,
           "workload.threads": threads, "sysbench.tps": tps}
    write_run(root, "scal", h, {"summary": summary_table(row)})


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "outputs"
    for i, (n, x) in enumerate(zip(N, _curve(500.0, 0.05, 3e-4))):
        _run(root, f"r{i}", "oltp_read_only", n, float(x))
    for i, (n, x) in enumerate(zip(N, _curve(40.0, 0.0, 1e-3))):
        _run(root, f"w{i}", "oltp_read_write", n, float(x))
    _run(root, "few0", "oltp_few", 1, 10.0)
    _run(root, "few1", "oltp_few", 2, 19.0)
    return root


def test_each_configuration_is_fitted_on_its_own(results):
    con = query.connect(results)
    series = usl.fit_runs(con, "scal", "threads", "sysbench.tps",
                          where="\"workload.test\" <> 'oltp_few'")
    by = {s.config: s.fit for s in series}
    assert set(by) == {"test=oltp_read_only", "test=oltp_read_write"}
    assert by["test=oltp_read_only"].kappa == pytest.approx(3e-4, rel=1e-6)
    assert by["test=oltp_read_write"].peak_n == pytest.approx(math.sqrt(1 / 1e-3), rel=1e-6)


def test_the_cli_prints_the_fit(results, capsys):
    assert query.main(["usl", "--experiment", "scal", "--x", "workload.threads", "--metric",
                       "sysbench.tps", "--where", "\"workload.test\" <> 'oltp_few'",
                       "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "peak_n" in out and "test=oltp_read_only" in out and "0.0003" in out
    assert "31.6" in out                                    # sqrt(1 / 1e-3)


@pytest.mark.parametrize("args,named", [
    (["--experiment", "nope", "--x", "threads", "--metric", "sysbench.tps"], "'nope'"),
    (["--experiment", "scal", "--x", "workload.thread", "--metric", "sysbench.tps"],
     "'workload.thread'"),
    (["--experiment", "scal", "--x", "threads", "--metric", "sysbench.tpx"], "'sysbench.tpx'"),
    (["--experiment", "scal", "--x", "workload.test", "--metric", "sysbench.tps"],
     "'workload.test' is not a number"),
    (["--experiment", "scal", "--x", "threads", "--metric", "sysbench.tps"], "test=oltp_few"),
    (["--experiment", "scal", "--metric", "sysbench.tps"], "--x"),
])
def test_bad_input_is_one_line_naming_it(results, capsys, args, named):
    assert query.main(["usl", *args, "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and named in err


def test_x_is_refused_outside_usl(results, capsys):
    assert query.main(["best", "--experiment", "scal", "--metric", "sysbench.tps", "--x",
                       "threads", "--results", str(results)]) == 2
    assert capsys.readouterr().err == "error: --x: only for the usl query\n"


def test_the_report_draws_the_fit(results, tmp_path, capsys):
    out = tmp_path / "usl.png"
    assert report.main(["--experiment", "scal", "--usl", "--x", "workload.threads",
                        "--metric", "sysbench.tps", "--where",
                        "\"workload.test\" <> 'oltp_few'", "--results", str(results),
                        "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000 and "2 fit(s)" in capsys.readouterr().out
    # the style-less experiment has no default x; the third configuration too few points
    assert report.main(["--experiment", "scal", "--usl", "--results", str(results),
                        "--metric", "sysbench.tps", "--out", str(out)]) == 2
    assert report.main(["--experiment", "scal", "--usl", "--x", "threads", "--metric",
                        "sysbench.tps", "--results", str(results), "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "--x" in err[0] and "test=oltp_few" in err[1]
