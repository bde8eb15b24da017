"""What pauses a fio job's issuing (``models.workload.fio``): ``thinktime`` /
``thinktime_blocks``, ``rate_iops`` and periodic ``fsync`` / ``fdatasync``.

- think time: after every ``thinktime_blocks`` completions the job issues nothing for
  ``thinktime_us`` (its I/Os in flight complete meanwhile);
- rate: the job's k-th I/O is issued no earlier than k / ``rate_iops`` seconds after
  its first (fio's rate: sleep until the I/O is due);
- sync: once ``fsync`` (or ``fdatasync``) writes have been issued since the last sync,
  the job waits until its I/Os in flight completed (as fio's asynchronous engines
  quiesce before a sync), submits a FLUSH of the block device and waits for it. The
  time from submitting the FLUSH to its completion is the sync latency.
"""
from __future__ import annotations

import math

from ..device.request import FLUSH, IORequest


class Pace:
    """What pauses a job's issuing: think time, the rate cap, periodic syncs."""

    def __init__(self, job, cfg) -> None:
        self.job = job
        self.think_ns = int(round(cfg.thinktime_us * 1000))
        self.think_blocks = cfg.thinktime_blocks
        self.rate_ns = 1e9 / cfg.rate_iops if cfg.rate_iops else 0.0
        self.sync_every = cfg.sync_every
        self.since_think = 0
        self.thinking = False
        self.writes = 0              # since the last sync
        self.syncing = False         # a sync is due (or its FLUSH in flight)
        self.wake_at = -1            # a refill scheduled by the rate cap
        self.t0 = None

    def allowance(self) -> int:
        """How many I/Os the job may issue now (0: none; it is woken up later)."""
        job = self.job
        sim = job.fio.sim
        if self.t0 is None:
            self.t0 = sim.now_ns
        if self.thinking:
            return 0
        if self.syncing:
            if job.in_flight == 0:
                self._flush()
            return 0
        allowed = job.max_depth
        if self.sync_every:
            allowed = min(allowed, self.sync_every - self.writes)
        if self.rate_ns:
            wake = self.t0 + math.ceil(job.issued * self.rate_ns)   # the next I/O is due
            if wake > sim.now_ns:
                if self.wake_at != wake:
                    self.wake_at = wake
                    sim.at(wake, self._wake)
                return 0
            due = int((sim.now_ns - self.t0) / self.rate_ns) + 1 - job.issued
            allowed = min(allowed, max(1, due))
        return allowed

    def wrote(self) -> None:
        """A write was drawn: the sync falls due after ``sync_every`` of them."""
        if self.sync_every:
            self.writes += 1
            if self.writes >= self.sync_every:
                self.syncing = True

    def completed(self) -> None:
        if self.think_ns:
            self.since_think += 1
            if self.since_think >= self.think_blocks:
                self.since_think = 0
                self.thinking = True
                self.job.fio.sim.after(self.think_ns, self._thought)

    def _thought(self, _arg=None) -> None:
        self.thinking = False
        self.job.refill()

    def _wake(self, _arg=None) -> None:
        self.wake_at = -1
        self.job.refill()

    def _flush(self) -> None:
        job = self.job
        job.in_flight += 1
        # with nr_requests exhausted the FLUSH waits in the queue; nothing else to hold
        job.fio.queue.submit(IORequest(FLUSH, 0, 0, self._synced, True, False, job.index))

    def _synced(self, bio: IORequest) -> None:
        job = self.job
        fio = job.fio
        job.in_flight -= 1
        if bio.submit_ns >= fio.measure_from_ns:
            fio.sync_lat.add(bio.done_ns - bio.submit_ns)
        self.writes = 0
        self.syncing = False
        job.refill()
        done = job.limit is not None and job.issued >= job.limit
        if job.in_flight == 0 and (fio.stopping or done):
            fio.job_finished()
