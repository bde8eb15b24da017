"""Trace replay: issue a recorded request stream to a device or a block queue.

Two ways to replay a trace, as fio's ``read_iolog`` does (``mode="auto"``: the way
the trace itself records its times, passed as ``TraceReplay(mode=)``):

- **open loop** (``mode="open"``): request i is issued at its recorded arrival time
  ``time_ns[i]`` (scaled by ``replay_time_scale`` percent, fio's option), whatever
  the device is doing; a slower simulated device builds a queue. This is the right
  mode for a blktrace/blkparse capture of a real system.
- **closed loop** (``mode="closed"``): at most ``iodepth`` requests outstanding; when
  one completes, the next unissued request is issued ``time_ns`` of the completed
  request later (its recorded think time / idle gap). DiskSim's validation traces are
  closed loop with one request outstanding: the measured disk saw request i+1
  ``gap_us`` after request i completed, so idle-time work (read-ahead, write-behind)
  gets the same idle periods as on the real drive.

The target is either a ``models.device.base.Device`` (driven directly: ``submit`` when
``can_accept``, completions through ``device.on_complete``; requests that find the
command queue full wait here in FIFO order) or a block queue (anything whose
``submit(bios)`` returns None or an Event to wait on, e.g. ``models.block.BlockQueue``);
completions then arrive through each request's ``on_done``.

Requests are reads, writes and FLUSHes (a trace's ``fsync``: size 0, they drain the
drive's volatile write cache). Per request the replay records issue, dispatch (handed
to the device) and completion times and whether a cache served it: ``response_ns =
done - issue`` (what an application or DiskSim's "response time" sees) and
``service_ns = done - dispatch``. Pure: takes arrays, does no file I/O, uses no
randomness (same input, same output).

Deliberately not modelled: request dependencies other than the loop above, replaying
on several devices, per-thread issuers (fio's multiple iolog jobs).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..checks import at_least
from ..device.request import FLUSH, READ, WRITE, IORequest
from ..sim import Simulator

MODES = ("open", "closed", "auto")


@dataclass(frozen=True)
class TraceConfig:
    """How to replay (the trace's own arrays are passed to ``TraceReplay``)."""

    mode: str = "closed"         # open | closed | auto (the trace's own: TraceReplay(mode=))
    iodepth: int = 1             # closed loop: requests outstanding (fio iodepth)
    replay_time_scale: float = 100.0  # open loop: percent of recorded times (fio)
    number_ios: int = 0          # replay only the first N requests (0 = all; fio)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: must be one of {MODES}, got {self.mode!r}")
        at_least(self, 1, "iodepth")
        if not self.replay_time_scale > 0:
            raise ValueError(f"replay_time_scale: must be > 0 (percent), got {self.replay_time_scale}")
        at_least(self, 0, "number_ios")


class TraceReplay:
    """Replays arrays ``ops, offset_bytes, size_bytes, time_ns`` into ``target``.

    ``ops`` holds READ (0) / WRITE (1) codes of ``models.device.request``; ``time_ns``
    is the arrival time (open) or the idle gap after completion (closed). Call
    ``start()`` then run the simulator; ``done`` is True when every request completed.
    """

    def __init__(self, sim: Simulator, target, cfg: TraceConfig, ops, offset_bytes,
                 size_bytes, time_ns, mode: str | None = None) -> None:
        ops = np.asarray(ops, dtype=np.int64)
        off = np.asarray(offset_bytes, dtype=np.int64)
        size = np.asarray(size_bytes, dtype=np.int64)
        t = np.asarray(time_ns, dtype=np.int64)
        n = ops.size
        if not (off.size == size.size == t.size == n):
            raise ValueError("trace: ops, offset_bytes, size_bytes and time_ns differ in length")
        if cfg.number_ios:
            n = min(n, cfg.number_ios)
        if n and (np.any((ops[:n] != READ) & (ops[:n] != WRITE) & (ops[:n] != FLUSH))):
            raise ValueError("trace: ops must be READ (0), WRITE (1) or FLUSH (2)")
        data = ops[:n] != FLUSH
        if n and (np.any(size[:n][data] <= 0) or np.any(size[:n] < 0) or np.any(off[:n] < 0)
                  or np.any(t[:n] < 0)):
            raise ValueError("trace: sizes must be > 0 (0 for a flush), offsets and times >= 0")
        mode = mode or cfg.mode
        if mode not in ("open", "closed"):
            raise ValueError(f"mode: the trace's own mode must be open or closed, got {mode!r}")
        self.mode = mode
        if mode == "open" and n > 1 and np.any(np.diff(t[:n]) < 0):
            raise ValueError("trace: open-loop arrival times must be non-decreasing")
        self.sim = sim
        self.cfg = cfg
        self.n = int(n)
        # plain Python lists: indexing them per request is cheaper than numpy scalars
        self._ops = ops[:n].tolist()
        self._off = off[:n].tolist()
        self._size = size[:n].tolist()
        self._t = t[:n].tolist()
        self.issue_ns = np.zeros(n, dtype=np.int64)
        self.dispatch_ns = np.zeros(n, dtype=np.int64)
        self.done_ns = np.full(n, -1, dtype=np.int64)
        self.cache_hit = np.zeros(n, dtype=bool)
        self.next_i = 0
        self.completed = 0
        self.outstanding = 0
        self._device_mode = hasattr(target, "can_accept")
        self.target = target
        self._backlog: deque[IORequest] = deque()  # device full / block queue blocked
        self._blocked = False
        if self._device_mode:
            target.on_complete = self._on_device_complete

    # -- issuing --------------------------------------------------------------------
    def start(self) -> None:
        """Schedule the first requests (call once, before ``sim.run``)."""
        if self.mode == "open":
            self._t0 = self.sim.now_ns
            self._scale = self.cfg.replay_time_scale / 100.0
            if self.n:
                self.sim.at(self._due(0), self._arrive, None)
        else:
            for _ in range(min(self.cfg.iodepth, self.n)):
                self._issue_next()

    def _due(self, i: int) -> int:
        return self._t0 + int(round(self._t[i] * self._scale))

    def _arrive(self, _arg) -> None:
        """Open loop: issue every request due now, schedule the next arrival."""
        now = self.sim.now_ns
        while self.next_i < self.n:
            due = self._due(self.next_i)
            if due > now:
                self.sim.at(due, self._arrive, None)
                return
            self._issue_next()

    def _issue_next(self, _arg=None) -> None:
        i = self.next_i
        if i >= self.n:
            return
        self.next_i = i + 1
        req = IORequest(self._ops[i], self._off[i], self._size[i], self._on_done)
        req.tag = i
        self.issue_ns[i] = self.sim.now_ns
        self.outstanding += 1
        self._send(req)

    def _send(self, req: IORequest) -> None:
        if self._device_mode:
            dev = self.target
            if not self._backlog and dev.can_accept():
                dev.submit(req)
            else:
                self._backlog.append(req)
            return
        if self._blocked:
            self._backlog.append(req)
            return
        ev = self.target.submit(req)
        if ev is not None:
            self._blocked = True
            ev.add_callback(self._unblock)

    def _unblock(self, _value) -> None:
        self._blocked = False
        while self._backlog and not self._blocked:
            self._send(self._backlog.popleft())

    # -- completion -----------------------------------------------------------------
    def _on_device_complete(self, req: IORequest) -> None:
        backlog = self._backlog
        dev = self.target
        while backlog and dev.can_accept():
            dev.submit(backlog.popleft())
        self._on_done(req)

    def _on_done(self, req: IORequest) -> None:
        i = req.tag
        now = self.sim.now_ns
        self.done_ns[i] = now
        self.dispatch_ns[i] = req.dispatch_ns
        self.cache_hit[i] = bool(req.cache_hit)
        self.completed += 1
        self.outstanding -= 1
        if self.mode == "closed" and self.next_i < self.n:
            gap = self._t[i]
            if gap:
                self.sim.after(gap, self._issue_next, None)
            else:
                self._issue_next()

    # -- results --------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.completed == self.n

    @property
    def response_ns(self) -> np.ndarray:
        return self.done_ns - self.issue_ns

    @property
    def service_ns(self) -> np.ndarray:
        return self.done_ns - self.dispatch_ns

    def results(self) -> dict:
        """The run's flat summary (the pipeline's workload interface)."""
        return self.summary()

    def detail(self) -> dict:
        """Per-request columns (numpy arrays) for a detail table beside the summary."""
        n = self.n
        return {
            "request": np.arange(n, dtype=np.int64),
            "op": np.asarray(self._ops[:n], dtype=np.int8),
            "offset_bytes": np.asarray(self._off[:n], dtype=np.int64),
            "size_bytes": np.asarray(self._size[:n], dtype=np.int64),
            "issue_ns": self.issue_ns.copy(),
            "dispatch_ns": self.dispatch_ns.copy(),
            "done_ns": self.done_ns.copy(),
            "response_ns": self.response_ns,
            "service_ns": self.service_ns,
            "cache_hit": self.cache_hit.copy(),
        }

    def summary(self) -> dict:
        """Flat counters: requests, reads, writes, mean/p50/p99 response, cache hits."""
        ok = self.done_ns >= 0
        r = self.response_ns[ok]
        ops = np.asarray(self._ops[: self.n], dtype=np.int64)
        return {
            "requests": int(self.n),
            "completed": int(ok.sum()),
            "reads": int((ops == READ).sum()),
            "writes": int((ops == WRITE).sum()),
            "flushes": int((ops == FLUSH).sum()),
            "cache_hits": int(self.cache_hit[ok].sum()),
            "mean_response_ns": float(r.mean()) if r.size else 0.0,
            "p50_response_ns": float(np.percentile(r, 50)) if r.size else 0.0,
            "p99_response_ns": float(np.percentile(r, 99)) if r.size else 0.0,
        }
