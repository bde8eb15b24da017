"""fio's JSON output (``fio --output-format=json``) of a simulated fio run, written as
``run=<hash>/_details/fio.json`` beside the run's ``summary.parquet`` (in ``_details/``,
where pandas and pyarrow datasets of the results do not look) so fio users' plotting
tools read it.

The layout and the field names are fio's (``stat.c``: ``show_thread_status_json``,
``add_ddir_status_json``, ``add_ddir_lat_json``, fio 3.x): top-level ``fio version``,
``timestamp``, ``timestamp_ms``, ``time``, ``global options``, ``jobs`` and
``disk_util``. One ``jobs[]`` entry per job of the job file (``jobname``, ``groupid``,
``job_start``, ``error``, ``eta``, ``elapsed``, ``job options``); per entry ``read`` /
``write`` / ``trim`` each with ``io_bytes``, ``io_kbytes``, ``bw_bytes``, ``bw``
(KiB/s), ``iops``, ``runtime`` (ms), ``total_ios``, ``short_ios``, ``drop_ios``,
``slat_ns``, ``clat_ns`` and ``lat_ns`` (``min``, ``max``, ``mean``, ``stddev``, ``N``,
and ``percentile`` at fio's default list, keys as fio prints them, ``"99.000000"``,
where fio prints one: ``clat_ns`` by default (``clat_percentiles=1``), ``lat_ns`` with
``lat_percentiles=1``, ``slat_ns`` with ``slat_percentiles=1``, none without
samples); ``sync`` (``total_ios``, ``lat_ns``) for fsync / fdatasync; ``job_runtime``,
``usr_cpu``, ``sys_cpu``, ``ctx``, ``majf``, ``minf``; ``iodepth_level`` (the share of
I/Os submitted with 1, 2-3, 4-7, 8-15, 16-31, 32-63, >= 64 in flight, fio's
``io_u_map``, keys ``"1"`` .. ``">=64"``); ``latency_ns``, ``latency_us``,
``latency_ms`` (the share of completions per latency bucket, fio's
``io_u_mark_latency``: key ``"4"`` of ``latency_us`` is [2, 4) us, ``">=2000"`` of
``latency_ms`` 2 s and over; a bucket with any I/O shows at least 0.01, as fio).
``disk_util`` per block device (``name``, ``read_ios``, ``write_ios``,
``read_merges``, ``write_merges``, ``read_ticks``, ``write_ticks``, ``in_queue``,
``util``).

What the numbers are: the same measured interval and counts as the run's ``fio.*``
columns (``iops`` equals ``fio.read_iops`` / ``fio.write_iops``, or
``fio.job<i>.read_iops`` for a job of several); ``clat_ns`` is the model's time from an
I/O's issue to its completion (buffered jobs: the system call's). The simulated job
spends no time in submission unless its ``io_submit`` sleeps for a request
(``nr_requests``): the I/Os of that call are issued when it returns, ``slat_ns`` runs
to there and ``clat_ns`` from there (an I/O that completed meanwhile has a clat of 0:
fio reaps it after the call). Every other I/O's slat is 0 (``N`` the I/O count for the
asynchronous engines; 0 for psync / sync, as fio does not time their submission -
their sleep is inside the call, in ``clat_ns``), and ``lat_ns`` = ``clat_ns`` +
``slat_ns``. Percentiles are exact order statistics of the samples (fio approximates
them from a log-linear histogram); ``numjobs`` clones are reported as one job (fio's
``group_reporting``). CPU is not modelled by the fio job: ``usr_cpu`` and ``sys_cpu``
are 0, as are ``ctx``, ``majf`` and ``minf``. Not written: the bandwidth / IOPS
sampling statistics (``bw_min``, ``iops_mean`` ...), ``iodepth_submit`` /
``iodepth_complete``, ``latency_depth``, ``mixed`` (``unified_rw_reporting``).
"""
from __future__ import annotations

import json
import time

import numpy as np

from models.device.request import READ, WRITE

VERSION = "fio-3.36 (dbio-sim)"
# fio's default percentile_list
PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
               99.5, 99.9, 99.95, 99.99)
FILE = "fio.json"
# fio's latency buckets (io_u_mark_lat_nsec / usec / msec): upper bounds in each unit
_BOUNDS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_DEPTHS = ("1", "2", "4", "8", "16", "32", ">=64")


def _stats(ns: np.ndarray, percentiles: bool) -> dict:
    n = int(ns.size)
    out = {"min": int(ns.min()) if n else 0, "max": int(ns.max()) if n else 0,
           "mean": float(ns.mean()) if n else 0.0, "stddev": float(ns.std()) if n > 1 else 0.0,
           "N": n}
    if percentiles and n:
        vals = np.percentile(ns, PERCENTILES, method="inverted_cdf")
        out["percentile"] = {f"{p:.6f}": int(v) for p, v in zip(PERCENTILES, vals)}
    return out


def _flag(options: dict, key: str, default: bool) -> bool:
    return str(options.get(key, int(default))).strip().lower() in ("1", "true", "yes", "on")


def _direction(ns: np.ndarray, io_bytes: int, secs: float, options: dict,
               timed_submit: bool, slat: np.ndarray | None = None) -> dict:
    """``ns``: the completion latencies (clat); ``slat``: the submission latencies of the
    same I/Os (None: all 0)."""
    runtime_ms = int(round(secs * 1000))
    if slat is None:
        slat = np.zeros(ns.size, dtype=np.int64)
    return {
        "io_bytes": int(io_bytes), "io_kbytes": int(io_bytes // 1024),
        "bw_bytes": int(io_bytes / secs) if secs > 0 else 0,
        "bw": int(io_bytes / 1024 / secs) if secs > 0 else 0,
        "iops": ns.size / secs if secs > 0 else 0.0,
        "runtime": runtime_ms if ns.size else 0,
        "total_ios": int(ns.size), "short_ios": 0, "drop_ios": 0,
        "slat_ns": _stats(slat if timed_submit else slat[:0],
                          _flag(options, "slat_percentiles", False)),
        "clat_ns": _stats(ns, _flag(options, "clat_percentiles", True)),
        "lat_ns": _stats(ns + slat, _flag(options, "lat_percentiles", False)),
    }


def _shares(counts: np.ndarray, total: int, floor: float) -> list[float]:
    """Percent of ``total`` per bucket; a bucket with any I/O shows at least ``floor``
    (fio's stat_calc_dist / stat_calc_lat)."""
    if not total:
        return [0.0] * len(counts)
    return [max(100.0 * c / total, floor) if c else 0.0 for c in counts]


def latency_buckets(ns: np.ndarray) -> dict:
    """``latency_ns`` / ``latency_us`` / ``latency_ms``: fio's io_u_mark_latency."""
    total = int(ns.size)
    out = {}
    for name, unit, lo, hi in (("latency_ns", 1, 0, 1000), ("latency_us", 1000, 1000, 10**6),
                               ("latency_ms", 10**6, 10**6, None)):
        part = ns[(ns >= lo) & (ns < hi)] if hi else ns[ns >= lo]
        v = part // unit                           # whole units, as fio truncates
        labels = list(_BOUNDS) + ([2000] if hi is None else [])
        edges = [0] + labels
        counts = [int(((v >= a) & (v < b)).sum()) for a, b in zip(edges, edges[1:])]
        keys = [str(b) for b in labels]
        if hi is None:
            counts.append(int((v >= 2000).sum()))
            keys.append(">=2000")
        out[name] = dict(zip(keys, _shares(np.array(counts), total, 0.01)))
    return out


def iodepth_level(depth_ios: list[int]) -> dict:
    """fio's ``iodepth_level``: the share of submitted I/Os that went out with 1, 2-3,
    4-7, ... I/Os in flight (``depth_ios[d]``: the I/Os submitted at depth ``d``)."""
    counts = np.zeros(len(_DEPTHS), dtype=np.int64)
    for d, n in enumerate(depth_ios):
        if n:
            counts[min(max(d, 1).bit_length() - 1, 6)] += n
    return dict(zip(_DEPTHS, _shares(counts, int(counts.sum()), 0.1)))


def _disk_util(name: str, io: dict, secs: float) -> dict:
    reads = int(round(io.get("r_s", 0.0) * secs))
    writes = int(round(io.get("w_s", 0.0) * secs))
    return {
        "name": name, "read_ios": reads, "write_ios": writes,
        "read_merges": int(round(io.get("rrqm_s", 0.0) * secs)),
        "write_merges": int(round(io.get("wrqm_s", 0.0) * secs)),
        "read_ticks": int(round(io.get("r_await_ms", 0.0) * reads)),
        "write_ticks": int(round(io.get("w_await_ms", 0.0) * writes)),
        "in_queue": int(round(io.get("avgqu_sz", 0.0) * secs * 1000)),
        "util": float(io.get("util_pct", 0.0)),
    }


def depth_counts(job) -> list[int]:
    """I/Os submitted at each depth by a job group (a buffered job: one at a time)."""
    jobs = getattr(job, "jobs", None)
    if jobs is None:
        return [0, len(job.lat[READ]) + len(job.lat[WRITE])]
    out = [0] * max(len(j.depth_ios) for j in jobs)
    for j in jobs:
        for d, n in enumerate(j.depth_ios):
            out[d] += n
    return out


def job_entry(job, jobname: str, options: dict, groupid: int = 0, start_ms: int = 0) -> dict:
    """One ``jobs[]`` entry of a finished job group (``FioJob`` or ``FioBufferedJob``)."""
    res = job.results()
    secs = res["runtime_s"]
    lat = {op: np.frombuffer(job.lat[op].samples, dtype=np.int64) for op in (READ, WRITE)}
    slat = {op: np.zeros(lat[op].size, dtype=np.int64) for op in (READ, WRITE)}
    sparse = job.submit_latencies()     # None: psync / sync or direct=0, slat not timed
    timed = sparse is not None
    for op in (READ, WRITE):
        for i, v in (sparse[op] if timed else ()):
            slat[op][i] = v
    entry = {
        "jobname": jobname, "groupid": groupid, "job_start": start_ms, "error": job.error,
        "eta": 0,
        "elapsed": int(np.ceil(secs)),
        "job options": {k: str(v) for k, v in options.items()},
        "read": _direction(lat[READ], job.bytes_done[READ], secs, options, timed, slat[READ]),
        "write": _direction(lat[WRITE], job.bytes_done[WRITE], secs, options, timed,
                            slat[WRITE]),
        "trim": _direction(np.zeros(0, dtype=np.int64), 0, secs, options, timed),
        "sync": {"total_ios": len(job.sync_lat),
                 "lat_ns": _stats(np.frombuffer(job.sync_lat.samples, dtype=np.int64), True)},
        "job_runtime": int(round(secs * 1000)),
        "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0, "minf": 0,
    }
    # the run's own values, to the last bit (fio.read_iops / fio.write_iops)
    entry["read"]["iops"] = res["read_iops"]
    entry["write"]["iops"] = res["write_iops"]
    both = np.concatenate([lat[READ], lat[WRITE]])
    entry["iodepth_level"] = iodepth_level(depth_counts(job))
    entry.update(latency_buckets(both))
    return entry


def report(entries: list[dict], device: str, iostat: dict, secs: float) -> dict:
    """fio's JSON document of the run's ``jobs[]`` entries and its device's iostat."""
    now = time.time()
    return {
        "fio version": VERSION, "timestamp": int(now), "timestamp_ms": int(now * 1000),
        "time": time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)),
        "global options": {}, "jobs": entries,
        "disk_util": [_disk_util(device, iostat, secs)],
    }


class FioRun:
    """The pipeline's fio workload: a ``FioJob`` plus its ``fio.json`` (``files()``)."""

    def __init__(self, job, extras: dict) -> None:
        self.job = job
        self.extras = extras

    def start(self) -> None:
        self.job.start()

    def results(self) -> dict:
        return self.job.results()

    def iostat(self) -> dict:
        return self.job.iostat()

    def _jobfile(self):
        jobfile = self.extras.get("jobfile")
        if jobfile:
            from .fio_jobfile import read_jobfile, resolve

            try:
                return read_jobfile(resolve(jobfile))
            except (OSError, ValueError):
                pass
        return None

    def files(self) -> dict:
        """``{"fio.json": bytes}``: files written beside the run's summary. ``job
        options`` are the job file's (fio's names) or else the job's config fields."""
        from dataclasses import asdict

        device = str(self.extras.get("filename", "sda")).removeprefix("/dev/")
        jf = self._jobfile()
        members = getattr(self.job, "members", None)
        start_ms = int(time.time() * 1000)
        if members is None:
            opts = dict(jf.options) if jf is not None else asdict(self.job.cfg)
            opts["filename"] = f"/dev/{device}"
            entries = [job_entry(self.job, jf.name if jf is not None else "fio", opts,
                                 0, start_ms)]
        else:
            cfg = self.job.cfg
            entries = []
            for i, m in enumerate(members):
                opts = (dict(jf.jobs[i].options) if jf is not None and i < len(jf.jobs)
                        else asdict(cfg.jobs[i]))
                opts["filename"] = f"/dev/{device}"
                entries.append(job_entry(m, cfg.names[i], opts, cfg.groups[i],
                                         start_ms + m.started_ns // 10**6))
        res = self.job.results()
        doc = report(entries, device, self.job.iostat(), res["runtime_s"])
        return {FILE: (json.dumps(doc, indent=2) + "\n").encode()}
