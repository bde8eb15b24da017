"""The fio-style summary of a job group (``models.workload.fio``, ``fio_buffered``):
IOPS, MB/s and latency percentiles per direction over the measured interval, the
sync calls' latencies for ``fsync`` / ``fdatasync`` jobs, and the totals."""
from __future__ import annotations

from ..device.request import READ, WRITE


def summarize(secs: float, lat: dict, bytes_done: dict, sync_lat=None) -> dict:
    """``lat`` / ``bytes_done``: per direction (``READ``, ``WRITE``) the latency recorder
    and the bytes completed in the measured ``secs``; ``sync_lat``: the recorder of
    fsync / fdatasync calls when the job makes them (None: it makes none)."""
    out: dict = {"runtime_s": secs}
    total_ios = total_bytes = 0
    for op, name in ((READ, "read"), (WRITE, "write")):
        n = len(lat[op])
        total_ios += n
        total_bytes += bytes_done[op]
        out[f"{name}_iops"] = n / secs if secs > 0 else 0.0
        out[f"{name}_MB_s"] = bytes_done[op] / 2**20 / secs if secs > 0 else 0.0
        out.update(lat[op].summary(prefix=f"{name}_clat"))
    if sync_lat is not None:
        out["sync_count"] = len(sync_lat)
        out.update(sync_lat.summary(prefix="sync_lat"))
    out["iops"] = total_ios / secs if secs > 0 else 0.0
    out["MB_s"] = total_bytes / 2**20 / secs if secs > 0 else 0.0
    return out
