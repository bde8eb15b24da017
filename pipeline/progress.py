"""Progress of a sweep: runs done / failed / running, elapsed and ETA.

On a terminal: a live ``rich`` bar. Elsewhere (CI, pipes, tests): one plain line per
finished run on stderr, so logs stay readable and nothing is redrawn. Runs under way
report the share of their simulated time done (``pipeline.runwatch``; ``running_at``):
the bar counts it as part of a run, and the plain output prints a line of them at most
every ``PLAIN_EVERY_S`` (the first that long into the sweep), so a sweep of hour-long
runs shows where it is before its first run ends. A sweep that
resumes passes ``skipped`` (runs whose results were already there); the last line is
then ``<label>: <ok> ok, <failed> failed, <skipped> skipped in <time>``.
"""
from __future__ import annotations

import sys
import threading
import time

PLAIN_EVERY_S = 60.0


def _fmt_s(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class SweepProgress:
    """Counts runs and shows them; use as a context manager."""

    def __init__(self, total: int, label: str = "sweep", stream=None, live: bool | None = None,
                 skipped: int | None = None, names: dict | None = None) -> None:
        self.total = total
        self.names = names or {}     # config hash -> the run's name (pipeline.naming)
        self.skipped = skipped
        self.label = label
        self.stream = stream or sys.stderr
        self.done = 0
        self.failed = 0
        self.running = 0
        self.t0 = time.perf_counter()
        self.live = self.stream.isatty() if live is None else live
        self._progress = None
        self._task = None
        self.fractions: dict = {}        # config hash -> share of its simulated time done
        self._plain_at = time.perf_counter() + PLAIN_EVERY_S
        self._lock = threading.Lock()    # reports come from a watcher thread

    # -- counting ------------------------------------------------------------------------
    def set_running(self, n: int) -> None:
        self.running = n
        self._refresh()

    def running_at(self, fractions: dict) -> None:
        """The runs under way and the share of their simulated time each has done
        (config hash -> fraction; replaces what was reported before)."""
        with self._lock:
            self.fractions = dict(fractions)      # each in [0, 1] (RunWatch.fraction)
            if not self.live and self.fractions and time.perf_counter() >= self._plain_at:
                self._plain_at = time.perf_counter() + PLAIN_EVERY_S
                named = sorted((str(self.names.get(k, k)), v) for k, v in self.fractions.items())
                runs = ", ".join(f"{name} {v:.0%}" for name, v in named)
                print(f"[{self.done}/{self.total}] under way: {runs} of their simulated time",
                      file=self.stream, flush=True)
        self._refresh()

    def finished(self, ok: bool, what: str = "", wall_s: float = 0.0) -> None:
        with self._lock:
            self.fractions.pop(what, None)
        self.done += 1
        if not ok:
            self.failed += 1
        if not self.live:
            status = "ok" if ok else "FAILED"
            what = self.names.get(what, what)
            print(f"[{self.done}/{self.total}] {status} {what} ({wall_s:.1f} s; failed "
                  f"{self.failed}, running {self.running}, eta {_fmt_s(self.eta())})",
                  file=self.stream, flush=True)
        self._refresh()

    def eta(self) -> float | None:
        if not self.done:
            return None
        elapsed = time.perf_counter() - self.t0
        return elapsed / self.done * (self.total - self.done)

    # -- display ---------------------------------------------------------------------------
    def _fields(self) -> dict:
        return {"failed": self.failed, "running": self.running, "done": self.done}

    def _refresh(self) -> None:
        if self._progress is not None:
            with self._lock:
                partial = sum(self.fractions.values())
            self._progress.update(self._task, completed=self.done + partial, **self._fields())

    def __enter__(self) -> "SweepProgress":
        if self.live:
            if self.skipped:
                print(f"{self.label}: {self.skipped} run(s) done already (skipped)",
                      file=self.stream, flush=True)
            from rich.console import Console
            from rich.progress import (BarColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            from rich.table import Column

            def fixed(width: int) -> Column:
                return Column(no_wrap=True, min_width=width)

            digits = len(str(self.total))

            # At 80 columns the counts, elapsed time and ETA keep their width; the label
            # is elided and the bar shrinks first.
            console = Console(file=self.stream)
            counts = (2 * digits + 1) + 8 + 9 + 7 + 3 + 7 + 7     # their text, 7 gaps
            label_w = max(8, console.width - counts - 10)         # a bar of 10 or more
            self._progress = Progress(
                TextColumn("[bold]{task.description}", table_column=Column(
                    no_wrap=True, overflow="ellipsis", max_width=label_w)),
                BarColumn(bar_width=None, table_column=Column(min_width=5)),
                # runs finished (the bar also counts the share of the runs under way)
                TextColumn(f"{{task.fields[done]}}/{self.total}", justify="right",
                           table_column=fixed(2 * digits + 1)),
                TextColumn("failed [red]{task.fields[failed]}[/]", table_column=fixed(8)),
                TextColumn("running {task.fields[running]}", table_column=fixed(9)),
                TimeElapsedColumn(table_column=fixed(7)), TextColumn("eta", table_column=fixed(3)),
                TimeRemainingColumn(table_column=fixed(7)),
                console=console, transient=False)
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, **self._fields())
        else:
            print(f"{self.label}: {self.total} run(s){self._skipped_note()}", file=self.stream,
                  flush=True)
        return self

    def _skipped_note(self) -> str:
        return f" to run, {self.skipped} done already (skipped)" if self.skipped else ""

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.stop()
        skipped = "" if self.skipped is None else f", {self.skipped} skipped"
        print(f"{self.label}: {self.done - self.failed} ok, {self.failed} failed{skipped} in "
              f"{_fmt_s(time.perf_counter() - self.t0)}", file=self.stream, flush=True)


# A sweep of at least this many jobs shows its composing and validating on a terminal
COMPOSE_BAR_JOBS = 20


def composing(jobs, total: int, stream=None):
    """Yield from ``jobs`` (the sweep's jobs being composed and validated), showing a
    transient bar on a terminal when there are ``COMPOSE_BAR_JOBS`` or more: each job is
    composed by Hydra and given a trial build before any runs (~0.3 s a job - a minute
    for 200), so a large sweep would otherwise sit silent. Elsewhere nothing is shown (a
    bad job's error stays the only line), and the bar leaves nothing behind."""
    stream = stream or sys.stderr
    if total < COMPOSE_BAR_JOBS or not stream.isatty():
        yield from jobs
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("composing and validating jobs"), BarColumn(),
                  MofNCompleteColumn(), console=Console(file=stream), transient=True) as bar:
        task = bar.add_task("compose", total=total)
        for job in jobs:
            yield job
            bar.advance(task)
