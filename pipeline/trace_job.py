"""``workload=trace``: replay a request trace file on a block device (fio's
``read_iolog``), and, when the trace holds measured service times (DiskSim validation
traces), compare the simulated distribution with the measured one.

Pipeline keys beside ``models.workload.trace.TraceConfig`` (``mode``, ``iodepth``,
``replay_time_scale``, ``number_ios``):

- ``filename``: the block device (``sda``), as for fio;
- ``iolog``: the trace file; a relative path is relative to the repository root
  (``data/disksim-valid/atlas10k.trace``);
- ``iolog_format``: ``auto`` (a ``fio version 2|3 iolog`` header -> iolog, a
  blkparse event line -> blkparse, else ``.csv`` -> csv, anything else -> DiskSim
  validate), ``validate`` or ``csv`` (``pipeline.disksim.traces``), ``iolog`` (fio's
  ``write_iolog`` v2/v3) or ``blkparse`` (its default text output, Q events;
  ``pipeline.trace_formats``);
- ``iolog_device``: blkparse traces of several devices: the one to replay, as
  blkparse prints it (``8,16``); empty for a single-device trace;
- ``target``: ``queue`` (through the Linux block queue of ``filename``: scheduler,
  merging, iostat) or ``device`` (straight to the device's command queue, as DiskSim
  replays its validation traces - no block layer, so no iostat).

A trace that cannot be read, has no requests, a malformed or out-of-range value on a
line (a negative offset, a time that is not finite) or a request beyond the end of
the device is a config error naming ``workload.iolog``, the file and the line.

``mode=auto`` replays a trace the way it records its times (fio v3 iologs and
blkparse: open, arrival times; fio v2 iologs and DiskSim traces: closed); a fio iolog
or blkparse trace replayed in the other mode is an error naming ``workload.mode``.

Metric columns (``trace.<metric>``): the replay's counters (``requests``, ``reads``,
``flushes``, ``skipped`` - records not replayed, e.g. fio iolog trims -,
``cache_hits``, ``mean_response_ns``, ...) and, for traces with measured times,
``demerit_ms`` (RMS distance between the measured and simulated service-time CDFs,
``pipeline.demerit``), ``mean_measured_ms``, ``mean_sim_ms``, ``mean_error_rel``,
``p50/p90/p99_measured_ms`` / ``_sim_ms``, and ``disksim_demerit_ms`` (DiskSim's own
published demerit for the seven validation drives, by trace file name; null
otherwise). Detail table ``requests``: one row per request with ``measured_ns``.

The trace is read where the run is built (the Ray worker): on a cluster the file
must be present on every node at the same path. With ``number_ios=N`` only the first
N requests of the file are read (``read_trace_head``: the file is streamed and
reading stops there), so memory does not grow with the file; fio's ``number_ios``
also counts in file order. A CSV trace's first N lines are then sorted by time among
themselves. ``number_ios=0`` reads the whole file.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import ConfigError
from .trace_formats import FORMATS

REPO = Path(__file__).resolve().parent.parent
TARGETS = ("queue", "device")
EXTRAS = {"filename": "sda", "iolog": "", "iolog_format": "auto", "iolog_device": "",
          "target": "queue"}


def resolve(iolog: str) -> Path:
    p = Path(str(iolog))
    return p if p.is_absolute() else REPO / p


def check_extras(extras: dict) -> dict:
    """Config errors for the pipeline keys (a missing trace file, an unknown format)."""
    if not extras.get("iolog"):
        raise ConfigError("workload.iolog", "missing: the trace file to replay")
    if not resolve(extras["iolog"]).is_file():
        raise ConfigError("workload.iolog", f"no such file {str(extras['iolog'])!r} "
                                            f"(relative paths start at {REPO})")
    if extras.get("iolog_format") not in FORMATS:
        raise ConfigError("workload.iolog_format",
                          f"must be one of {', '.join(FORMATS)}, got {extras.get('iolog_format')!r}")
    if extras.get("target") not in TARGETS:
        raise ConfigError("workload.target",
                          f"must be one of {', '.join(TARGETS)}, got {extras.get('target')!r}")
    return extras


def _check_bounds(t, n: int, device, path: Path) -> None:
    """Every replayed request lies on ``device`` (else an error naming the line)."""
    end = t.offset_bytes[:n] + t.size_bytes[:n]
    beyond = np.flatnonzero(end > device.capacity_bytes)
    if beyond.size:
        i = int(beyond[0])
        line = f" line {int(t.lines[i])}" if t.lines.size else f" request {i + 1}"
        raise ValueError(f"iolog: {path}{line}: offset {int(t.offset_bytes[i])} + size "
                         f"{int(t.size_bytes[i])} is beyond the end of device "
                         f"{device.name!r} ({device.capacity_bytes} bytes)")


def read_trace_head(path: Path, fmt: str, limit: int, device: str = ""):
    """The first ``limit`` requests of a trace file (all of it for 0), reading the file
    only as far as they go. Lines are taken as they are (blank lines, comments and a
    CSV header included), so errors name the same line numbers as a whole read."""
    from .disksim.traces import parse_csv_trace, parse_validate_trace, read_trace
    from .trace_formats import detect_format, read_streamed

    if not limit:
        return read_trace(path, fmt, device)
    fmt = detect_format(path, fmt)
    if fmt in ("iolog", "blkparse"):
        return read_streamed(path, fmt, limit, device)
    lines, found = [], 0
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                lines.append(line)
                text = line.strip()
                if not text or (fmt == "csv" and text.startswith("#")):
                    continue
                if fmt == "csv" and len(lines) == 1 and not _is_number(text.split(",")[0]):
                    continue        # a header (parse_csv_trace's rule: first line only)
                found += 1
                if found == limit:
                    break
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a trace text file (not UTF-8)") from None
    parse = parse_csv_trace if fmt == "csv" else parse_validate_trace
    return parse("".join(lines), str(path)).head(limit)


def _is_number(text: str) -> bool:
    return text.strip().replace(".", "", 1).isdigit()


class TraceJob:
    """A ``TraceReplay`` of the trace file on ``queue`` (or its device)."""

    def __init__(self, sim, cfg, queue, extras: dict) -> None:
        from models.workload.trace import TraceReplay

        from .trace_formats import detect_format

        from .disksim.validate import DISKSIM_DEMERIT_MS

        path = resolve(extras["iolog"])
        try:
            self.trace = read_trace_head(path, extras.get("iolog_format", "auto"),
                                         cfg.number_ios, str(extras.get("iolog_device") or ""))
        except OSError as ex:
            raise ValueError(f"iolog: cannot read {path}: {ex.strerror or ex}") from None
        except ValueError as ex:
            raise ValueError(f"iolog: {ex}") from None
        self.disksim_demerit_ms = DISKSIM_DEMERIT_MS.get(path.stem)
        target = queue if extras.get("target", "queue") == "queue" else queue.device
        t = self.trace
        _check_bounds(t, cfg.number_ios or len(t), queue.device, path)
        mode = t.mode if cfg.mode == "auto" else cfg.mode
        if mode != t.mode and detect_format(path, extras.get("iolog_format", "auto")) in (
                "iolog", "blkparse"):
            what = "arrival times" if t.mode == "open" else "waits between requests"
            raise ValueError(f"mode: {path} records {what}: replay it with mode={t.mode} "
                             f"(or mode=auto), not {cfg.mode}")
        self.replay = TraceReplay(sim, target, cfg, t.ops, t.offset_bytes, t.size_bytes,
                                  t.time_ns, mode)

    def start(self) -> None:
        self.replay.start()

    def _measured_ms(self) -> np.ndarray:
        return self.trace.measured_ns[: self.replay.n] / 1e6

    def results(self) -> dict:
        from .demerit import error_columns

        rp = self.replay
        out = rp.summary()
        out["skipped"] = int(self.trace.skipped)
        measured = self._measured_ms()
        ok = rp.done_ns >= 0
        if measured.size and ok.any():
            out.update(error_columns(measured[ok], rp.response_ns[ok] / 1e6, sim="sim"))
            out["disksim_demerit_ms"] = self.disksim_demerit_ms
        return out

    def detail(self) -> dict:
        cols = self.replay.detail()
        n = self.replay.n
        m = self.trace.measured_ns
        cols["measured_ns"] = m[:n].copy() if m.size else np.full(n, -1, dtype=np.int64)
        return cols
