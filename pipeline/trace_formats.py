"""Request traces users already have: fio iologs (v2 and v3) and ``blkparse`` text.

Both are read into the same ``pipeline.disksim.traces.Trace`` arrays as the DiskSim
validation traces and the CSV exports (``models.workload.trace`` replays them):

- **fio iolog** (``write_iolog`` / ``read_iolog``, fio's HOWTO "Trace file format"):
  a first line ``fio version 2 iolog`` or ``fio version 3 iolog``, then file lines
  ``<file> add|open|close`` and I/O lines ``<file> read|write|sync|datasync|trim
  <offset> <length>`` (bytes). Version 3 puts a timestamp first, microseconds since
  the start of the run (fio writes ``utime_since_now``): the trace is open loop, each
  request arrives at its timestamp. Version 2 has no timestamps; ``<file> wait <usec>
  0`` waits that many microseconds (below 100 discarded, as fio does; v2 only), so
  the trace is closed loop: fio issues the next I/O as soon as it may, after any
  wait. ``sync`` and ``datasync`` become a FLUSH of the device (``fsync(2)`` of a
  block device is a cache flush); ``trim`` lines are not replayed (the device
  models have no discard) and counted in ``Trace.skipped``. I/O on a file that was
  not added and opened is an error, as it is for fio. All files of a trace are
  replayed on the one device of the run (fio's ``replay_redirect``).
- **blkparse** default output (``blkparse -i sda``): ``maj,min cpu seq seconds pid
  action RWBS sector + sectors [process]``. The ``Q`` events (a bio queued) are the
  requests, at their recorded times (open loop). Where every Q of the device has a
  matching ``C`` event (its completion; a merged request's C covers the bios merged
  into it), ``Q`` to ``C`` is the measured time (``measured_ns``) the replay is
  compared with. RWBS ``R``/``W`` give the direction, a ``F`` flush with no sectors
  is a FLUSH, ``D`` (discard) and ``N`` (no data) are skipped. Events of several
  devices: ``device`` (``8,16``) chooses one; without it a trace must hold one.
  blkparse's per-CPU and total summary at the end is not part of the trace, nor are
  its message lines (action ``m``).

Errors name the file, the line and the format expected.
"""
from __future__ import annotations

import math
import re
from collections import deque
from typing import Iterable

import numpy as np

from .disksim.traces import Trace

FIO_V2 = "fio version 2 iolog"
FIO_V3 = "fio version 3 iolog"
IOLOG_LINE_V2 = "'<file> add|open|close' or '<file> read|write|sync|datasync|trim|wait <offset> <length>'"
IOLOG_LINE_V3 = "'<usec> <file> add|open|close' or '<usec> <file> read|write|sync|datasync|trim <offset> <length>'"
BLKPARSE_LINE = "'maj,min cpu seq seconds pid action RWBS sector + sectors [process]'"

# blkparse's default event line (its -f default "%D %2c %8s %5T.%9t %5p %2a %3d ")
_BLK = re.compile(r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+)\s+([A-Za-z])\s+([A-Z]+)\s*(.*)$")
_SECTORS = re.compile(r"^(\d+)\s*\+\s*(\d+)")
_BLK_SUMMARY = re.compile(r"^(CPU\d+|Total) \(")
_WAIT_MIN_US = 100          # fio: "Everything below 100 is discarded"

FLUSH_OP = 2                # models.device.request.FLUSH


def sniff(first_line: str) -> str | None:
    """The format a trace's first non-blank line announces: ``iolog`` or ``blkparse``
    (None: neither)."""
    text = first_line.strip()
    if text in (FIO_V2, FIO_V3):
        return "iolog"
    if _BLK.match(first_line):
        return "blkparse"
    return None


def _int(text: str, what: str, where: str, minimum: int = 0) -> int:
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{where}: {what} must be an integer, got {text!r}") from None
    if v < minimum:
        raise ValueError(f"{where}: {what} must be >= {minimum}, got {v}")
    return v


def _trace(ops, off, size, t_ns, lines, mode, measured=(), skipped=0) -> Trace:
    return Trace(ops=np.asarray(ops, dtype=np.int8),
                 offset_bytes=np.asarray(off, dtype=np.int64),
                 size_bytes=np.asarray(size, dtype=np.int64),
                 time_ns=np.asarray(t_ns, dtype=np.int64),
                 measured_ns=np.asarray(measured, dtype=np.int64),
                 mode=mode, lines=np.asarray(lines, dtype=np.int64), skipped=skipped)


# -- fio iolog ---------------------------------------------------------------------------
def parse_fio_iolog(lines: Iterable[str], name: str = "iolog", limit: int = 0) -> Trace:
    """A fio iolog (v2 or v3) -> Trace: v3 open loop (arrival times), v2 closed loop
    (``time_ns[i]``: the waits between request i and the next). ``limit`` > 0 stops
    reading after that many requests."""
    it = iter(enumerate(lines, 1))
    version = None
    for ln, line in it:
        text = line.strip()
        if not text:
            continue
        if text == FIO_V2:
            version = 2
        elif text == FIO_V3:
            version = 3
        else:
            raise ValueError(f"{name} line {ln}: expected the header {FIO_V2!r} or {FIO_V3!r} "
                             f"(fio iolog), got {text[:60]!r}")
        break
    if version is None:
        raise ValueError(f"{name}: empty (expected a fio iolog header {FIO_V3!r})")
    expected = IOLOG_LINE_V3 if version == 3 else IOLOG_LINE_V2
    added: set[str] = set()
    opened: set[str] = set()
    ops, off, size, t_ns, where_ln = [], [], [], [], []
    skipped = 0
    pending_wait_ns = 0
    last_t = 0
    for ln, line in it:
        f = line.split()
        if not f:
            continue
        where = f"{name} line {ln}"
        if version == 3:
            if len(f) not in (3, 5):
                raise ValueError(f"{where}: expected {expected} (fio version 3 iolog)")
            t_us = _int(f[0], "timestamp (usec)", where)
            if t_us < last_t:
                raise ValueError(f"{where}: timestamp {t_us} is before the previous one ({last_t})")
            last_t = t_us
            f = f[1:]
        elif len(f) not in (2, 4):
            raise ValueError(f"{where}: expected {expected} (fio version 2 iolog)")
        fname, act = f[0], f[1]
        if len(f) == 2:
            if act == "add":
                added.add(fname)
            elif act == "open":
                if fname not in added:
                    raise ValueError(f"{where}: open of {fname!r}, which was not added")
                opened.add(fname)
            elif act == "close":
                if fname not in opened:
                    raise ValueError(f"{where}: close of {fname!r}, which is not open")
                opened.discard(fname)
            else:
                raise ValueError(f"{where}: file action must be add, open or close, got {act!r}")
            continue
        offset = _int(f[2], "offset", where)
        length = _int(f[3], "length", where)
        if act == "wait":
            if version == 3:
                raise ValueError(f"{where}: 'wait' is not allowed in a fio version 3 iolog "
                                 "(timestamps give the times)")
            if offset >= _WAIT_MIN_US:
                if ops:
                    t_ns[-1] += offset * 1000
                else:
                    pending_wait_ns += offset * 1000
            continue
        if act not in ("read", "write", "sync", "datasync", "trim"):
            raise ValueError(f"{where}: action must be read, write, sync, datasync, trim"
                             f"{'' if version == 3 else ', wait'} or add/open/close, got {act!r}")
        if fname not in opened:
            raise ValueError(f"{where}: I/O on {fname!r}, which is not open "
                             f"(expected '{fname} add' and '{fname} open' before)")
        if act == "trim":
            skipped += 1
            continue
        if act in ("read", "write") and length < 1:
            raise ValueError(f"{where}: length must be >= 1, got {length}")
        if act in ("sync", "datasync"):
            ops.append(FLUSH_OP)
            off.append(0)
            size.append(0)
        else:
            ops.append(0 if act == "read" else 1)
            off.append(offset)
            size.append(length)
        t_ns.append(t_us * 1000 if version == 3 else 0)
        where_ln.append(ln)
        if limit and len(ops) >= limit:
            break
    if not ops:
        raise ValueError(f"{name}: no requests (expected {expected} lines after the header)")
    if version == 3:
        t0 = t_ns[0]
        t_ns = [t - t0 for t in t_ns]
        return _trace(ops, off, size, t_ns, where_ln, "open", skipped=skipped)
    return _trace(ops, off, size, t_ns, where_ln, "closed", skipped=skipped)


# -- blkparse ----------------------------------------------------------------------------
def parse_blkparse(lines: Iterable[str], name: str = "blkparse", limit: int = 0,
                   device: str = "") -> Trace:
    """``blkparse`` default text -> open-loop Trace of the Q events of one device, with
    Q-to-C times as ``measured_ns`` when every Q completes in the trace. ``limit`` > 0
    stops after that many requests (then nothing is measured)."""
    want = None
    if device:
        m = re.fullmatch(r"\s*(\d+),(\d+)\s*", str(device))
        if not m:
            raise ValueError(f"device: expected 'major,minor' as blkparse prints it (8,0), "
                             f"got {device!r}")
        want = (int(m.group(1)), int(m.group(2)))
    seen: list[tuple[int, int]] = []
    ops, off, size, t_s, where_ln, skipped = [], [], [], [], [], 0
    done_s: list[float] = []
    # (dir, start sector) -> indices of the requests queued there and not completed, in
    # order (a sector rewritten while in flight, flushes: all at sector 0)
    pending: dict[tuple[int, int], deque] = {}
    for ln, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _BLK.match(line)
        if m is None:
            if _BLK_SUMMARY.match(line):
                break                    # blkparse's summary: the events are over
            raise ValueError(f"{name} line {ln}: expected {BLKPARSE_LINE} (blkparse default "
                             f"output), got {line.strip()[:60]!r}")
        dev = (int(m.group(1)), int(m.group(2)))
        if dev not in seen:
            seen.append(dev)
        if want is None and len(seen) > 1:
            raise ValueError(f"{name} line {ln}: events of several devices "
                             f"({', '.join(f'{a},{b}' for a, b in seen)}); choose one "
                             "(workload.iolog_device=8,0)")
        if want is not None and dev != want:
            continue
        action, rwbs, rest = m.group(7), m.group(8), m.group(9)
        if action not in ("Q", "C"):
            continue
        where = f"{name} line {ln}"
        t = float(m.group(5))
        if not math.isfinite(t):
            raise ValueError(f"{where}: time must be finite, got {m.group(5)!r}")
        sm = _SECTORS.match(rest)
        sector, nsect = (int(sm.group(1)), int(sm.group(2))) if sm else (0, 0)
        if "D" in rwbs or ("R" not in rwbs and "W" not in rwbs and "F" not in rwbs):
            skipped += action == "Q"
            continue
        if nsect == 0:
            if "F" not in rwbs:
                skipped += action == "Q"
                continue
            op = FLUSH_OP
        else:
            if sm is None:
                raise ValueError(f"{where}: expected 'sector + sectors' after {rwbs!r} "
                                 f"({BLKPARSE_LINE})")
            op = 1 if "W" in rwbs else 0
        if action == "Q":
            if limit and len(ops) >= limit:
                continue
            ops.append(op)
            off.append(sector * 512)
            size.append(nsect * 512)
            t_s.append(t)
            done_s.append(-1.0)
            where_ln.append(ln)
            pending.setdefault((op, sector), deque()).append(len(ops) - 1)
            continue
        # C: completes the bios queued at sector.. (a merged request covers several)
        pos, end = sector, sector + nsect
        while True:
            queued = pending.get((op, pos))
            if not queued:
                break
            i = queued.popleft()
            done_s[i] = t
            if op == FLUSH_OP:
                break
            pos += size[i] // 512
            if pos >= end:
                break
        if limit and len(ops) >= limit and not any(pending.values()):
            break                        # the first ``limit`` requests all completed
    if not ops:
        raise ValueError(f"{name}: no Q events (expected {BLKPARSE_LINE} lines of blkparse "
                         "default output with action Q)")
    t0 = t_s[0]
    order = np.argsort(np.asarray(t_s), kind="stable")
    t_ns = np.rint((np.asarray(t_s) - t0) * 1e9).astype(np.int64)
    done = np.asarray(done_s)
    measured: np.ndarray = np.zeros(0, dtype=np.int64)
    if (done >= 0).all():
        measured = np.rint((done - np.asarray(t_s)) * 1e9).astype(np.int64)[order]
    return _trace(np.asarray(ops)[order], np.asarray(off)[order], np.asarray(size)[order],
                  t_ns[order], np.asarray(where_ln)[order], "open", measured, skipped)


# -- which format ------------------------------------------------------------------------
FORMATS = ("auto", "validate", "csv", "iolog", "blkparse")


def detect_format(path, fmt: str = "auto") -> str:
    """``fmt``, or for ``auto`` the format the file's first non-blank line announces (a
    fio iolog header, a blkparse event line), else by extension (``.csv`` -> csv,
    anything else -> DiskSim validate)."""
    from pathlib import Path

    if fmt != "auto":
        if fmt not in FORMATS:
            raise ValueError(f"iolog_format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
        return fmt
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    found = sniff(line)
                    if found:
                        return found
                    break
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a trace text file (not UTF-8)") from None
    return "csv" if path.suffix.lower() == ".csv" else "validate"


def read_streamed(path, fmt: str, limit: int = 0, device: str = "") -> Trace:
    """A fio iolog or blkparse file, read line by line (up to ``limit`` requests)."""
    try:
        with open(path, encoding="utf-8") as f:
            if fmt == "iolog":
                return parse_fio_iolog(f, str(path), limit)
            if fmt == "blkparse":
                return parse_blkparse(f, str(path), limit, device)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a trace text file (not UTF-8)") from None
    raise ValueError(f"iolog_format: {fmt!r} is not read line by line")
