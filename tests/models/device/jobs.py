"""Closed-loop fio-like jobs straight against a Device (no block layer), for device tests.

``run_job(sim, dev, rw, bs, iodepth, n)`` keeps ``iodepth`` commands outstanding until
``n`` have completed; ``rw`` is fio's ``read``/``write``/``randread``/``randwrite``.
Returns IOPS, MB/s (1e6 bytes) and mean latency in us over the job's own interval.
``on_submit(req)`` / ``on_done(req)``, if given, see each command as it is submitted and
as it completes (before the next one is issued): a test's probe of the device's state.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.device.request import READ, WRITE, IORequest


@dataclass
class JobResult:
    iops: float
    mb_s: float
    lat_us: float
    elapsed_ns: int


def run_job(sim, dev, rw: str, bs: int, iodepth: int, n: int, span_bytes: int | None = None,
            offset_bytes: int = 0, seed: int = 1, fua: bool = False,
            on_submit=None, on_done=None) -> JobResult:
    rng = np.random.default_rng(seed)
    span = (span_bytes if span_bytes is not None else dev.capacity_bytes - offset_bytes) // bs
    op = READ if "read" in rw else WRITE
    rand = rw.startswith("rand")
    state = {"issued": 0, "done": 0, "pos": 0, "lat": 0}
    t0 = sim.now_ns

    def issue() -> None:
        if state["issued"] >= n:
            return
        state["issued"] += 1
        if rand:
            k = int(rng.integers(0, span))
        else:
            k = state["pos"]
            state["pos"] = (k + 1) % span
        req = IORequest(op, offset_bytes + k * bs, bs, fua=fua)
        req.submit_ns = sim.now_ns
        dev.submit(req)
        if on_submit is not None:
            on_submit(req)

    def done(req) -> None:
        state["done"] += 1
        state["lat"] += req.done_ns - req.submit_ns
        if on_done is not None:
            on_done(req)
        issue()

    old = dev.on_complete
    dev.on_complete = done
    for _ in range(iodepth):
        issue()
    sim.run()
    dev.on_complete = old
    el = sim.now_ns - t0
    return JobResult(n / el * 1e9, n * bs / el * 1e3, state["lat"] / n / 1e3, el)
