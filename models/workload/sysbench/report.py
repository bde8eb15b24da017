"""What sysbench prints at the end of a run and every ``--report-interval`` seconds.

Modelled (``sysbench.c``, ``sb_histogram.c``, ``sysbench.lua``):

- Latency of an event: from its start (closed loop) or from its arrival in the event
  queue (``--rate``: the queue time counts, ``sb_timer`` adds ``queue_time``) to its
  end; min / avg / max / sum exact, the ``percentile`` read from sysbench's latency
  histogram - 1024 buckets on a log scale from 0.001 ms to 100,000 ms, a value goes to
  the nearest bucket, and the percentile is the value of the first bucket at which the
  cumulative count reaches ``round(n * pct / 100)`` (so it is quantised to ~1.1 %).
- The final report: ``transactions`` (events) and ``queries`` (read / write / other),
  each with its rate over the total time; ``ignored errors``: the errors sysbench 1.0
  ignores by default (``--mysql-ignore-errors=1213,1020,1205``) and restarts the event
  after - here the server's deadlocks (``ERROR_COUNTERS``; the server retries the
  victim, so its latency includes the restart, as sysbench's timer does; the statements
  of the failed attempt are not counted as queries); ``reconnects`` (0: none
  modelled); ``total time``; latency; threads fairness (events and execution time per
  thread, average and standard deviation).
- An intermediate report every ``report_interval`` s of the events that ended in it:
  ``thds``, ``tps``, ``qps`` (r/w/o), ``lat (ms,95%)`` - one row of the detail table -
  beside the server's ``SHOW GLOBAL STATUS``: gauges (``GAUGES``) as sampled at the end
  of the interval, counters as their increase per second over it (``<name>_s``).
"""
from __future__ import annotations

import math

import numpy as np

from ..server_status import GAUGES  # noqa: F401  (re-exported: report.GAUGES)

HIST_SIZE = 1024
HIST_MIN_MS = 1e-3
HIST_MAX_MS = 1e5
_DEDUCT = math.log(HIST_MIN_MS)
_MULT = (HIST_SIZE - 1) / (math.log(HIST_MAX_MS) - _DEDUCT)

# SHOW GLOBAL STATUS counters of errors sysbench ignores and restarts the event after
# (1213 ER_LOCK_DEADLOCK; 1205 lock wait timeout and 1020 are not modelled)
ERROR_COUNTERS = ("Innodb_deadlocks",)



def hist_bucket(ms: np.ndarray) -> np.ndarray:
    """``sb_histogram_update``'s bucket of each latency (ms)."""
    with np.errstate(divide="ignore"):
        i = np.floor((np.log(np.maximum(ms, 1e-300)) - _DEDUCT) * _MULT + 0.5)
    return np.clip(i, 0, HIST_SIZE - 1).astype(np.int64)


def hist_percentile(ms: np.ndarray, pct: float) -> float:
    """``sb_histogram_get_pct``: the ``pct`` percentile (ms) of latencies ``ms`` as
    sysbench's histogram reports it (0 for no events)."""
    n = int(ms.size)
    if n == 0 or pct <= 0:
        return 0.0
    counts = np.bincount(hist_bucket(ms), minlength=HIST_SIZE)
    nmax = math.floor(n * pct / 100 + 0.5)
    i = int(np.searchsorted(np.cumsum(counts), nmax, side="left"))
    return math.exp(min(i, HIST_SIZE - 1) / _MULT + _DEDUCT)


def errors(before: dict, after: dict) -> int:
    """sysbench's ignored errors between two ``status()`` samples."""
    return int(sum(after.get(k, 0) - before.get(k, 0) for k in ERROR_COUNTERS))


def final_report(lat_ns: np.ndarray, thread_of: np.ndarray, threads: int, total_s: float,
                 mix, pct: int, ignored_errors: int = 0) -> dict:
    """The columns of sysbench's final report for events of latencies ``lat_ns`` run by
    the threads ``thread_of`` over ``total_s`` seconds (``mix``: statements per event)."""
    n = int(lat_ns.size)
    ms = lat_ns / 1e6
    per_s = (lambda x: x / total_s) if total_s > 0 else (lambda x: 0.0)
    reads, writes, other = n * mix.reads, n * mix.writes, n * mix.other
    ev = np.bincount(thread_of, minlength=threads)[:threads] if n else np.zeros(threads)
    busy = (np.bincount(thread_of, weights=lat_ns / 1e9, minlength=threads)[:threads]
            if n else np.zeros(threads))
    return {
        "threads": threads,
        "transactions": n, "tps": per_s(n),
        "queries": reads + writes + other, "qps": per_s(reads + writes + other),
        "reads": reads, "writes": writes, "other": other,
        "reads_s": per_s(reads), "writes_s": per_s(writes), "other_s": per_s(other),
        "ignored_errors": ignored_errors, "reconnects": 0,
        "total_time_s": total_s, "events": n,
        "latency_min_ms": float(ms.min()) if n else 0.0,
        "latency_avg_ms": float(ms.mean()) if n else 0.0,
        "latency_max_ms": float(ms.max()) if n else 0.0,
        "latency_pct_ms": hist_percentile(ms, pct),
        "latency_sum_ms": float(ms.sum()),
        "fairness_events_avg": n / threads,
        "fairness_events_stddev": float(np.sqrt(np.mean((ev - n / threads) ** 2))),
        "fairness_exec_time_avg_s": float(busy.sum()) / threads,
        "fairness_exec_time_stddev_s": float(np.sqrt(np.mean((busy - busy.sum() / threads) ** 2))),
    }


def status_columns(before: dict, after: dict, seconds: float) -> dict:
    """One interval's server status: gauges as ``after`` has them, counters as their
    increase per second (``<name>_s``)."""
    out = {}
    for k, v in after.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        if k in GAUGES:
            out[k] = v
        else:
            out[f"{k}_s"] = (v - before.get(k, 0)) / seconds if seconds > 0 else 0.0
    return out


def format_report(r: dict, test: str, pct: int) -> str:
    """The final report as sysbench prints it (for a log or a terminal)."""
    return "\n".join([
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {r['reads']}",
        f"        write:                           {r['writes']}",
        f"        other:                           {r['other']}",
        f"        total:                           {r['queries']}",
        f"    transactions:                        {r['transactions']:<6} "
        f"({r['tps']:.2f} per sec.)",
        f"    queries:                             {r['queries']:<6} ({r['qps']:.2f} per sec.)",
        f"    ignored errors:                      {r['ignored_errors']:<6} "
        f"({r['ignored_errors'] / r['total_time_s'] if r['total_time_s'] else 0:.2f} per sec.)",
        "    reconnects:                          0      (0.00 per sec.)",
        "",
        "General statistics:",
        f"    total time:                          {r['total_time_s']:.4f}s",
        f"    total number of events:              {r['events']}",
        "",
        "Latency (ms):",
        f"         min: {r['latency_min_ms']:39.2f}",
        f"         avg: {r['latency_avg_ms']:39.2f}",
        f"         max: {r['latency_max_ms']:39.2f}",
        f"        {pct:3d}th percentile: {r['latency_pct_ms']:27.2f}",
        f"         sum: {r['latency_sum_ms']:39.2f}",
        "",
        "Threads fairness:",
        f"    events (avg/stddev):           {r['fairness_events_avg']:.4f}/"
        f"{r['fairness_events_stddev']:3.2f}",
        f"    execution time (avg/stddev):   {r['fairness_exec_time_avg_s']:.4f}/"
        f"{r['fairness_exec_time_stddev_s']:3.2f}",
    ])
