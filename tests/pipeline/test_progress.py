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
