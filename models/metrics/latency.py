"""Latency samples and the summary statistics experiments report.

Samples are integer nanoseconds appended to a compact ``array('q')`` (cheap on the hot
path); ``summary`` turns them into count, mean, p50/p90/p99/p99.9, max and the count
above a threshold, in milliseconds.
"""
from __future__ import annotations

from array import array

import numpy as np


class LatencyRecorder:
    __slots__ = ("samples",)

    def __init__(self) -> None:
        self.samples = array("q")

    def add(self, latency_ns: int) -> None:
        self.samples.append(latency_ns)

    def __len__(self) -> int:
        return len(self.samples)

    def summary(self, prefix: str = "lat", slow_ms: float = 1.0) -> dict:
        return latency_summary(np.frombuffer(self.samples, dtype=np.int64), prefix, slow_ms)


def latency_summary(samples_ns: np.ndarray, prefix: str = "lat", slow_ms: float = 1.0) -> dict:
    """``{prefix}_mean_ms``, ``_p50_ms``, ``_p90_ms``, ``_p99_ms``, ``_p999_ms``, ``_max_ms``,
    ``_count`` and ``_over_{slow_ms}ms`` (calls slower than ``slow_ms``)."""
    n = int(samples_ns.size)
    out = {f"{prefix}_count": n}
    keys = ("mean", "p50", "p90", "p99", "p999", "max")
    if n == 0:
        out.update({f"{prefix}_{k}_ms": 0.0 for k in keys})
        out[f"{prefix}_over_{slow_ms:g}ms"] = 0
        return out
    ms = samples_ns / 1e6
    p50, p90, p99, p999 = np.percentile(ms, [50, 90, 99, 99.9])
    out.update({
        f"{prefix}_mean_ms": float(ms.mean()),
        f"{prefix}_p50_ms": float(p50),
        f"{prefix}_p90_ms": float(p90),
        f"{prefix}_p99_ms": float(p99),
        f"{prefix}_p999_ms": float(p999),
        f"{prefix}_max_ms": float(ms.max()),
        f"{prefix}_over_{slow_ms:g}ms": int((ms > slow_ms).sum()),
    })
    return out
