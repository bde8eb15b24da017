"""``sysbench <test> --threads=N run`` against a simulated server: the client threads,
the optional rate-limited event queue and the intermediate reports.

Modelled (``sysbench.c``):

- ``threads`` client threads, each a simulated thread that loops: check the limits
  (``sb_more_events``: no event starts once ``time`` s have passed or ``events``
  events have started), build the event's ``Transaction`` (``oltp.EventBuilder``) and
  ``yield from server.run(thd, trx)``, which returns at commit. No think time; the
  client's own CPU and the network round trips are not modelled (the server's
  ``run`` is the whole latency).
- ``rate``: a generator thread enqueues events at exponentially distributed intervals
  (mean ``1 / rate`` s) until the time limit; an idle thread takes the next queued
  event, and its latency counts from the event's arrival. A queue longer than
  sysbench's 131,072 events stops the run (``event_queue_full``; sysbench exits with
  "The event queue is full").
- ``warmup_time`` (sysbench 1.1): events run for that long first, with no ``events``
  limit; then the statistics start (events that end after it), ``events`` counts
  from there, ``time`` is measured from it and the intermediate reports begin.
- The run ends when the last thread has finished its last event (sysbench waits for
  them): ``total time`` is measured up to there.
- Every ``report_interval`` s a detail row (``report.py``) with the server's
  ``status()`` then.

Deterministic from the run's generator: each thread draws its ids from a child of it
(``Generator.spawn``), so a thread's sequence of events does not depend on the server.

The server's interface (``models.engine.innodb``'s ``InnoDBServer``; see ``ops.py``):
``create_tables(tables)`` before ``start()``, ``start()``, ``stop()``, ``run(thd, trx)``
(a generator), ``status() -> dict`` (cumulative SHOW GLOBAL STATUS by MySQL name).
"""
from __future__ import annotations

from array import array
from collections import deque

import numpy as np

from ...sim import Simulator
from ..server_status import MeasuredRun
from . import oltp, report
from .options import SysbenchConfig
from .rand import SbRand, UniqueSequence

MAX_QUEUE_LEN = 131072       # sysbench.c: the rate mode's event queue


class Sysbench(MeasuredRun):
    """One ``sysbench`` run of ``cfg`` against ``server``. ``scale`` (``run.scale``)
    multiplies ``time``, ``warmup_time`` and ``events``; tables and rates are kept."""

    def __init__(self, sim: Simulator, cfg: SysbenchConfig, server,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"scale: must be > 0, got {scale}")
        missing = [m for m in ("create_tables", "run", "status") if not hasattr(server, m)]
        if missing:
            raise ValueError(f"sysbench runs on the InnoDB server (engine=innodb_server_56), not on "
                             f"{type(server).__name__} (no {', '.join(missing)})")
        self.sim, self.cfg, self.server = sim, cfg, server
        rng = rng if rng is not None else np.random.default_rng(0)
        self.time_ns = int(round(cfg.time * scale * 1e9))
        self.warmup_ns = int(round(cfg.warmup_time * scale * 1e9))
        self.max_events = max(1, int(round(cfg.events * scale))) if cfg.events else 0
        self.interval_ns = int(round(cfg.report_interval * 1e9))
        children = rng.spawn(cfg.threads + 2)
        self.rands = [SbRand(cfg, g) for g in children[:cfg.threads]]
        self.arrival_rng = children[-1]
        self.builder = oltp.EventBuilder(cfg, unique=UniqueSequence(children[-2]))
        self.mix = self.builder.mix
        self.server.create_tables(oltp.table_defs(cfg))
        # events that ended in the measured window, in completion order
        self.lat = array("q")
        self.end = array("q")
        self.thd = array("i")
        self.rows: list[dict] = []
        self.started = 0
        self.running = 0
        self.error = ""
        self.t0 = self.measure_ns = 0
        self.deadline_ns: int | None = None
        self.finished_ns: int | None = None
        self._queue: deque = deque()
        self._idle: list = []
        self._before: dict = {}
        self._after: dict = {}

    @property
    def time_s(self) -> float:
        """``time`` as the run uses it (after ``run.scale``)."""
        return self.time_ns / 1e9

    # -- running -------------------------------------------------------------------------
    def start(self) -> None:
        sim = self.sim
        self._begin(self.warmup_ns, self.time_ns)
        self.running = self.cfg.threads
        for i in range(self.cfg.threads):
            sim.spawn(self._client(i), f"sysbench{i}")
        if self.cfg.rate > 0:
            sim.spawn(self._eventgen(), "sysbench_eventgen")
        if self.interval_ns and not self.warmup_ns:
            self._start_ticks()

    def _start_ticks(self) -> None:
        self._last_tick = (self.sim.now_ns, len(self.lat), self.server.status())
        self.sim.at(self.sim.now_ns + self.interval_ns, self._tick)

    def _measure_from(self, _arg=None) -> None:
        super()._measure_from()
        self.started = 0                 # --events counts the measured events
        if self.interval_ns:
            self._start_ticks()

    def _more_events(self) -> bool:
        if self.error or self.finished_ns is not None:
            return False
        if self.deadline_ns is not None and self.sim.now_ns >= self.deadline_ns:
            return False
        if self.max_events and self.sim.now_ns >= self.measure_ns:   # off in warm-up
            if self.started >= self.max_events:
                return False
        self.started += 1
        return True

    def _client(self, thd: int):
        sim, server, build, rnd = self.sim, self.server, self.builder.build, self.rands[thd]
        rate = self.cfg.rate > 0
        lat, end, thds = self.lat, self.end, self.thd
        while self._more_events():
            if rate:
                while not self._queue:
                    ev = sim.event()
                    self._idle.append(ev)
                    yield ev
                    if self.error or (self.deadline_ns is not None
                                      and sim.now_ns >= self.deadline_ns):
                        self._exit()
                        return
                t0 = self._queue.popleft()
            else:
                t0 = sim.now_ns
            yield from server.run(thd, build(rnd))
            now = sim.now_ns
            if now >= self.measure_ns:
                lat.append(now - t0)
                end.append(now)
                thds.append(thd)
        self._exit()

    def _exit(self) -> None:
        self.running -= 1
        if self.running == 0:
            self._finish()

    def _eventgen(self):
        sim, rng = self.sim, self.arrival_rng
        mean_ns = 1e9 / self.cfg.rate
        next_ns = float(sim.now_ns)
        while True:
            next_ns += float(rng.exponential(mean_ns))
            if self.deadline_ns is not None and next_ns >= self.deadline_ns:
                break
            if self.finished_ns is not None or self.running == 0:
                return
            wait = int(next_ns) - sim.now_ns
            if wait > 0:
                yield wait
            if len(self._queue) >= MAX_QUEUE_LEN:
                self.error = "event queue full"
                break
            self._queue.append(sim.now_ns)
            if self._idle:
                self._idle.pop(0).succeed()
        if self.deadline_ns is not None and sim.now_ns < self.deadline_ns and not self.error:
            yield self.deadline_ns - sim.now_ns
        idle, self._idle = self._idle, []
        for ev in idle:                  # pthread_cond_broadcast: let the threads exit
            ev.succeed()

    def _tick(self, _arg=None) -> None:
        if self.finished_ns is not None:
            return
        sim = self.sim
        t_prev, i_prev, st_prev = self._last_tick
        now, i_now = sim.now_ns, len(self.lat)
        secs = (now - t_prev) / 1e9
        st = self.server.status()
        n = i_now - i_prev
        lat_ms = np.frombuffer(self.lat, dtype=np.int64)[i_prev:i_now] / 1e6
        m = self.mix
        row = {"t_s": (now - self.measure_ns) / 1e9, "thds": self.running,
               "tps": n / secs, "qps": n * m.queries / secs, "reads_s": n * m.reads / secs,
               "writes_s": n * m.writes / secs, "other_s": n * m.other / secs,
               "latency_pct_ms": report.hist_percentile(lat_ms, self.cfg.percentile),
               "errors_s": report.errors(st_prev, st) / secs, "reconnects_s": 0.0}
        if self.cfg.rate > 0:
            row["queue_length"] = len(self._queue)
            row["concurrency"] = self.cfg.threads - len(self._idle)
        row.update(report.status_columns(st_prev, st, secs))
        self.rows.append(row)
        self._last_tick = (now, i_now, st)
        sim.at(now + self.interval_ns, self._tick)

    # -- results -------------------------------------------------------------------------
    def results(self) -> dict:
        """sysbench's final report (``report.final_report``) and the server's status over
        the measured window: counters as their increase, gauges at its end."""
        end = self.finished_ns if self.finished_ns is not None else self.sim.now_ns
        total_s = max(0, end - max(self.measure_ns, self.t0)) / 1e9
        after = self._after or self.server.status()
        out = report.final_report(np.frombuffer(self.lat, dtype=np.int64),
                                  np.frombuffer(self.thd, dtype=np.int32), self.cfg.threads,
                                  total_s, self.mix, self.cfg.percentile,
                                  report.errors(self._before, after))
        out["event_queue_full"] = int(self.error == "event queue full")
        out.update(self.status_over_run())
        return out

    def detail(self) -> list[dict]:
        """The intermediate reports, one row per ``report_interval`` (none when 0)."""
        return self.rows

    def report_text(self) -> str:
        return report.format_report(self.results(), self.cfg.test, self.cfg.percentile)
