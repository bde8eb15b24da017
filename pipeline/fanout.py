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
   results (``Interrupted``): what was written stays, the same command resumes.

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

import logging
import os
import signal
import socket
import sys
import time
from typing import Any, Callable, Sequence

from .errors import ConfigError, Interrupted, SweepFailed, check_output_dir, describe
from .job import RunOutput, error_text, execute
from .progress import SweepProgress
from .schema import RayConfig
from .spec import RunSpec

# Keep shipped code small: byte code and numba's caches are rebuilt on the workers.
SHIP_EXCLUDES = ["__pycache__", "*.pyc", "*.nbi", "*.nbc"]


# -- Ray session ------------------------------------------------------------------------
def _address(cfg: RayConfig) -> str | None:
    return cfg.address or os.environ.get("RAY_ADDRESS") or None


def check_ray_config(cfg: RayConfig, prefix: str = "hydra.launcher.ray") -> None:
    """Range checks of the launcher's Ray settings (``ConfigError`` naming the key)."""
    if cfg.num_cpus is not None and cfg.num_cpus < 1:
        raise ConfigError(f"{prefix}.num_cpus", f"must be >= 1 or null (all cores), got {cfg.num_cpus}")
    if cfg.max_retries < -1:
        raise ConfigError(f"{prefix}.max_retries",
                          f"must be >= 0, or -1 (retry forever), got {cfg.max_retries}")
    if cfg.object_store_memory_mb < 75:
        raise ConfigError(f"{prefix}.object_store_memory_mb",
                          f"must be >= 75 (Ray's minimum), got {cfg.object_store_memory_mb}")
    if cfg.address is not None and not str(cfg.address).strip():
        raise ConfigError(f"{prefix}.address", "must be null, 'auto', 'local', "
                          "'host:port' or 'ray://host:port', got an empty string")


def _probe(address: str, key: str, timeout_s: float = 5.0) -> None:
    """A ``host:port`` GCS address must accept a TCP connection."""
    if address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(key, f"expected 'host:port', 'auto' or 'ray://host:port', got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except OSError as ex:
        raise ConfigError(key, f"no Ray cluster at {address} ({ex.strerror or ex})") from None


def init_ray(cfg: RayConfig) -> bool:
    """Initialise Ray unless it already is; True if this call started it."""
    import ray

    address = _address(cfg)
    key = "hydra.launcher.ray.address" if cfg.address else "RAY_ADDRESS"
    if ray.is_initialized():
        if cfg.address and cfg.address not in ("auto", "local"):
            _probe(cfg.address, key)
            current = ray.get_runtime_context().gcs_address
            if current and current.split("://")[-1] != cfg.address.split("://")[-1]:
                raise ConfigError(key, f"this process is already connected to Ray at {current}; "
                                  f"cannot also join {cfg.address}")
        return False
    kw: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR,
                          "configure_logging": True}
    runtime_env = dict(cfg.runtime_env or {})
    if address and address != "local":
        _probe(address, key)
        if cfg.ship_code and "py_modules" not in runtime_env:
            import models
            import pipeline

            runtime_env["py_modules"] = [models, pipeline]
            runtime_env.setdefault("excludes", list(SHIP_EXCLUDES))
        kw["address"] = address
    else:
        # address="local": always a new instance, never one left by `ray start`
        kw.update(address="local", include_dashboard=cfg.include_dashboard,
                  num_cpus=cfg.num_cpus or os.cpu_count() or 1,
                  object_store_memory=int(cfg.object_store_memory_mb) * 2**20)
    if runtime_env:
        kw["runtime_env"] = runtime_env
    try:
        ray.init(**kw)
    except Exception as ex:
        if not address or address == "local":
            raise
        msg = error_text(ex).split(" at ")[0]
        if type(ex).__name__ == "AuthenticationError":
            msg = ("the cluster uses token authentication: set RAY_AUTH_MODE=token and "
                   "RAY_AUTH_TOKEN (or ~/.ray/auth_token) to the cluster's token")
        raise ConfigError(key, f"cannot join the Ray cluster at {address}: {msg}") from None
    return True


# -- validation ------------------------------------------------------------------------------
def prepare_run(cfg, experiment: str, code_version: str) -> RunSpec:
    """``pipeline.spec.prepare`` (validation and a trial build), with any exception it
    lets through that is no ``ConfigError`` - a model or build step tripping over a
    value validation let pass - also reported as a configuration error: nothing has
    run yet, and the user gets one line (where it broke) instead of a traceback."""
    from .spec import prepare

    try:
        return prepare(cfg, experiment, code_version)
    except Exception as ex:
        if describe(ex) is not None:
            raise
        raise ConfigError("", f"this configuration cannot be built: {error_text(ex)}") from None


# -- one run, on a worker ------------------------------------------------------------------
def simulate_run(spec: RunSpec) -> RunOutput:
    """The Ray task (``ray::simulate_run`` in ``ps``): ``execute`` plus where it ran."""
    out = execute(spec)
    import pipeline

    out.resources["code_dir"] = os.path.dirname(os.path.abspath(pipeline.__file__))
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
    row.update(spec.labels)
    return RunOutput(spec.experiment, spec.config_hash, "failed",
                     {"summary": summary_table(row)}, 0.0)


def _failed_from(spec: RunSpec, ex: BaseException) -> RunOutput:
    cause = getattr(ex, "cause", None)   # RayTaskError wraps the task's own exception
    inner = cause if isinstance(cause, BaseException) else ex
    first = (str(inner).strip().splitlines() or [""])[0]
    return failed_output(spec, f"{type(inner).__name__}: {first}", type(inner).__name__)


# -- fan-out ---------------------------------------------------------------------------------
class _Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt (a BaseException, so that no run's
    ``except Exception`` turns it into a failed row)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _on_sigterm(signum, _frame):
    raise _Terminated(signum)


def run_serial(specs: Sequence[RunSpec], on_result: Callable[[int, RunOutput], None],
               progress: SweepProgress) -> None:
    for i, spec in enumerate(specs):
        progress.set_running(1)
        try:
            out = simulate_run(spec)
        except Exception as ex:   # a bug in the pipeline around the model: still a row
            out = _failed_from(spec, ex)
        progress.set_running(0)
        on_result(i, out)
        progress.finished(out.status == "ok", spec.config_hash, out.wall_seconds)


def run_ray(specs: Sequence[RunSpec], cfg: RayConfig,
            on_result: Callable[[int, RunOutput], None], progress: SweepProgress,
            started: bool = False) -> None:
    """Run on the initialised Ray session; shut it down at the end if ``started``."""
    import ray

    pending: list = []
    try:
        remote = ray.remote(num_cpus=1, max_retries=cfg.max_retries)(simulate_run)
        index = {}
        for i, spec in enumerate(specs):
            index[remote.remote(spec)] = i
        pending = list(index)
        slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        progress.set_running(min(slots, len(pending)))
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in ready:
                i = index[ref]
                try:
                    out = ray.get(ref)
                except Exception as ex:  # the worker died beyond its retries, or a bug
                    out = _failed_from(specs[i], ex)
                progress.set_running(min(slots, len(pending)))
                on_result(i, out)
                progress.finished(out.status == "ok", specs[i].config_hash, out.wall_seconds)
    finally:
        for ref in pending:   # interrupted: do not leave the cluster busy
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        if started:
            ray.shutdown()


def run_all(specs: Sequence[RunSpec], cfg: RayConfig | None,
            on_result: Callable[[int, RunOutput], None], label: str = "sweep",
            skipped: int | None = None) -> SweepProgress:
    """Execute every spec (Ray if ``cfg.enabled``), calling ``on_result`` as each ends;
    SIGTERM and Ctrl-C become ``Interrupted`` (after the results so far are written)."""
    use_ray = cfg is not None and cfg.enabled and len(specs) > 0
    started = init_ray(cfg) if use_ray else False   # a bad address: an error before any output
    old = None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        try:   # also over ray.init's own handler (sys.exit), restored afterwards
            old = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:   # not the main thread
            old = None
    progress = SweepProgress(len(specs), label, skipped=skipped)
    try:
        with progress:
            if use_ray:
                run_ray(specs, cfg, on_result, progress, started)
            else:
                run_serial(specs, on_result, progress)
    except (KeyboardInterrupt, _Terminated) as ex:
        signum = ex.signum if isinstance(ex, _Terminated) else signal.SIGINT
        raise Interrupted(int(signum), progress.done - progress.failed, progress.failed,
                          len(specs) - progress.done) from None
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
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
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        meta.update(res.resources)
        sink.write_run(s.results.dir, res.experiment, res.config_hash, res.tables, meta)
        results[todo[j]] = res

    run_all([specs[i] for i in todo], ray_cfg, on_result, label, skipped=skipped)

    if specs and specs[0].results.summary:
        from .query import print_table, sweep_summary

        root = specs[0].results.dir
        hashes = sorted({s.config_hash for s in specs})
        scales = ", ".join(f"{x:g}" for x in sorted({s.run.scale for s in specs}))
        print_table(sweep_summary(root, hashes), out=out,
                    title=f"{len(hashes)} run(s) under {root}/ at run.scale {scales}")
    failed = [results[i] for i in todo if i in results and results[i].status != "ok"]
    if failed:
        err = failed[0].tables["summary"].column("error")[0].as_py()
        raise SweepFailed(f"{len(failed)} of {len(first)} run(s) failed (status/error "
                          f"columns); first: {err}")
    return [results.get(first[(str(s.results.dir), s.experiment, s.config_hash)])
            for s in specs]
