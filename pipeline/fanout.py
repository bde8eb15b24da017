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

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

from .errors import (ConfigError, Interrupted, OutputError, SweepFailed, check_output_dir,
                     describe)
from .job import RunOutput, error_text
from .progress import SweepProgress
from .schema import RayConfig
from .signals import Stopped, StopSignals
# failed_output: re-exported (it lived here before pipeline.worker)
from .worker import _failed_from, failed_output, loaded_code_hash, simulate_run  # noqa: F401
from .spec import RunSpec

# Keep shipped code small: byte code and numba's caches are rebuilt on the workers.
SHIP_EXCLUDES = ["__pycache__", "*.pyc", "*.nbi", "*.nbc"]


# -- Ray session ------------------------------------------------------------------------
def _address(cfg: RayConfig) -> str | None:
    return cfg.address or os.environ.get("RAY_ADDRESS") or None


def check_ray_config(cfg: RayConfig, prefix: str = "hydra.launcher.ray") -> None:
    """Range checks of the launcher's Ray settings (``ConfigError`` naming the key),
    before ``ray.init``: integers fit in 64 bits, and the object store fits in this
    machine's memory (Ray would otherwise fail deep in its start-up)."""
    from .coerce import check_int

    for name in ("num_cpus", "max_retries", "object_store_memory_mb"):
        if getattr(cfg, name) is not None:
            check_int(getattr(cfg, name), f"{prefix}.{name}")
    if cfg.num_cpus is not None and cfg.num_cpus < 1:
        raise ConfigError(f"{prefix}.num_cpus", f"must be >= 1 or null (all cores), got {cfg.num_cpus}")
    if cfg.max_retries < -1:
        raise ConfigError(f"{prefix}.max_retries",
                          f"must be >= 0, or -1 (retry forever), got {cfg.max_retries}")
    if cfg.object_store_memory_mb < 75:
        raise ConfigError(f"{prefix}.object_store_memory_mb",
                          f"must be >= 75 (Ray's minimum), got {cfg.object_store_memory_mb}")
    total_mb = _memory_mb()
    if total_mb and cfg.object_store_memory_mb > total_mb:
        raise ConfigError(f"{prefix}.object_store_memory_mb",
                          f"must be at most this machine's memory ({total_mb} MB), "
                          f"got {cfg.object_store_memory_mb}")
    if cfg.address is not None and not str(cfg.address).strip():
        raise ConfigError(f"{prefix}.address", "must be null, 'auto', 'local', "
                          "'host:port' or 'ray://host:port', got an empty string")


def _memory_mb() -> int | None:
    """This machine's physical memory in MiB (None where sysconf cannot tell)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return None


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


# Run in a child process: Ray's GCS client, once created in a process, keeps its
# connection settings for the later ray.init, and logs from C++ straight to stderr.
_AUTH_PROBE = """
import sys
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1], cluster_id=None).cluster_id
except Exception as ex:
    print(type(ex).__name__)
"""


def _probe_auth(address: str, key: str, timeout_s: float = 30.0) -> None:
    """Ask the GCS for its cluster id (with this process's token, if any) in a child
    process with a 5 s connect timeout: a cluster with token authentication refuses
    at once (``AuthenticationError``), where ``ray.init`` retries for about 20 s,
    printing a warning a second. Anything else is left to ``ray.init``."""
    if address in ("auto", "local") or "://" in address:
        return
    env = dict(os.environ, RAY_gcs_rpc_server_connect_timeout_s="5")
    try:
        out = subprocess.run([sys.executable, "-c", _AUTH_PROBE, address], env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=timeout_s).stdout
    except (OSError, subprocess.SubprocessError):
        return
    if "AuthenticationError" not in out:
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        msg = ("the cluster rejected this token (RAY_AUTH_TOKEN / RAY_AUTH_TOKEN_PATH; "
               "RAY_AUTH_MODE must be 'token'); give it the cluster's token")
    else:
        msg = ("the cluster needs its token: export RAY_AUTH_MODE=token and "
               "RAY_AUTH_TOKEN=<the cluster's token> (or put it in ~/.ray/auth_token)")
    raise ConfigError(key, f"cannot join the Ray cluster at {address}: {msg}")


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
        _probe_auth(address, key)
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
    else the workload's ``runtime_s``; None when neither bounds it (a workload that
    ends when its work is done)."""
    if not spec.results.details:
        return 0
    duration_s = spec.run.duration_s or getattr(spec.workload.config, "runtime_s", 0) or 0
    if not duration_s:
        return None
    per_queue = duration_s * 1e3 / spec.results.sample_ms
    return int(min(per_queue * max(1, len(spec.top_level)), 2**62))


def check_detail_rows(spec: RunSpec) -> None:
    """``ConfigError`` on ``results.sample_ms`` when the estimate exceeds ``MAX_DETAIL_ROWS``."""
    rows = detail_rows_estimate(spec)
    if rows is not None and rows > MAX_DETAIL_ROWS:
        raise ConfigError("results.sample_ms",
                          f"{spec.results.sample_ms:g} ms over {spec.run.duration_s or spec.workload.config.runtime_s:g} "
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
        try:
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
    with stop.polled():
        try:
            remote = ray.remote(num_cpus=1, max_retries=cfg.max_retries)(simulate_run)
            expected = loaded_code_hash()   # what every worker must run (pipeline.worker)
            index = {}
            for i, spec in enumerate(specs):
                stop.check()
                ref = remote.remote(spec, expected)
                index[ref] = i
                pending.append(ref)
            slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
            progress.set_running(min(slots, len(pending)))
            while pending:
                stop.check()
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
                for ref in ready:
                    stop.check()   # a worker killed by the same signal is no failed run
                    i = index[ref]
                    try:
                        out = ray.get(ref)
                    except Exception as ex:  # the worker died beyond its retries, or a bug
                        out = _failed_from(specs[i], ex)
                    stop.check()
                    progress.set_running(min(slots, len(pending)))
                    _deliver(i, specs[i], out, on_result, progress, stop)
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
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
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
