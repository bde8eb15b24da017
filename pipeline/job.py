"""One run, start to finish, wherever it executes (in-process or a Ray worker).

``execute(spec)`` simulates, times the wall clock, and returns the run's tables as
Arrow: ``summary`` (one row) and any detail tables. It never raises for a failed
simulation: the row then has ``status='failed'`` and ``error`` set, and no metrics. The
caller (the driver) writes the tables with ``pipeline.sink``: workers never touch the
result directory, so a cluster needs no shared filesystem.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

import pyarrow as pa

from .spec import RunSpec

# Columns every summary row has, in this order, with fixed types.
RUN_COLUMNS = (
    ("experiment", pa.string()),
    ("config_hash", pa.string()),
    ("code_version", pa.string()),
    ("seed", pa.int64()),
    ("status", pa.string()),
    ("error", pa.string()),
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
        if typ == pa.string() and v is not None and not isinstance(v, str):
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
    return t.append_column("experiment", pa.array([spec.experiment] * len(t), pa.string()))


def execute(spec: RunSpec) -> RunOutput:
    """Simulate one run; return its tables (never raises for a model failure)."""
    from .build import simulate

    t0 = time.perf_counter()
    status, error, metrics, details, sim_ns, events = "ok", None, {}, {}, 0, 0
    try:
        res = simulate(spec)
        metrics, details, sim_ns, events = res.summary, res.details, res.sim_ns, res.events
    except Exception as ex:  # a failed run is a result row, not a crashed sweep
        status = "failed"
        tb = traceback.extract_tb(ex.__traceback__)
        where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
        error = f"{type(ex).__name__}: {ex}{where}"
    wall = time.perf_counter() - t0

    row = {
        "experiment": spec.experiment,
        "config_hash": spec.config_hash,
        "code_version": spec.code_version,
        "seed": spec.seed,
        "status": status,
        "error": error,
        "sim_seconds": sim_ns / 1e9,
        "wall_seconds": wall,
        "events_processed": events,
    }
    for k, v in spec.params.items():
        row[k] = v
    for k, v in metrics.items():
        if k in row:
            raise RuntimeError(f"metric column {k!r} collides with a parameter")
        row[k] = v
    tables = {"summary": summary_table(row)}
    for name, rows in details.items():
        if len(rows):
            tables[name] = detail_table(rows, spec)
    return RunOutput(spec.experiment, spec.config_hash, status, tables, wall)
