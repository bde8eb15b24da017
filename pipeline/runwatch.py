"""Progress within one run: how far its simulated clock has got towards the time the run
is known to end, for runs of a simulated hour that take many minutes of CPU.

``RunWatch`` is a daemon thread beside the simulation that, every ``interval_s`` of
wall time, reads the simulator's clock (``Simulator.now_ns``, one int attribute) and
calls ``report(fraction)`` with ``now_ns / end_ns`` (at most 1). It only reads: the run
is not touched, so its results, event count and random streams are the same with and
without a watcher. The end is ``run.duration_s`` when the run has one, else the
measured interval's end that a workload of the server's sort fixes when it starts
(``MeasuredRun.deadline_ns``: tpcc, sysbench with a ``time`` limit); a run that ends
when its workload has done a count of work (fio's bytes, mysqlslap's queries) has no
known end and reports nothing.

Who wants the reports says so around the run (``with reporting(fn): ...``:
``pipeline.fanout`` on the serial path, ``pipeline.worker`` on Ray), so the functions
between keep their signatures; ``pipeline.build.simulate`` runs the simulator inside
``watch(...)``, which watches only when someone does. On Ray the worker's reports go to
a ``ProgressBoard`` actor (fire and forget) that the driver reads while it waits for
results (``pipeline.fanout``).
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Callable

INTERVAL_S = 1.0
_REPORT: contextvars.ContextVar = contextvars.ContextVar("dbio_run_progress", default=None)


@contextlib.contextmanager
def reporting(report: Callable[[float], None], interval_s: float = INTERVAL_S):
    """Runs simulated inside the block report their progress to ``report(fraction)``."""
    token = _REPORT.set((report, interval_s))
    try:
        yield
    finally:
        _REPORT.reset(token)


def watch(sim, until_ns: int | None, workload):
    """The context to run ``sim`` in: a ``RunWatch`` when a report is wanted
    (``reporting``) and the run's end is known, else nothing."""
    wanted = _REPORT.get()
    end = expected_end_ns(until_ns, workload) if wanted is not None else None
    if not end:
        return contextlib.nullcontext()
    report, interval_s = wanted
    return RunWatch(sim, end, report, interval_s)


def expected_end_ns(until_ns: int | None, workload) -> int | None:
    """The simulated time the run will end at, if known once its workload has started."""
    if until_ns:
        return until_ns
    end = getattr(workload, "deadline_ns", None)
    return end if isinstance(end, int) and end > 0 else None


class RunWatch:
    """``with RunWatch(sim, end_ns, report): sim.run(...)`` - ``report(fraction)`` from a
    daemon thread every ``interval_s`` wall seconds while the block runs."""

    def __init__(self, sim, end_ns: int, report: Callable[[float], None],
                 interval_s: float = INTERVAL_S) -> None:
        if not end_ns > 0:
            raise ValueError(f"end_ns: must be > 0, got {end_ns}")
        self.sim, self.end_ns, self.report, self.interval_s = sim, end_ns, report, interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def fraction(self) -> float:
        return min(1.0, max(0.0, self.sim.now_ns / self.end_ns))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.report(self.fraction())
            except Exception:     # a display that failed must not stop the run
                return

    def __enter__(self) -> "RunWatch":
        self._thread = threading.Thread(target=self._loop, name="dbio-runwatch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)


class ProgressBoard:
    """The fractions of the runs under way on Ray (made an actor by ``pipeline.fanout``):
    workers ``put`` theirs, the driver ``take``s them all."""

    def __init__(self) -> None:
        self.fractions: dict = {}

    def put(self, key, fraction: float) -> None:
        self.fractions[key] = fraction

    def take(self) -> dict:
        return dict(self.fractions)
