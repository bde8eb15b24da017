"""The sweep progress display: counts, ETA, plain lines off a terminal."""
from __future__ import annotations

import io

from pipeline.progress import SweepProgress


def test_plain_progress_counts_done_failed_running():
    out = io.StringIO()
    with SweepProgress(3, "exp: sweep", stream=out, live=False) as p:
        p.set_running(2)
        p.finished(True, "aaa", 1.0)
        p.set_running(1)
        p.finished(False, "bbb", 2.0)
        p.set_running(0)
        p.finished(True, "ccc", 0.5)
        assert (p.done, p.failed, p.eta()) == (3, 1, 0.0)
    lines = out.getvalue().splitlines()
    assert lines[0] == "exp: sweep: 3 run(s)"
    assert lines[1].startswith("[1/3] ok aaa (1.0 s; failed 0, running 2, eta ")
    assert lines[2].startswith("[2/3] FAILED bbb (2.0 s; failed 1, running 1, eta ")
    assert lines[3].startswith("[3/3] ok ccc")
    assert lines[4].startswith("exp: sweep: 2 ok, 1 failed in ")


def test_live_progress_renders_without_a_terminal():
    out = io.StringIO()
    with SweepProgress(2, "live", stream=out, live=True) as p:
        p.set_running(1)
        p.finished(True, "x", 0.1)
        p.finished(True, "y", 0.1)
    text = out.getvalue()
    assert "2/2" in text and "failed" in text and "live: 2 ok, 0 failed" in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_large_sweep_shows_its_composing_on_a_terminal_and_nothing_elsewhere():
    """``composing``: every job passes through in order; on a terminal a sweep of
    ``COMPOSE_BAR_JOBS`` or more jobs shows a bar while they are composed and validated;
    a smaller sweep, or any sweep off a terminal (CI, pipes: a bad job's error stays the
    only line), shows nothing."""
    from pipeline.progress import COMPOSE_BAR_JOBS, composing

    n = COMPOSE_BAR_JOBS + 5
    tty = _Terminal()
    assert list(composing(iter(range(n)), n, tty)) == list(range(n))
    assert "composing and validating jobs" in tty.getvalue() and f"{n}/{n}" in tty.getvalue()
    for stream, total in ((io.StringIO(), n), (_Terminal(), COMPOSE_BAR_JOBS - 1)):
        assert list(composing(iter(range(total)), total, stream)) == list(range(total))
        assert stream.getvalue() == ""
