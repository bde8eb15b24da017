"""One run on a worker (a Ray task, or in the driver's process on the serial path):
the simulation within its wall-clock budget, and the code it actually ran.

- **Wall budget.** ``results.max_wall_s`` (real seconds; 0 = none): a ``SIGALRM``
  timer raises ``WallBudgetExceeded`` in the running simulation, and the run becomes a
  failed row (``error_type`` ``WallBudgetExceeded``) instead of running until killed.
  Ray runs a task in its worker process's main thread, where the timer can be set.
- **The code that ran.** ``loaded_code_hash`` hashes the ``*.py`` files of the
  ``models`` and ``pipeline`` packages this process imported (paths relative to each
  package's parent, so a shipped copy in Ray's ``runtime_resources`` hashes like the
  driver's checkout). The driver passes its own; a worker that imported other code (a
  checkout of its own, earlier on its ``sys.path`` than the shipped ``py_modules``)
  refuses to run and says so. Every run records the hash it ran in its footer
  (``dbio.code_hash``) beside ``dbio.code_dir``.

- **No garbage collection during a run.** The simulation allocates millions of small
  objects (events, requests, generator frames) and keeps few of them: the cyclic
  collector, triggered by allocation counts, would scan the live heap again and
  again for cycles it rarely finds. ``gc_paused`` freezes what is alive before the run
  (``gc.freeze``: moved out of the collector's generations) and disables collection;
  after the run it collects the young generations once - the objects the run created,
  which the disabled collector left there - and restores the collector as it was. What
  the run leaves in reference cycles is freed then instead of during the run (peak RSS
  of E5 measured before/after in the README's Speed section). Not a full collection: that
  walks the whole heap of Ray, Hydra, pyarrow and numba again (~70-120 ms), more than a
  short run costs; what was alive before the run is the oldest generation again, left to
  the collector's own schedule.

Not handled: a worker whose code matches but whose installed libraries differ (numpy,
pyarrow versions); only the project's own code is compared.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from .job import RunOutput, execute
from .runwatch import reporting
from .spec import RunSpec


@functools.lru_cache(maxsize=1)
def loaded_code_hash() -> str:
    """Hash of the ``models`` and ``pipeline`` sources this process imported (the same
    files and digest as ``pipeline.version.source_hash`` of a checkout)."""
    import models
    import pipeline

    h = hashlib.sha256()
    for pkg in (models, pipeline):
        base = Path(pkg.__file__).resolve().parent
        for path in sorted(base.rglob("*.py")):
            h.update(str(path.relative_to(base.parent)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


class WallBudgetExceeded(BaseException):
    """A run went past ``results.max_wall_s`` (raised by a timer signal, so a
    BaseException: no ``except Exception`` of the model keeps running it)."""


@contextlib.contextmanager
def wall_budget(seconds: float):
    """Raise ``WallBudgetExceeded`` in this thread after ``seconds`` of wall time
    (``SIGALRM`` timer; the main thread only - Ray runs a task in its worker's main
    thread). 0, another thread, or a ``SIGALRM`` timer already armed by the caller
    (whose alarm must not be cancelled): no budget."""
    if (not seconds or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0):
        yield
        return

    def expired(_signum, _frame):
        raise WallBudgetExceeded(seconds)

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off for the duration (``gc.freeze`` of what is
    alive, ``gc.disable``); afterwards one collection of the young generations (what
    the run allocated; module docstring) and the collector as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
        gc.collect(1)


def simulate_run(spec: RunSpec, expected_code: str | None = None, board=None) -> RunOutput:
    """The Ray task (``ray::simulate_run`` in ``ps``): ``execute`` within the run's wall
    budget (``results.max_wall_s``; past it, a failed row), plus where it ran and the
    code it ran (``code_hash``). With ``expected_code`` (the driver's
    ``loaded_code_hash``), a worker whose imported code differs runs nothing: a failed
    row ``CodeVersionMismatch`` naming the directory it imported from. With ``board``
    (on Ray: the driver's ``ProgressBoard`` actor) the run reports its progress there
    under its config hash (``pipeline.runwatch``)."""
    import pipeline

    code_dir = os.path.dirname(os.path.abspath(pipeline.__file__))
    ran = loaded_code_hash()
    t0 = time.perf_counter()
    if expected_code is not None and ran != expected_code:
        out = failed_output(spec, f"CodeVersionMismatch: this worker ({socket.gethostname()}) "
                            f"imported pipeline from {code_dir} (code {ran}), not the driver's "
                            f"code ({expected_code}); the shipped copy did not take precedence "
                            "- remove that directory from the worker's PYTHONPATH/cwd",
                            "CodeVersionMismatch")
        out.resources.update(code_dir=code_dir, code_hash=ran)
        return out
    try:
        report = contextlib.nullcontext()
        if board is not None:
            key = spec.config_hash
            report = reporting(lambda fraction: board.put.remote(key, fraction))  # no wait
        with wall_budget(spec.results.max_wall_s), gc_paused(), report:
            out = execute(spec)
    except WallBudgetExceeded:
        out = failed_output(spec, f"WallBudgetExceeded: the run took longer than "
                            f"results.max_wall_s={spec.results.max_wall_s:g} s of wall time",
                            "WallBudgetExceeded")
        out.wall_seconds = time.perf_counter() - t0
    out.resources["code_dir"] = code_dir
    out.resources["code_hash"] = ran
    ray = sys.modules.get("ray")   # never import (or auto-start) Ray on the serial path
    if ray is not None and ray.is_initialized():
        try:
            out.resources["node_id"] = ray.get_runtime_context().get_node_id()
        except Exception:
            pass
    return out


def failed_output(spec: RunSpec, error: str, error_type: str) -> RunOutput:
    """The row of a run whose worker died or whose execution broke (no result came back)."""
    from .job import summary_table

    row = {"experiment": spec.experiment, "config_hash": spec.config_hash,
           "code_version": spec.code_version, "seed": spec.seed, "status": "failed",
           "error": error, "error_type": error_type, "sim_seconds": 0.0,
           "wall_seconds": 0.0, "events_processed": 0}
    row.update(spec.params)
    row.update(spec.labels)   # run.below_valid_scale (not a parameter, not hashed)
    return RunOutput(spec.experiment, spec.config_hash, "failed",
                     {"summary": summary_table(row)}, 0.0)


def _failed_from(spec: RunSpec, ex: BaseException) -> RunOutput:
    cause = getattr(ex, "cause", None)   # RayTaskError wraps the task's own exception
    inner = cause if isinstance(cause, BaseException) else ex
    first = (str(inner).strip().splitlines() or [""])[0]
    return failed_output(spec, f"{type(inner).__name__}: {first}", type(inner).__name__)
