"""Write a run's tables as Parquet, atomically, in a hive-partitioned tree; tell a
finished run from a missing, failed, stale or broken one (resume).

Layout (``results.dir`` defaults to ``outputs``)::

    outputs/experiment=<name>/run=<config_hash>/summary.parquet            one row per run
    outputs/experiment=<name>/run=<config_hash>/_details/<table>.parquet   detail tables
    outputs/experiment=<name>/run=<config_hash>/_details/fio.json          fio's JSON (fio runs)

Readers other than DuckDB see the summaries as one dataset: ``pandas.read_parquet(
"outputs")`` and pyarrow's datasets skip ``_``-prefixed directories, so detail tables
never mix into the runs table, and the summary's ``experiment`` column is
dictionary-encoded, the type pyarrow infers for the ``experiment=`` partition (a plain
string column beside it is a type conflict). Polars reads the summaries by their
glob: ``pl.scan_parquet("outputs/**/summary.parquet", hive_partitioning=True,
missing_columns="insert", extra_columns="ignore")``. Both take the columns of the first
file they read; DuckDB's ``union_by_name`` takes every file's.

**A run appears whole or not at all.** Its files are written into a staging directory
beside the result tree (``.<dir>.staging/`` next to ``outputs/``, so no
``outputs/**/*.parquet`` glob can reach a half-written file), flushed to disk, and
the directory is renamed into place as ``run=<config_hash>`` - one ``rename(2)``.
DuckDB reads hidden directories too, which is why staging is outside the tree, not a
dot-directory in it. A driver killed at any point leaves, at worst, a staging
directory that no query reads and that the next sweep removes (``clean_staging``).
Replacing a run (a retry, ``--rerun``) moves the old directory into staging, renames
the new one in and deletes the old: a crash between the two renames loses only the
run being replaced, which the next resume runs again. If staging cannot be on the
same filesystem as the tree (the tree is a mount point), each file is renamed into
place on its own, details first and the summary last.

**The summary is the run's receipt.** Its Parquet footer (key-value metadata) holds
``dbio.run_key`` (hash of the config hash and the code version), ``dbio.status``,
``dbio.tables`` (the detail tables written with it) and the run's resource use
(``dbio.peak_rss_bytes``, ``dbio.host``, ...). ``completed`` reads only that footer:
a run is done when the file parses, its key matches, its status is ``ok`` and every
detail table it lists (and any the new run asks for) is there.

Query all summaries with::

    read_parquet('outputs/**/summary.parquet', hive_partitioning=true, union_by_name=true)
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import socket
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SUMMARY = "summary"
DETAILS = "_details"        # a run's detail tables, out of reach of the summary datasets
META_PREFIX = "dbio."
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


# Staging cannot be made beside the tree (its parent is not ours to write in): write
# each file in place instead. Any other error (ENOSPC, EDQUOT, EIO) is the caller's.
_NO_STAGING = (errno.EACCES, errno.EPERM, errno.EROFS)


def partition_value(v: str) -> str:
    """A string usable as a hive partition value (no '/', '=' or spaces)."""
    return _SAFE.sub("_", str(v)) or "_"


def run_dir(root: str | os.PathLike, experiment: str, config_hash: str) -> Path:
    return Path(root) / f"experiment={partition_value(experiment)}" / f"run={partition_value(config_hash)}"


def run_key(config_hash: str, code_version: str) -> str:
    """A run's identity: its resolved config (the config hash) and the code version."""
    return hashlib.sha256(f"{config_hash}\0{code_version}".encode()).hexdigest()[:16]


def staging_dir(root: str | os.PathLike) -> Path:
    """Where runs are assembled: a sibling of the result tree, outside its globs."""
    r = Path(root).resolve()
    return r.parent / f".{r.name}.staging"


def _tag() -> str:
    """Unique name part that says which process (host, pid) made a staging entry."""
    return f"{partition_value(socket.gethostname())}~{os.getpid()}~{uuid.uuid4().hex[:8]}"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_parquet(path: Path, table: pa.Table) -> None:
    with open(path, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())


def _with_meta(table: pa.Table, meta: dict | None) -> pa.Table:
    if not meta:
        return table
    kv = dict(table.schema.metadata or {})
    kv.update({f"{META_PREFIX}{k}".encode(): str(v).encode() for k, v in meta.items()})
    return table.replace_schema_metadata(kv)


def write_table(path: Path, table: pa.Table) -> Path:
    """One file, atomically: a temporary name no ``*.parquet`` glob matches, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{path.stem}-{os.getpid()}.parquet.partial"
    try:
        _write_parquet(tmp, table)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def detail_file(name: str) -> str:
    """A detail table's path inside its run directory."""
    return f"{DETAILS}/{partition_value(name)}.parquet"


def _file_names(tables: dict[str, pa.Table]) -> list[tuple[str, str]]:
    """(table, file path in the run directory) in write order: details first, the
    summary last."""
    names = [(n, detail_file(n)) for n in tables if n != SUMMARY]
    if SUMMARY in tables:
        names.append((SUMMARY, f"{SUMMARY}.parquet"))
    return names


def write_run(root: str | os.PathLike, experiment: str, config_hash: str,
              tables: dict[str, pa.Table], meta: dict | None = None,
              files: dict[str, bytes] | None = None) -> list[Path]:
    """Write every table of one run; returns the final paths (details first, summary
    last). With a summary, the run directory is replaced as a whole (atomically);
    ``meta`` goes into the summary's footer (``dbio.<key>``). Without a summary the
    tables are added to the existing run, each file atomically. ``files`` (name ->
    bytes, e.g. ``fio.json``) go to the run's ``_details/`` beside the detail tables
    (out of reach of the summary datasets: pandas / pyarrow would read any file under
    ``run=``), in the same staging directory (they appear with the summary)."""
    final = run_dir(root, experiment, config_hash)
    names = _file_names(tables)
    if SUMMARY not in tables:
        return [write_table(final / fname, tables[n]) for n, fname in names]
    files = {partition_value(k): v for k, v in (files or {}).items()}

    meta = dict(meta or {})
    meta.setdefault("tables", ",".join(n for n, _ in names if n != SUMMARY))
    stage_root = staging_dir(root)
    try:
        stage_root.mkdir(parents=True, exist_ok=True)
        stage = stage_root / f"new~{_tag()}"
        stage.mkdir()
    except OSError as ex:
        if ex.errno not in _NO_STAGING:   # a full disk: no fallback writes half a run
            raise
        return _write_run_per_file(final, tables, names, meta, files)
    try:
        if len(names) > 1 or files:
            (stage / DETAILS).mkdir()
        for fname, data in files.items():
            _write_bytes(stage / DETAILS / fname, data)
        for n, fname in names:
            _write_parquet(stage / fname, _with_meta(tables[n], meta) if n == SUMMARY else tables[n])
        if len(names) > 1 or files:
            _fsync_dir(stage / DETAILS)
        _fsync_dir(stage)
        final.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(stage, final)
        except OSError as ex:
            if ex.errno == errno.EXDEV:
                raise
            if ex.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            old = stage_root / f"old~{_tag()}"
            os.rename(final, old)
            os.rename(stage, final)
            shutil.rmtree(old, ignore_errors=True)
        _fsync_dir(final.parent)
    except OSError as ex:
        shutil.rmtree(stage, ignore_errors=True)
        if ex.errno != errno.EXDEV:
            raise
        return _write_run_per_file(final, tables, names, meta, files)
    finally:
        _remove_if_empty(stage_root)
    return [final / fname for _, fname in names]


def _write_bytes(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_run_per_file(final: Path, tables: dict, names: list, meta: dict,
                        files: dict | None = None) -> list[Path]:
    """Fallback when staging is on another filesystem: each file renamed into place,
    details first, the summary (the receipt) last; stale detail files removed first."""
    keep = {fname for _, fname in names}
    if final.exists():
        (final / f"{SUMMARY}.parquet").unlink(missing_ok=True)
        for p in final.glob(f"{DETAILS}/*.parquet"):
            if f"{DETAILS}/{p.name}" not in keep:
                p.unlink(missing_ok=True)
    if files:
        (final / DETAILS).mkdir(parents=True, exist_ok=True)
    for fname, data in (files or {}).items():
        tmp = final / DETAILS / f".tmp-{fname}-{os.getpid()}.partial"
        _write_bytes(tmp, data)
        os.replace(tmp, final / DETAILS / fname)
    return [write_table(final / fname, _with_meta(tables[n], meta) if n == SUMMARY else tables[n])
            for n, fname in names]


def _remove_if_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass


# -- reading receipts ---------------------------------------------------------------------
def experiments(root: str | os.PathLike) -> list[str]:
    """The experiments (partition values) with at least one run summary under ``root``."""
    return sorted({p.parent.parent.name.partition("=")[2]
                   for p in Path(root).glob(f"experiment=*/run=*/{SUMMARY}.parquet")})


def read_meta(root: str | os.PathLike, experiment: str, config_hash: str) -> dict | None:
    """The ``dbio.*`` footer of a run's summary (plus ``num_rows``), or None if there is
    no summary or it is not a readable Parquet file."""
    path = run_dir(root, experiment, config_hash) / f"{SUMMARY}.parquet"
    try:
        md = pq.read_metadata(path)
    except (OSError, pa.ArrowException, ValueError):
        return None
    kv = md.metadata or {}
    out = {k.decode()[len(META_PREFIX):]: v.decode() for k, v in kv.items()
           if k.startswith(META_PREFIX.encode())}
    out["num_rows"] = md.num_rows
    return out


def completed(root: str | os.PathLike, experiment: str, config_hash: str, code_version: str,
              want_details: bool = False) -> bool:
    """True if the run's results exist and are valid: a readable one-row summary for
    this config and code version with status ok, and every detail table present."""
    meta = read_meta(root, experiment, config_hash)
    if meta is None or meta.get("num_rows") != 1:
        return False
    if meta.get("run_key") != run_key(config_hash, code_version) or meta.get("status") != "ok":
        return False
    if want_details and meta.get("details") != "True":
        return False
    d = run_dir(root, experiment, config_hash)
    for name in filter(None, meta.get("tables", "").split(",")):
        try:
            pq.read_metadata(d / detail_file(name))
        except (OSError, pa.ArrowException, ValueError):
            return False
    return True


# -- clean-up -----------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_staging(root: str | os.PathLike) -> list[Path]:
    """Remove what killed writers left: staging entries of dead processes on this host,
    and ``.tmp-*.partial`` files in the tree (a live writer's are kept). Returns what
    was removed. Entries of other hosts (a shared filesystem) are left alone."""
    removed: list[Path] = []
    host = partition_value(socket.gethostname())
    stage_root = staging_dir(root)
    if stage_root.is_dir():
        for entry in stage_root.iterdir():
            parts = entry.name.split("~")
            if len(parts) < 4 or parts[1] != host or not parts[2].isdigit():
                continue
            if _pid_alive(int(parts[2])):
                continue
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
            removed.append(entry)
        _remove_if_empty(stage_root)
    tree = Path(root)
    if tree.is_dir():
        for p in tree.glob("**/.tmp-*.parquet.partial"):
            m = re.match(r"\.tmp-.*-(\d+)\.parquet\.partial$", p.name)
            if m and _pid_alive(int(m.group(1))):
                continue
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed
