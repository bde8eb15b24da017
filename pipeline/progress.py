"""Progress of a sweep: runs done / failed / running, elapsed and ETA.

On a terminal: a live ``rich`` bar. Elsewhere (CI, pipes, tests): one plain line per
finished run on stderr, so logs stay readable and nothing is redrawn. A sweep that
resumes passes ``skipped`` (runs whose results were already there); the last line is
then ``<label>: <ok> ok, <failed> failed, <skipped> skipped in <time>``.
"""
from __future__ import annotations

import sys
import time


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

    # -- counting ------------------------------------------------------------------------
    def set_running(self, n: int) -> None:
        self.running = n
        self._refresh()

    def finished(self, ok: bool, what: str = "", wall_s: float = 0.0) -> None:
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
        return {"failed": self.failed, "running": self.running}

    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done, **self._fields())

    def __enter__(self) -> "SweepProgress":
        if self.live:
            if self.skipped:
                print(f"{self.label}: {self.skipped} run(s) done already (skipped)",
                      file=self.stream, flush=True)
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
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
                MofNCompleteColumn(table_column=fixed(2 * digits + 1)),
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
