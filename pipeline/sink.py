"""Write a run's tables as Parquet, atomically, in a hive-partitioned tree.

Layout (``results.dir`` defaults to ``outputs``)::

    outputs/experiment=<name>/run=<config_hash>/summary.parquet   one row per run
    outputs/experiment=<name>/run=<config_hash>/<table>.parquet   detail tables

Each file is written under a temporary name (``.tmp-<table>-<pid>.parquet.partial``,
which no ``*.parquet`` glob matches) and renamed into place, so a reader sees either
the old file or the whole new one. The same config (same hash) run again replaces its
files. Query all summaries with::

    read_parquet('outputs/**/summary.parquet', hive_partitioning=true, union_by_name=true)
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SUMMARY = "summary"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def partition_value(v: str) -> str:
    """A string usable as a hive partition value (no '/', '=' or spaces)."""
    return _SAFE.sub("_", str(v)) or "_"


def run_dir(root: str | os.PathLike, experiment: str, config_hash: str) -> Path:
    return Path(root) / f"experiment={partition_value(experiment)}" / f"run={partition_value(config_hash)}"


def write_table(path: Path, table: pa.Table) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{path.stem}-{os.getpid()}.parquet.partial"
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_run(root: str | os.PathLike, experiment: str, config_hash: str,
              tables: dict[str, pa.Table]) -> list[Path]:
    """Write every table of one run; details first, the summary last (so a summary's
    presence means the run's files are complete)."""
    d = run_dir(root, experiment, config_hash)
    written = []
    for name, table in tables.items():
        if name != SUMMARY:
            written.append(write_table(d / f"{partition_value(name)}.parquet", table))
    if SUMMARY in tables:
        written.append(write_table(d / f"{SUMMARY}.parquet", tables[SUMMARY]))
    return written
