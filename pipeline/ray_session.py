"""The Ray session of a sweep: ``init_ray`` starts the embedded local Ray or joins a
cluster by address (probed first, so a wrong address or a missing auth token is a
one-line ``ConfigError``), ``check_ray_config`` range-checks the launcher's Ray
settings. ``pipeline.fanout`` runs the sweep on it.
"""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from typing import Any

from .errors import ConfigError
from .schema import RayConfig

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
        from .job import error_text

        msg = error_text(ex).split(" at ")[0]
        if type(ex).__name__ == "AuthenticationError":
            msg = ("the cluster uses token authentication: set RAY_AUTH_MODE=token and "
                   "RAY_AUTH_TOKEN (or ~/.ray/auth_token) to the cluster's token")
        raise ConfigError(key, f"cannot join the Ray cluster at {address}: {msg}") from None
    return True
