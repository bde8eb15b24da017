"""One run, start to finish, wherever it executes (in-process or a Ray worker).

``execute(spec)`` simulates, times the wall clock, and returns the run's tables as
Arrow: ``summary`` (one row) and any detail tables. It never raises for a failed
simulation: the row then has ``status='failed'`` and ``error`` set, and no metrics. The
caller (the driver) writes the tables with ``pipeline.sink``: workers never touch the
result directory, so a cluster needs no shared filesystem.

A failed run's row names the exception (``error_type``, e.g. ``ZeroDivisionError``)
and says what and where (``error``: ``"<type>: <message> at <file>:<line>"``), beside
every parameter of its config.

Resources: ``peak_rss_bytes`` is the worker process's resident-set high-water mark
(``VmHWM``) over the run. The mark is per process and Ray reuses worker processes, so
it is reset at the start of each run where Linux allows it (``/proc/self/clear_refs``,
value 5, since Linux 4.0); elsewhere it is ``getrusage(RUSAGE_SELF).ru_maxrss``, the
process's peak so far. It includes the interpreter and imported libraries (the
baseline, ``rss_start_bytes``). ``cpu_seconds`` is the CPU time the run took (its
``wall_seconds`` also counts waiting for a core on a busy machine). These describe
the machine, not the simulated system, so they travel in the summary file's footer,
not in its row (rows of the same config are bit-identical wherever they ran):
``RunOutput.resources``.
"""
from __future__ import annotations

import os
import re
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field

import pyarrow as pa

from .spec import RunSpec

# Columns every summary row has, in this order, with fixed types.
# ``experiment`` is dictionary-encoded: the type pyarrow infers for the ``experiment=``
# partition of the results tree, so pandas / pyarrow datasets can merge the two
EXPERIMENT_TYPE = pa.dictionary(pa.int32(), pa.string())
RUN_COLUMNS = (
    ("experiment", EXPERIMENT_TYPE),
    ("config_hash", pa.string()),
    ("code_version", pa.string()),
    ("seed", pa.int64()),
    ("status", pa.string()),
    ("error", pa.string()),
    ("error_type", pa.string()),
    ("sim_seconds", pa.float64()),
    ("wall_seconds", pa.float64()),
    ("events_processed", pa.int64()),
)


@dataclass
class RunOutput:
    experiment: str
    config_hash: str
    status: str
    tables: dict  # name -> pyarrow.Table ("summary" first)
    wall_seconds: float
    # where and with what it ran (not part of the row): peak_rss_bytes, host, pid, ...
    resources: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)   # name -> bytes, beside the summary (ok runs)


def _arrow_type(v) -> pa.DataType:
    if isinstance(v, bool):
        return pa.bool_()
    if isinstance(v, int):
        return pa.int64()
    if isinstance(v, float):
        return pa.float64()
    if v is None:
        return pa.null()
    return pa.string()


def _plain(v):
    """numpy scalars -> Python scalars (Arrow and JSON want plain values)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return v.item()
    return v


def summary_table(row: dict) -> pa.Table:
    fixed = dict(RUN_COLUMNS)
    fields, arrays = [], []
    for name, v in row.items():
        v = _plain(v)
        typ = fixed.get(name) or _arrow_type(v)
        if typ in (pa.string(), EXPERIMENT_TYPE) and v is not None and not isinstance(v, str):
            v = str(v)
        fields.append(pa.field(name, typ))
        arrays.append(pa.array([v], type=typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def detail_table(rows: list[dict] | dict, spec: RunSpec) -> pa.Table:
    """A detail table from row dicts or from a dict of columns (numpy arrays)."""
    if isinstance(rows, dict):
        t = pa.table({k: pa.array(v) for k, v in rows.items()})
    else:
        t = pa.Table.from_pylist([{k: _plain(v) for k, v in r.items()} for r in rows])
    t = t.append_column("config_hash", pa.array([spec.config_hash] * len(t), pa.string()))
    return t.append_column("experiment", pa.array([spec.experiment] * len(t), EXPERIMENT_TYPE))


# -- resources ------------------------------------------------------------------------
_KB = re.compile(r"^(VmHWM|VmRSS):\s+(\d+)\s+kB", re.M)


def _proc_status() -> dict:
    try:
        with open("/proc/self/status") as f:
            return {k: int(v) * 1024 for k, v in _KB.findall(f.read())}
    except OSError:
        return {}


def _maxrss_bytes() -> int:
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)   # bytes on macOS, KiB on Linux


def reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark to its current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes() -> int:
    st = _proc_status()
    return st.get("VmHWM") or _maxrss_bytes()


def error_text(ex: BaseException) -> str:
    """``"<type>: <first line of the message> at <file>:<line>"``."""
    tb = traceback.extract_tb(ex.__traceback__)
    where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
    msg = str(ex).strip().splitlines()
    return f"{type(ex).__name__}: {msg[0] if msg else ''}{where}"


def execute(spec: RunSpec) -> RunOutput:
    """Simulate one run; return its tables (never raises for a model failure)."""
    from .build import simulate

    was_reset = reset_peak_rss()
    rss0 = _proc_status().get("VmRSS", 0)
    t0, c0 = time.perf_counter(), time.process_time()
    status, error, error_type, metrics, details, sim_ns, events = "ok", None, None, {}, {}, 0, 0
    files: dict = {}
    try:
        res = simulate(spec)
        metrics, details, sim_ns, events = res.summary, res.details, res.sim_ns, res.events
        files = res.files
    except Exception as ex:  # a failed run is a result row, not a crashed sweep
        status, error, error_type = "failed", error_text(ex), type(ex).__name__
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    resources = {"peak_rss_bytes": peak_rss_bytes(), "rss_start_bytes": rss0,
                 "cpu_seconds": round(cpu, 6),
                 "peak_rss_per_run": was_reset, "host": socket.gethostname(),
                 "pid": os.getpid()}

    row = {
        "experiment": spec.experiment,
        "config_hash": spec.config_hash,
        "code_version": spec.code_version,
        "seed": spec.seed,
        "status": status,
        "error": error,
        "error_type": error_type,
        "sim_seconds": sim_ns / 1e9,
        "wall_seconds": wall,
        "events_processed": events,
    }
    for k, v in spec.params.items():
        row[k] = v
    row.update(spec.labels)   # run.below_valid_scale (not a parameter, not hashed)
    for k, v in metrics.items():
        if k in row:
            raise RuntimeError(f"metric column {k!r} collides with a parameter")
        row[k] = v
    tables = {"summary": summary_table(row)}
    for name, rows in details.items():
        if len(rows):
            tables[name] = detail_table(rows, spec)
    return RunOutput(spec.experiment, spec.config_hash, status, tables, wall, resources, files)
