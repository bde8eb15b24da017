"""iostat -x accounting, computed the way the kernel counts and sysstat derives.

The kernel keeps, per block device (``/proc/diskstats``): completed requests, merged
bios, sectors and total request time (submit-to-completion) per direction; the number
of requests in flight; ``io_ticks`` (time with at least one request in flight) and
``time_in_queue`` (the integral of in-flight requests over time). sysstat's ``iostat
-x`` turns two snapshots into:

    r/s, w/s      completed requests / interval
    rrqm/s wrqm/s merged bios / interval
    rMB/s wMB/s   sectors * 512 / 2**20 / interval
    avgrq-sz      sectors / requests            (in 512-byte sectors)
    avgqu-sz      time_in_queue / interval
    await         request time / requests       (ms; also r_await, w_await)
    %util         io_ticks / interval * 100
    svctm         %util / (r/s + w/s) * 10      (ms; derived, not measured)

so ``(r/s + w/s) * svctm == %util * 10`` always holds. Flushes are counted apart
(``f/s``, as newer kernels do) and are not part of r/s, w/s or svctm.

sysstat 12 renamed and added columns; the ones that are new quantities are here too:

    rkB/s wkB/s   sectors * 512 / 1024 / interval
    %rrqm %wrqm   merged / (merged + completed) * 100, per direction
    rareq-sz      read sectors / reads / 2      (kB; wareq-sz for writes)
    f_await       flush request time / flushes  (ms)
    aqu-sz        = avgqu-sz (same quantity, new name; no column of its own)

``svctm`` and ``avgrq-sz`` are gone from sysstat 12's output; ``pipeline.iostat``
prints either layout.

Column names use ``_s`` for ``/s`` and ``_pct`` for ``%`` so they stay plain SQL
identifiers: ``r_s``, ``rrqm_s``, ``rMB_s``, ``avgrq_sz``, ``avgqu_sz``, ``await_ms``,
``svctm_ms``, ``util_pct``.
"""
from __future__ import annotations

from ..device.request import FLUSH, READ, SECTOR_BYTES, WRITE

IOSTAT_COLUMNS = ("rrqm_s", "wrqm_s", "r_s", "w_s", "f_s", "rMB_s", "wMB_s", "avgrq_sz",
                  "avgqu_sz", "await_ms", "r_await_ms", "w_await_ms", "svctm_ms", "util_pct",
                  "rkB_s", "wkB_s", "rrqm_pct", "wrqm_pct", "rareq_sz", "wareq_sz",
                  "f_await_ms")


class IostatCounters:
    """The ``/proc/diskstats`` counters of one block device."""

    __slots__ = ("ios", "merges", "sectors", "ticks_ns", "in_flight", "io_ticks_ns",
                 "time_in_queue_ns", "last_ns")

    def __init__(self) -> None:
        self.ios = [0, 0, 0]        # read, write, flush
        self.merges = [0, 0, 0]
        self.sectors = [0, 0, 0]
        self.ticks_ns = [0, 0, 0]
        self.in_flight = 0
        self.io_ticks_ns = 0
        self.time_in_queue_ns = 0
        self.last_ns = 0

    def _advance(self, now_ns: int) -> None:
        dt = now_ns - self.last_ns
        if dt and self.in_flight:
            self.io_ticks_ns += dt
            self.time_in_queue_ns += dt * self.in_flight
        self.last_ns = now_ns

    def start(self, now_ns: int) -> None:
        """A request was allocated (it now counts as in flight)."""
        # _advance, inline: this and ``done`` run once per request
        dt = now_ns - self.last_ns
        if dt and self.in_flight:
            self.io_ticks_ns += dt
            self.time_in_queue_ns += dt * self.in_flight
        self.last_ns = now_ns
        self.in_flight += 1

    def absorbed(self, now_ns: int) -> None:
        """A queued request was merged into another one and freed (not completed)."""
        self._advance(now_ns)
        self.in_flight -= 1

    def merge(self, op: int) -> None:
        self.merges[op] += 1

    def done(self, op: int, size_bytes: int, start_ns: int, now_ns: int) -> None:
        dt = now_ns - self.last_ns     # _advance, inline
        if dt and self.in_flight:
            self.io_ticks_ns += dt
            self.time_in_queue_ns += dt * self.in_flight
        self.last_ns = now_ns
        self.in_flight -= 1
        self.ios[op] += 1
        self.sectors[op] += size_bytes // SECTOR_BYTES
        self.ticks_ns[op] += now_ns - start_ns

    def snapshot(self, now_ns: int) -> tuple:
        self._advance(now_ns)
        return (now_ns, tuple(self.ios), tuple(self.merges), tuple(self.sectors),
                tuple(self.ticks_ns), self.io_ticks_ns, self.time_in_queue_ns)


def iostat_between(before: tuple, after: tuple) -> dict:
    """The ``iostat -x`` row for the interval between two ``snapshot`` tuples."""
    t0, ios0, mrg0, sec0, tck0, iot0, tiq0 = before
    t1, ios1, mrg1, sec1, tck1, iot1, tiq1 = after
    itv_s = (t1 - t0) / 1e9
    if itv_s <= 0:
        return {c: 0.0 for c in IOSTAT_COLUMNS}
    n = [ios1[i] - ios0[i] for i in range(3)]
    sectors = [sec1[i] - sec0[i] for i in range(3)]
    ticks_ms = [(tck1[i] - tck0[i]) / 1e6 for i in range(3)]
    merged = [mrg1[i] - mrg0[i] for i in range(3)]
    nrw = n[READ] + n[WRITE]
    util_pct = (iot1 - iot0) / 1e9 / itv_s * 100.0
    tput = nrw / itv_s

    def pct(m: int, k: int) -> float:
        return 100.0 * m / (m + k) if m + k else 0.0

    return {
        "rrqm_s": merged[READ] / itv_s,
        "wrqm_s": merged[WRITE] / itv_s,
        "r_s": n[READ] / itv_s,
        "w_s": n[WRITE] / itv_s,
        "f_s": n[FLUSH] / itv_s,
        "rMB_s": sectors[READ] * SECTOR_BYTES / 2**20 / itv_s,
        "wMB_s": sectors[WRITE] * SECTOR_BYTES / 2**20 / itv_s,
        "avgrq_sz": (sectors[READ] + sectors[WRITE]) / nrw if nrw else 0.0,
        "avgqu_sz": (tiq1 - tiq0) / 1e9 / itv_s,
        "await_ms": (ticks_ms[READ] + ticks_ms[WRITE]) / nrw if nrw else 0.0,
        "r_await_ms": ticks_ms[READ] / n[READ] if n[READ] else 0.0,
        "w_await_ms": ticks_ms[WRITE] / n[WRITE] if n[WRITE] else 0.0,
        "svctm_ms": util_pct * 10.0 / tput if tput else 0.0,
        "util_pct": util_pct,
        "rkB_s": sectors[READ] * SECTOR_BYTES / 1024 / itv_s,
        "wkB_s": sectors[WRITE] * SECTOR_BYTES / 1024 / itv_s,
        "rrqm_pct": pct(merged[READ], n[READ]),
        "wrqm_pct": pct(merged[WRITE], n[WRITE]),
        "rareq_sz": sectors[READ] * SECTOR_BYTES / 1024 / n[READ] if n[READ] else 0.0,
        "wareq_sz": sectors[WRITE] * SECTOR_BYTES / 1024 / n[WRITE] if n[WRITE] else 0.0,
        "f_await_ms": ticks_ms[FLUSH] / n[FLUSH] if n[FLUSH] else 0.0,
    }
