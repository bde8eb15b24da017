"""Progress within a run (pipeline.runwatch): a watcher thread reports the share of the
run's simulated time done, the run is the same with and without it, and the sweep's
display counts the runs under way."""
from __future__ import annotations

import io
import time
from types import SimpleNamespace

import pytest

from pipeline import progress as progress_mod
from pipeline.progress import SweepProgress
from pipeline.runwatch import ProgressBoard, RunWatch, expected_end_ns


def test_the_watcher_reports_the_share_of_simulated_time_until_the_block_ends():
    sim = SimpleNamespace(now_ns=0)
    seen = []
    with RunWatch(sim, 1_000, seen.append, interval_s=0.01) as w:
        for t in (100, 400, 700, 2_000):     # past the end: reported as 1
            sim.now_ns = t
            deadline = time.monotonic() + 10     # until the watcher has seen it (load)
            while not (seen and seen[-1] == min(1.0, t / 1_000)) and time.monotonic() < deadline:
                time.sleep(0.005)
    n = len(seen)
    time.sleep(0.05)
    assert len(seen) == n                    # stopped with the block
    assert not w._thread.is_alive()
    assert seen == sorted(seen) and {0.1, 0.4, 0.7, 1.0} <= set(seen)
    with pytest.raises(ValueError, match="end_ns"):
        RunWatch(sim, 0, seen.append)


def test_the_end_is_the_run_duration_else_the_workloads_deadline():
    assert expected_end_ns(5_000, SimpleNamespace(deadline_ns=9)) == 5_000
    assert expected_end_ns(None, SimpleNamespace(deadline_ns=9_000)) == 9_000
    assert expected_end_ns(None, SimpleNamespace(deadline_ns=None)) is None
    assert expected_end_ns(None, object()) is None       # fio of a byte count: unknown


def test_a_watched_run_is_the_same_run(compose, tmp_path):
    # the watcher only reads the clock: results and event count identical
    from pipeline.build import simulate
    from pipeline.fanout import prepare_run
    from pipeline.runwatch import reporting

    spec = prepare_run(compose("experiment=sysbench_threads", f"results.dir={tmp_path}",
                               "workload.threads=4", "run.scale=0.01"), "w", "v1")
    plain = simulate(spec)
    seen = []
    with reporting(seen.append, interval_s=0.001):
        watched = simulate(spec)
    assert seen and all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)
    assert watched.summary == plain.summary
    assert watched.events == plain.events and watched.sim_ns == plain.sim_ns


def test_the_display_counts_runs_under_way(monkeypatch):
    monkeypatch.setattr(progress_mod, "PLAIN_EVERY_S", 0.0)
    out = io.StringIO()
    with SweepProgress(2, "exp", stream=out, live=False, names={"h1": "pool=1G"}) as p:
        p.running_at({"h1": 0.25, "h2": 0.5})
        p.finished(True, "h1", 1.0)
        assert p.fractions == {"h2": 0.5}
        p.finished(True, "h2", 1.0)
    lines = out.getvalue().splitlines()
    assert lines[1] == "[0/2] under way: h2 50%, pool=1G 25% of their simulated time"
    assert lines[2].startswith("[1/2] ok pool=1G")
    live = io.StringIO()
    with SweepProgress(4, "live", stream=live, live=True) as p:
        p.finished(True, "a", 0.1)
        p.running_at({"b": 0.5, "c": 0.25})
        task = p._progress.tasks[0]
        assert task.completed == pytest.approx(1.75) and task.fields["done"] == 1


def test_the_board_collects_what_ray_workers_report(ray_session):
    from pipeline.fanout import _show_board

    ray = ray_session
    board = ray.remote(num_cpus=0)(ProgressBoard).remote()

    @ray.remote(num_cpus=0)
    def worker(b, key, f):
        ray.get(b.put.remote(key, f))

    ray.get([worker.remote(board, "a", 0.5), worker.remote(board, "b", 0.2)])
    p = SweepProgress(3, "x", stream=io.StringIO(), live=False)
    _show_board(board, {"b"}, p)           # a finished run's last report is not shown
    assert p.fractions == {"a": 0.5}
    ray.kill(board)
