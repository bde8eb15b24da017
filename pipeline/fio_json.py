"""fio's JSON output (``fio --output-format=json``) of a simulated fio run, written as
``run=<hash>/_details/fio.json`` beside the run's ``summary.parquet`` (in ``_details/``,
where pandas and pyarrow datasets of the results do not look) so fio users' plotting
tools read it.

The layout is fio's (its ``stat.c`` JSON, as fio 3.x prints it): top-level ``fio
version``, ``timestamp``, ``time``, ``global options``, ``jobs`` and ``disk_util``; per
job ``jobname``, ``groupid``, ``error``, ``job options``, ``job_runtime`` (ms), and
``read`` / ``write`` / ``trim`` each with ``io_bytes``, ``io_kbytes``, ``bw_bytes``,
``bw`` (KiB/s), ``iops``, ``runtime`` (ms), ``total_ios``, ``short_ios``, ``drop_ios``,
``slat_ns``, ``clat_ns`` and ``lat_ns`` (``min``, ``max``, ``mean``, ``stddev``, ``N``;
``clat_ns`` and ``lat_ns`` with ``percentile`` at fio's default list, keys formatted
as fio does, ``"99.000000"``), and ``sync`` (``total_ios``, ``lat_ns``) for
fsync/fdatasync jobs; ``disk_util`` per block device (``name``, ``read_ios``,
``write_ios``, ``read_merges``, ``write_merges``, ``read_ticks``, ``write_ticks``,
``in_queue``, ``util``).

What the numbers are: the same measured interval and counts as the run's ``fio.*``
columns (``iops`` equals ``fio.read_iops`` / ``fio.write_iops``); ``clat_ns`` is the
model's submit-to-completion time. The simulated job spends no time in submission
(``slat_ns`` is 0), so ``lat_ns`` = ``clat_ns``. Percentiles are exact order
statistics of the samples (fio approximates them from a log-linear histogram);
``numjobs`` clones are reported as one job (fio's ``group_reporting``). Not written:
CPU usage, bandwidth/IOPS sampling statistics (``bw_min`` ...), ``iodepth_level`` and
``latency_ns`` buckets.
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


def _stats(ns: np.ndarray, percentiles: bool) -> dict:
    n = int(ns.size)
    out = {"min": int(ns.min()) if n else 0, "max": int(ns.max()) if n else 0,
           "mean": float(ns.mean()) if n else 0.0, "stddev": float(ns.std()) if n > 1 else 0.0,
           "N": n}
    if percentiles:
        vals = (np.percentile(ns, PERCENTILES, method="inverted_cdf") if n
                else np.zeros(len(PERCENTILES)))
        out["percentile"] = {f"{p:.6f}": int(v) for p, v in zip(PERCENTILES, vals)}
    return out


def _direction(ns: np.ndarray, io_bytes: int, secs: float) -> dict:
    runtime_ms = int(round(secs * 1000))
    clat = _stats(ns, True)
    return {
        "io_bytes": int(io_bytes), "io_kbytes": int(io_bytes // 1024),
        "bw_bytes": int(io_bytes / secs) if secs > 0 else 0,
        "bw": int(io_bytes / 1024 / secs) if secs > 0 else 0,
        "iops": ns.size / secs if secs > 0 else 0.0,
        "runtime": runtime_ms if ns.size else 0,
        "total_ios": int(ns.size), "short_ios": 0, "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": clat,
        "lat_ns": dict(clat),
    }


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


def report(job, jobname: str, device: str, options: dict) -> dict:
    """fio's JSON document of a finished ``models.workload.fio.FioJob``."""
    res = job.results()
    secs = res["runtime_s"]
    lat = {op: np.frombuffer(job.lat[op].samples, dtype=np.int64) for op in (READ, WRITE)}
    entry = {
        "jobname": jobname, "groupid": 0, "error": 0, "eta": 0, "elapsed": int(np.ceil(secs)),
        "job options": {k: str(v) for k, v in options.items()},
        "read": _direction(lat[READ], job.bytes_done[READ], secs),
        "write": _direction(lat[WRITE], job.bytes_done[WRITE], secs),
        "trim": _direction(np.zeros(0, dtype=np.int64), 0, secs),
        "sync": {"total_ios": len(job.sync_lat),
                 "lat_ns": _stats(np.frombuffer(job.sync_lat.samples, dtype=np.int64), True)},
        "job_runtime": int(round(secs * 1000)),
    }
    # the run's own values, to the last bit (fio.read_iops / fio.write_iops)
    entry["read"]["iops"] = res["read_iops"]
    entry["write"]["iops"] = res["write_iops"]
    now = time.time()
    return {
        "fio version": VERSION, "timestamp": int(now), "timestamp_ms": int(now * 1000),
        "time": time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)),
        "global options": {}, "jobs": [entry],
        "disk_util": [_disk_util(device, job.iostat(), secs)],
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
        opts = dict(jf.options) if jf is not None else asdict(self.job.cfg)
        opts["filename"] = f"/dev/{device}"
        doc = report(self.job, jf.name if jf is not None else "fio", device, opts)
        return {FILE: (json.dumps(doc, indent=2) + "\n").encode()}
