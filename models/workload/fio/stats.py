"""The fio-style summary of a job group (``job``, ``buffered``):
IOPS, MB/s and latency percentiles per direction over the measured interval, the
sync calls' latencies for ``fsync`` / ``fdatasync`` jobs, and the totals; and the
measured interval's end shared by both kinds of job group (``FioGroup``)."""
from __future__ import annotations

from ...device.request import READ, WRITE


def summarize(secs: float, lat: dict, bytes_done: dict, sync_lat=None, slat=None) -> dict:
    """``lat`` / ``bytes_done``: per direction (``READ``, ``WRITE``) the completion
    latency (clat) recorder and the bytes completed in the measured ``secs``;
    ``sync_lat``: the recorder of fsync / fdatasync calls when the job makes them (None:
    it makes none); ``slat``: per direction the submission latencies that are not 0,
    ``(index into lat's samples, ns)`` (an asynchronous engine's; None: a synchronous
    engine's job, which has none). With ``slat`` the summary has ``<dir>_slat_mean_ms``
    and ``<dir>_slat_max_ms`` (fio's total latency, ``lat``, is clat + slat)."""
    out: dict = {"runtime_s": secs}
    total_ios = total_bytes = 0
    for op, name in ((READ, "read"), (WRITE, "write")):
        n = len(lat[op])
        total_ios += n
        total_bytes += bytes_done[op]
        out[f"{name}_iops"] = n / secs if secs > 0 else 0.0
        out[f"{name}_MB_s"] = bytes_done[op] / 2**20 / secs if secs > 0 else 0.0
        out.update(lat[op].summary(prefix=f"{name}_clat"))
        if slat is not None:
            vals = [ns for _, ns in slat[op]]
            out[f"{name}_slat_mean_ms"] = sum(vals) / n / 1e6 if n else 0.0
            out[f"{name}_slat_max_ms"] = max(vals) / 1e6 if vals else 0.0
    if sync_lat is not None:
        out["sync_count"] = len(sync_lat)
        out.update(sync_lat.summary(prefix="sync_lat"))
    out["iops"] = total_ios / secs if secs > 0 else 0.0
    out["MB_s"] = total_bytes / 2**20 / secs if secs > 0 else 0.0
    return out


class FioGroup:
    """The end of a job group's measured interval. A subclass sets ``sim``, ``cfg``,
    ``queue``, ``lat``, ``bytes_done``, ``sync_lat``, ``measure_from_ns``,
    ``finished_ns`` (None while running), ``stopping`` and ``_iostat_from`` (the queue's
    snapshot at the measured start); ``error`` is fio's (EIO: a job missed its
    ``rate_min``)."""

    error = 0

    def runtime_over(self, _arg=None) -> None:
        """The runtime is over: the jobs issue nothing more, their I/Os in flight - and
        a synchronous engine's call in progress - complete and count, each job makes
        its ``end_fsync`` where it has one, and the measured interval ends when the
        last job has (fio's ``do_io`` leaves its loop, reaps what is in flight with
        ``io_u_queued_complete``, syncs, and the job's runtime counts to there;
        ``jobs_stop``: what the group does to wind its jobs down)."""
        self.stopping = True
        self.jobs_stop()

    def jobs_stop(self) -> None:
        """Wind the jobs down once ``stopping`` is set (a buffered job's thread sees it
        after its system call)."""

    def _stop(self, _arg=None) -> None:
        if self.finished_ns is None:
            self.finished_ns = self.sim.now_ns
            self._iostat = self.queue.iostat(self._iostat_from)
        self.stopping = True
        self.stopped()

    def stopped(self) -> None:
        """The job group is over: the run ends (``models.workload.fio.jobs`` waits for
        every group instead)."""
        self.sim.stop()

    def results(self) -> dict:
        """fio-style summary over the measured interval (after ramp_time)."""
        if self.finished_ns is None:
            self._stop()
        secs = (self.finished_ns - self.measure_from_ns) / 1e9
        out = summarize(secs, self.lat, self.bytes_done,
                        self.sync_lat if self.cfg.sync_every else None, self.submit_latencies())
        out["error"] = self.error
        return out

    def submit_latencies(self):
        """``summarize``'s ``slat`` (None: the jobs' engine is synchronous)."""
        return None

    def iostat(self) -> dict:
        """iostat of the group's queue over the measured interval."""
        if self.finished_ns is None:
            self._stop()
        return self._iostat
