"""Request traces as arrays: DiskSim validation traces (``NAME.trace``: one request a
line, ``R|W FLAG start_sector sector_count measured_service_us gap_us``, closed loop
with one request outstanding - see data/disksim-valid/README.md) and CSV exports of
``blkparse`` (open loop). fio iologs and blkparse's own text are read by
``pipeline.trace_formats``; ``read_trace`` reads any of them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

@dataclass(frozen=True)
class Trace:
    """A request trace as arrays (what models.workload.trace replays).

    ``ops``: 0 read / 1 write (models.device.request READ/WRITE); ``offset_bytes``,
    ``size_bytes``; ``time_ns``: arrival time (open loop) or the idle gap after the
    request completes (closed loop, DiskSim validation traces); ``measured_ns``: the
    measured service time where the trace has one, else empty; ``lines``: the line of
    the file each request came from (for errors), else empty.
    """

    ops: np.ndarray
    offset_bytes: np.ndarray
    size_bytes: np.ndarray
    time_ns: np.ndarray
    measured_ns: np.ndarray
    mode: str  # "closed" (time_ns = gap after completion) | "open" (arrival times)
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    skipped: int = 0   # records of the file that are not replayed (fio iolog trims, ...)

    def __len__(self) -> int:
        return int(self.ops.size)

    def head(self, n: int) -> "Trace":
        return Trace(self.ops[:n], self.offset_bytes[:n], self.size_bytes[:n],
                     self.time_ns[:n], self.measured_ns[:n], self.mode, self.lines[:n],
                     self.skipped)


def _number(cast, text: str, what: str, minimum: float, where: str):
    """``cast(text)``, finite and >= ``minimum`` (> 0 for ``minimum=1``), or a
    ``ValueError`` naming the line and the field."""
    try:
        v = cast(text)
    except ValueError:
        kind = "an integer" if cast is int else "a number"
        raise ValueError(f"{where}: {what} must be {kind}, got {text!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be finite, got {text!r}")
    if v < minimum:
        raise ValueError(f"{where}: {what} must be {'> 0' if minimum == 1 else '>= 0'}, got {text}")
    return v


def parse_validate_trace(text: str, name: str = "validate trace") -> Trace:
    """DiskSim "validate" format -> closed-loop Trace (512-byte sectors, us -> ns).
    Errors name ``name`` (the file) and the line."""
    ops, lbn, cnt, svc, gap, lines = [], [], [], [], [], []
    for ln, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        where = f"{name} line {ln}"
        if len(f) != 6 or f[0] not in ("R", "W"):
            raise ValueError(f"{where}: expected 'R|W FLAG lbn n us us'")
        ops.append(0 if f[0] == "R" else 1)
        lbn.append(_number(int, f[2], "lbn", 0, where))
        cnt.append(_number(int, f[3], "sector count", 1, where))
        svc.append(_number(float, f[4], "service time", 0, where))
        gap.append(_number(float, f[5], "gap", 0, where))
        lines.append(ln)
    if not ops:
        raise ValueError(f"{name}: no requests")
    return Trace(
        ops=np.asarray(ops, dtype=np.int8),
        offset_bytes=np.asarray(lbn, dtype=np.int64) * 512,
        size_bytes=np.asarray(cnt, dtype=np.int64) * 512,
        time_ns=np.rint(np.asarray(gap) * 1e3).astype(np.int64),
        measured_ns=np.rint(np.asarray(svc) * 1e3).astype(np.int64),
        mode="closed",
        lines=np.asarray(lines, dtype=np.int64),
    )


def _read_text(path: str | Path) -> str:
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as ex:
        raise ValueError(f"{path}: not a trace text file (byte {ex.start} is not UTF-8)") from None


def read_validate_trace(path: str | Path) -> Trace:
    return parse_validate_trace(_read_text(path), str(path))


def parse_csv_trace(text: str, name: str = "csv trace") -> Trace:
    """CSV ``time_us,op,offset_bytes,size_bytes`` (header optional) -> open-loop Trace.

    ``op`` is R/W (or read/write, 0/1); rows are sorted by time. This is what one
    exports from ``blkparse`` of a real system (the Q or D events: time, RWBS, sector
    * 512, bytes). Errors name ``name`` (the file) and the line.
    """
    t, ops, off, size, lines = [], [], [], [], []
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(",")]
        if ln == 1 and not f[0].replace(".", "", 1).isdigit():
            continue  # header
        where = f"{name} line {ln}"
        if len(f) != 4:
            raise ValueError(f"{where}: expected time_us,op,offset_bytes,size_bytes")
        op = f[1].upper()
        if op in ("R", "READ", "0") or op.startswith("R"):
            ops.append(0)
        elif op in ("W", "WRITE", "1") or op.startswith("W"):
            ops.append(1)
        else:
            raise ValueError(f"{where}: op must be R or W, got {f[1]!r}")
        t.append(_number(float, f[0], "time_us", 0, where))
        off.append(_number(int, f[2], "offset_bytes", 0, where))
        size.append(_number(int, f[3], "size_bytes", 1, where))
        lines.append(ln)
    if not ops:
        raise ValueError(f"{name}: no requests")
    order = np.argsort(np.asarray(t), kind="stable")
    return Trace(
        ops=np.asarray(ops, dtype=np.int8)[order],
        offset_bytes=np.asarray(off, dtype=np.int64)[order],
        size_bytes=np.asarray(size, dtype=np.int64)[order],
        time_ns=np.rint(np.asarray(t) * 1e3).astype(np.int64)[order],
        measured_ns=np.zeros(0, dtype=np.int64),
        mode="open",
        lines=np.asarray(lines, dtype=np.int64)[order],
    )


def read_csv_trace(path: str | Path) -> Trace:
    return parse_csv_trace(_read_text(path), str(path))


def read_trace(path: str | Path, fmt: str = "auto", device: str = "") -> Trace:
    """Read a trace file: ``validate`` (DiskSim), ``csv`` (time_us,op,offset,size),
    ``iolog`` (fio v2/v3), ``blkparse`` (its default text; ``device`` picks one of
    several) or ``auto`` (``pipeline.trace_formats.detect_format``)."""
    from ..trace_formats import detect_format, read_streamed

    path = Path(path)
    fmt = detect_format(path, fmt)
    if fmt == "csv":
        return read_csv_trace(path)
    if fmt == "validate":
        return read_validate_trace(path)
    return read_streamed(path, fmt, 0, device)
