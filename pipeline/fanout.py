"""Run a sweep: skip what is done, execute the rest on Ray or serially, write each
result on the driver as it arrives, summarise.

``sweep(specs, ray_cfg)`` is the driver of every run and sweep (``results.dir`` must
be a directory it can write in, or create - else a ``ConfigError`` before anything runs):

1. **Resume.** A run whose result is already there and valid - same config hash,
   same code version, status ok, every file readable (``pipeline.sink.completed``) -
   is skipped; a failed, missing, stale or broken one runs again. ``rerun=True``
   (``--rerun``, ``hydra.launcher.rerun=true``) runs everything. Two jobs of one sweep
   with the same config run once.
2. **Fan-out.** One Ray task per run (``enabled``), or the same function serially in
   this process - the way to debug a sweep. A task whose worker dies (SIGKILL, OOM
   killer, lost node) is retried by Ray up to ``max_retries`` times; after that the
   run is a failed row (``error_type`` ``WorkerCrashedError``...) and the next resume
   runs it again.
3. **Results come back.** Workers only simulate and return Arrow tables; the driver
   writes them (``pipeline.sink``, atomically), so a cluster needs no shared
   filesystem. A run that raises is a row with ``status='failed'``; the others go on.
4. **Summary.** A last line ``<label>: <ok> ok, <failed> failed, <skipped> skipped in
   <time>``, the DuckDB summary table of every run of the sweep, and ``SweepFailed``
   (exit status 1) if any run failed. SIGTERM or Ctrl-C stop the sweep between
   results (``Interrupted``, ``pipeline.signals``): what was written stays, a write
   under way completes, the same command resumes. A result that cannot be written
   (disk full, read-only) stops it the same way (``OutputError``, exit status 74).

Each run executes in ``pipeline.worker.simulate_run`` (wall budget, the code it ran).

Ray, by default, is an embedded local instance: ``ray.init(address="local")`` with
the dashboard off, ``num_cpus`` = the machine's cores and a modest object store.
With ``address`` (or ``RAY_ADDRESS``, or ``address=auto``) the runs go to an existing
cluster; then no resource options are passed (Ray refuses them when joining) and the
project's ``models`` and ``pipeline`` packages travel to the workers
(``runtime_env.py_modules``, byte-code caches excluded) unless ``ship_code`` is off.
A ``host:port`` address is probed first, so a wrong one is a one-line error rather
than ``ray.init`` retrying for minutes. A Ray session that was already initialised (a
test's, a notebook's) is reused and left running; one started here is shut down.
"""
from __future__ import annotations

import signal
import sys
import time
from typing import Callable, Sequence

from .errors import (ConfigError, Interrupted, OutputError, SweepFailed, check_output_dir,
                     describe)
from .job import RunOutput, error_text
from .progress import SweepProgress
from .runwatch import ProgressBoard, reporting
from .schema import RayConfig
from .signals import Stopped, StopSignals
# failed_output: re-exported (it lived here before pipeline.worker)
from .worker import _failed_from, failed_output, loaded_code_hash, simulate_run  # noqa: F401
from .ray_session import SHIP_EXCLUDES, check_ray_config, init_ray  # noqa: F401
from .spec import RunSpec


# -- validation ------------------------------------------------------------------------------
def prepare_run(cfg, experiment: str, code_version: str) -> RunSpec:
    """``pipeline.spec.prepare`` (validation and a trial build), with any exception it
    lets through that is no ``ConfigError`` - a model or build step tripping over a
    value validation let pass - also reported as a configuration error: nothing has
    run yet, and the user gets one line (where it broke) instead of a traceback."""
    from .spec import prepare

    try:
        spec = prepare(cfg, experiment, code_version)
    except Exception as ex:
        if describe(ex) is not None:
            raise
        raise ConfigError("", f"this configuration cannot be built: {error_text(ex)}") from None
    check_detail_rows(spec)
    return spec


# A run keeps its iostat detail rows in memory until it ends (~0.5-1 KB each as Python
# dicts; ~100 B each in Parquet): a million rows is about a gigabyte at most.
MAX_DETAIL_ROWS = 1_000_000


def detail_rows_estimate(spec: RunSpec) -> int | None:
    """Rows of the ``iostat`` detail table a run will write: one per block queue per
    ``results.sample_ms`` of simulated time. The simulated time is ``run.duration_s``,
    else the workload's ``runtime_s`` and its lead-in (fio's ``startdelay_s`` and
    ``ramp_time_s``: it runs them all);
    None when neither bounds it (a workload that ends when its work is done)."""
    if not spec.results.details:
        return 0
    duration_s = _simulated_seconds(spec)
    if not duration_s:
        return None
    per_queue = duration_s * 1e3 / spec.results.sample_ms
    return int(min(per_queue * max(1, len(spec.top_level)), 2**62))


def _simulated_seconds(spec: RunSpec) -> float:
    """``run.duration_s``, else the workload's ``runtime_s`` + ``startdelay_s`` +
    ``ramp_time_s`` (0: unbounded)."""
    cfg = spec.workload.config
    runtime = getattr(cfg, "runtime_s", 0) or 0
    lead_in = (getattr(cfg, "ramp_time_s", 0) or 0) + (getattr(cfg, "startdelay_s", 0) or 0)
    return spec.run.duration_s or (runtime + lead_in if runtime else 0)


def check_detail_rows(spec: RunSpec) -> None:
    """``ConfigError`` on ``results.sample_ms`` when the estimate exceeds ``MAX_DETAIL_ROWS``."""
    rows = detail_rows_estimate(spec)
    if rows is not None and rows > MAX_DETAIL_ROWS:
        raise ConfigError("results.sample_ms",
                          f"{spec.results.sample_ms:g} ms over {_simulated_seconds(spec):g} "
                          f"simulated s would make ~{rows:.3g} iostat detail rows (limit "
                          f"{MAX_DETAIL_ROWS:,}); sample less often or set results.details=false")


# -- fan-out ---------------------------------------------------------------------------------
def _deliver(i: int, spec: RunSpec, out: RunOutput, on_result, progress: SweepProgress,
             stop: StopSignals) -> None:
    """Write one result and count it, as one step a stop signal does not cut short."""
    with stop.deferred():
        on_result(i, out)
        progress.finished(out.status == "ok", spec.config_hash, out.wall_seconds)


def run_serial(specs: Sequence[RunSpec], on_result: Callable[[int, RunOutput], None],
               progress: SweepProgress, stop: StopSignals | None = None) -> None:
    stop = stop or StopSignals()
    for i, spec in enumerate(specs):
        stop.check()
        progress.set_running(1)
        key = spec.config_hash
        try:
            with reporting(lambda fraction: progress.running_at({key: fraction})):
                out = simulate_run(spec)
        except Exception as ex:   # a bug in the pipeline around the model: still a row
            out = _failed_from(spec, ex)
        progress.set_running(0)
        _deliver(i, spec, out, on_result, progress, stop)


def run_ray(specs: Sequence[RunSpec], cfg: RayConfig,
            on_result: Callable[[int, RunOutput], None], progress: SweepProgress,
            started: bool = False, stop: StopSignals | None = None) -> None:
    """Run on the initialised Ray session; shut it down at the end if ``started``.
    Signals are polled (``StopSignals.polled``): Ray's calls are C code, out of which
    an exception raised by a signal handler cannot come cleanly."""
    import ray

    stop = stop or StopSignals()
    pending: list = []
    board = None
    with stop.polled():
        try:
            remote = ray.remote(num_cpus=1, max_retries=cfg.max_retries)(simulate_run)
            expected = loaded_code_hash()   # what every worker must run (pipeline.worker)
            board = ray.remote(num_cpus=0)(ProgressBoard).remote()   # runs under way
            index = {}
            for i, spec in enumerate(specs):
                stop.check()
                ref = remote.remote(spec, expected, board)
                index[ref] = i
                pending.append(ref)
            slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
            progress.set_running(min(slots, len(pending)))
            finished: set = set()
            while pending:
                stop.check()
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
                if not ready:
                    _show_board(board, finished, progress)
                for ref in ready:
                    stop.check()   # a worker killed by the same signal is no failed run
                    i = index[ref]
                    try:
                        out = ray.get(ref)
                    except Exception as ex:  # the worker died beyond its retries, or a bug
                        out = _failed_from(specs[i], ex)
                    stop.check()
                    progress.set_running(min(slots, len(pending)))
                    finished.add(specs[i].config_hash)
                    _deliver(i, specs[i], out, on_result, progress, stop)
        finally:
            for ref in pending:   # interrupted: do not leave the cluster busy
                try:
                    ray.cancel(ref, force=True)
                except Exception:
                    pass
            if board is not None:
                try:
                    ray.kill(board)
                except Exception:
                    pass
            if started:
                ray.shutdown()


def _show_board(board, finished: set, progress: SweepProgress) -> None:
    """The runs under way as their workers last reported them (``ProgressBoard``); a
    board that does not answer in time shows nothing new."""
    import ray

    try:
        fractions = ray.get(board.take.remote(), timeout=0.5)
    except Exception:
        return
    progress.running_at({k: v for k, v in fractions.items() if k not in finished})


def run_all(specs: Sequence[RunSpec], cfg: RayConfig | None,
            on_result: Callable[[int, RunOutput], None], label: str = "sweep",
            skipped: int | None = None, names: dict | None = None) -> SweepProgress:
    """Execute every spec (Ray if ``cfg.enabled``), calling ``on_result`` as each ends;
    SIGTERM and Ctrl-C become ``Interrupted`` (after the results so far are written;
    a write under way completes first - ``pipeline.signals``)."""
    use_ray = cfg is not None and cfg.enabled and len(specs) > 0
    started = init_ray(cfg) if use_ray else False   # a bad address: an error before any output
    progress = SweepProgress(len(specs), label, skipped=skipped, names=names)
    try:
        # installed after ray.init, over its own SIGTERM handler (sys.exit); restored after
        with StopSignals() as stop, progress:
            if use_ray:
                run_ray(specs, cfg, on_result, progress, started, stop)
            else:
                run_serial(specs, on_result, progress, stop)
    except OutputError as ex:   # the run being written counts as not run
        raise ex.counted(progress.done - progress.failed, progress.failed,
                         len(specs) - progress.done) from None
    except (KeyboardInterrupt, Stopped) as ex:
        signum = ex.signum if isinstance(ex, Stopped) else signal.SIGINT
        raise Interrupted(int(signum), progress.done - progress.failed, progress.failed,
                          len(specs) - progress.done) from None
    return progress


# -- the driver --------------------------------------------------------------------------------
def sweep(specs: Sequence[RunSpec], ray_cfg: RayConfig | None, *, rerun: bool = False,
          label: str = "sweep", out=None) -> list[RunOutput | None]:
    """Resume, run, write, summarise (see the module docstring). Returns one entry per
    spec: its ``RunOutput``, or None where a valid result was already there. Raises
    ``SweepFailed`` (after writing every row) if any run failed."""
    from . import sink
    from .sweep import below_scale_notice

    out = out or sys.stdout
    notice = below_scale_notice(specs)
    if notice:
        print(notice, file=out, flush=True)
    roots = sorted({str(s.results.dir) for s in specs})
    for root in roots:   # before anything runs: a file, or a read-only directory
        check_output_dir(root, "results.dir")
    for root in roots:
        sink.clean_staging(root)
    first: dict[tuple, int] = {}
    todo: list[int] = []
    skipped = 0
    for i, s in enumerate(specs):
        key = (str(s.results.dir), s.experiment, s.config_hash)
        if key in first:
            continue
        first[key] = i
        if not rerun and sink.completed(s.results.dir, s.experiment, s.config_hash,
                                        s.code_version, want_details=s.results.details):
            skipped += 1
        else:
            todo.append(i)
    results: dict[int, RunOutput] = {}

    def on_result(j: int, res: RunOutput) -> None:
        s = specs[todo[j]]
        meta = {"run_key": sink.run_key(s.config_hash, s.code_version), "status": res.status,
                "code_version": s.code_version, "details": s.results.details,
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                # the config's meta.headline: what pipeline.report draws for a run kept
                # under an ad-hoc run.name, which has no experiment YAML of its own
                "headline": ",".join(s.meta.headline)}
        meta.update(res.resources)
        try:
            sink.write_run(s.results.dir, res.experiment, res.config_hash, res.tables, meta,
                           files=getattr(res, "files", None))
        except OSError as ex:   # disk full, quota, gone read-only: stop, keep what is there
            raise OutputError(s.results.dir, ex) from None
        results[todo[j]] = res

    from .naming import spec_names

    names = dict(zip((s.config_hash for s in specs), spec_names(specs)))
    run_all([specs[i] for i in todo], ray_cfg, on_result, label, skipped=skipped, names=names)

    if specs and specs[0].results.summary:
        from .summary import print_sweep_summary

        print_sweep_summary(specs, out)
    failed = [results[i] for i in todo if i in results and results[i].status != "ok"]
    if failed:
        err = failed[0].tables["summary"].column("error")[0].as_py()
        raise SweepFailed(f"{len(failed)} of {len(first)} run(s) failed (status/error "
                          f"columns); first: {err}")
    return [results.get(first[(str(s.results.dir), s.experiment, s.config_hash)])
            for s in specs]
