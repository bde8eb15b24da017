"""SIGTERM and SIGINT during a sweep: a request to stop, honoured where it is safe.

``timeout``, systemd, Slurm and other batch systems end a job with SIGTERM; a user
with Ctrl-C (SIGINT). Both mean the same here: stop starting runs, keep every result
already written, tell the user how to resume, exit with ``128 + signal``.

Where the request takes effect (``StopSignals``):

- **in Python code** (a serial run simulating): at once - the handler raises
  ``Stopped``, a ``BaseException``, so no ``except Exception`` of a run turns it into
  a failed row;
- **inside a write** (``deferred()``: writing a run's files and renaming them into
  place): when the write is complete, so a signal never leaves a half-written file in
  staging;
- **inside a C extension call** (``polled()``: Ray's ``ray.wait``/``ray.get``): the
  handler only records the signal, and the caller checks it (``check()``) when the
  call returns. An exception raised by a Python signal handler inside Ray's Cython
  ``CoreWorker.wait`` comes out as ``SystemError: ... returned a result with an
  exception set`` and a long traceback instead of a clean stop.

The handlers are installed for the duration of a ``with StopSignals():`` block (in
the main thread only; elsewhere Python does not deliver signals and the block does
nothing), over whatever was there (``ray.init`` installs a SIGTERM handler that calls
``sys.exit``), and restored afterwards. A signal ignored at start (``SIG_IGN``, e.g.
``nohup``) stays ignored.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stopped(BaseException):
    """A stop signal arrived; raised where it is safe to stop (see the module)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


class StopSignals:
    """Context manager turning SIGTERM/SIGINT into ``Stopped`` at safe points."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._defer = 0          # depth of deferred() blocks
        self._poll = 0           # depth of polled() blocks
        self._old: dict[int, object] = {}

    # -- the handler ---------------------------------------------------------------------
    def _handler(self, signum, _frame) -> None:
        if self.signum is None:
            self.signum = int(signum)
        if self._defer == 0 and self._poll == 0:
            raise Stopped(signum)

    def check(self) -> None:
        """Raise ``Stopped`` if a stop signal has arrived."""
        if self.signum is not None:
            raise Stopped(self.signum)

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @contextmanager
    def deferred(self):
        """A block a signal must not cut short (a write and its rename); a signal that
        arrived during it is raised at its end."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if self._defer == 0 and self._poll == 0:
            self.check()

    @contextmanager
    def polled(self):
        """A block of C-extension calls: a signal is only recorded; ``check()`` it."""
        self._poll += 1
        try:
            yield
        finally:
            self._poll -= 1

    # -- installing ------------------------------------------------------------------------
    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                if signal.getsignal(s) is signal.SIG_IGN:
                    continue
                self._old[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        for s, old in self._old.items():
            signal.signal(s, old if old is not None else signal.SIG_DFL)
        self._old.clear()
