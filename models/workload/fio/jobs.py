"""Several fio jobs of one job file against one block device, as fio runs them.

Modelled (fio's HOWTO, ``stonewall`` and ``new_group``; backend.c ``run_threads``):

- Every job is a ``models.workload.fio.FioJob`` with its own options (its ``numjobs``
  clones, its region, its pace), all submitting to the same block queue: jobs
  without a ``stonewall`` between them run at the same time and share the device.
- A job with ``stonewall`` starts once every job above it in the file has ended: its
  runtime over and its I/Os in flight reaped (fio's ``do_io``), or its ``size`` /
  ``number_ios`` done.
- A ``stonewall`` or ``new_group`` job starts a new reporting group (fio's
  ``groupid``); ``fio.json`` has one ``jobs[]`` entry per job with its ``groupid``.

Results: every job's summary under ``job<i>.`` (its index in the file, from 0:
``job1.write_iops``), and the totals of the run: all jobs' I/Os over the span from
the first job's measured start to the last job's end (for one group of jobs with the
same runtime, the sum of their IOPS).

A job's ``startdelay`` counts from the start of the file's run, as fio counts it (fio's
genesis; backend.c ``run_threads``): a job behind a stonewall starts when the jobs
above it have ended or when its delay is over, whichever is later.

Not modelled: ``wait_for``, ``exitall`` / ``exitall_on_error``, jobs on different
devices (every job of the file runs on the device of ``filename``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...device.request import READ, WRITE
from ...metrics.latency import LatencyRecorder
from .job import FioConfig, FioJob
from .stats import summarize


@dataclass(frozen=True)
class FioJobsConfig:
    jobs: tuple[FioConfig, ...] = (FioConfig(),)
    names: tuple[str, ...] = ("job0",)
    groups: tuple[int, ...] = (0,)          # fio's groupid of each job
    stonewall: tuple[bool, ...] = (False,)  # the job waits for every job above it

    def __post_init__(self) -> None:
        n = len(self.jobs)
        if n < 1:
            raise ValueError("jobs: at least one job")
        for key in ("names", "groups", "stonewall"):
            if len(getattr(self, key)) != n:
                raise ValueError(f"{key}: one per job ({n}), got {len(getattr(self, key))}")
        if any(not j.direct for j in self.jobs):
            raise ValueError("jobs: several jobs in one file run with direct=1 only "
                             "(buffered jobs run one per file)")
        if list(self.groups) != sorted(self.groups) or self.groups[0] != 0:
            raise ValueError(f"groups: group ids start at 0 and never decrease, got "
                             f"{list(self.groups)}")


class _Member(FioJob):
    """A job of the file: its end is reported to the file's runner, not the run's."""

    def __init__(self, runner: "FioJobs", index: int, *args) -> None:
        super().__init__(*args)
        self.runner = runner
        self.index = index

    def stopped(self) -> None:
        self.runner.ended(self)


class FioJobs:
    """The jobs of one job file, started phase by phase (a phase ends at a stonewall)."""

    def __init__(self, sim, cfg: FioJobsConfig, queue, rng: np.random.Generator) -> None:
        self.sim, self.cfg, self.queue = sim, cfg, queue
        seeds = rng.bit_generator.seed_seq.spawn(len(cfg.jobs))
        self.members = [_Member(self, i, sim, jc, queue, np.random.default_rng(seeds[i]))
                        for i, jc in enumerate(cfg.jobs)]
        self.phases: list[list[_Member]] = []
        for m, wall in zip(self.members, cfg.stonewall):
            if wall or not self.phases:
                self.phases.append([])
            self.phases[-1].append(m)
        self.phase = -1
        self.ended_jobs: set[int] = set()
        self.started_ns = 0
        self.finished_ns: int | None = None
        self._iostat_from: tuple | None = None
        self._iostat: dict = {}

    def start(self) -> None:
        self.started_ns = self.sim.now_ns
        self._iostat_from = self.queue.snapshot()
        self._next_phase()

    def _next_phase(self) -> None:
        self.phase += 1
        if self.phase == len(self.phases):
            self.finished_ns = self.sim.now_ns
            self._iostat = self.queue.iostat(self._iostat_from)
            self.sim.stop()
            return
        for m in self.phases[self.phase]:
            m.start(self.started_ns)

    def ended(self, member: _Member) -> None:
        """A job's runtime is over (or its I/Os done); the next phase starts when every
        job of this one has ended."""
        if member.index in self.ended_jobs:
            return
        self.ended_jobs.add(member.index)
        if all(m.index in self.ended_jobs for m in self.phases[self.phase]):
            self._next_phase()

    @property
    def measure_from_ns(self) -> int:
        return min(m.measure_from_ns for m in self.members)

    def results(self) -> dict:
        if self.finished_ns is None:
            for m in self.members:
                if m.finished_ns is None:
                    m.finished_ns = self.sim.now_ns
            self.finished_ns = self.sim.now_ns
            self._iostat = self.queue.iostat(self._iostat_from)
        lat = {READ: LatencyRecorder(), WRITE: LatencyRecorder()}
        slat: dict = {READ: [], WRITE: []}
        sync = LatencyRecorder()
        for m in self.members:
            for op in (READ, WRITE):
                base = len(lat[op].samples)
                lat[op].samples.extend(m.lat[op].samples)
                slat[op].extend((base + i, ns) for i, ns in m.slat[op])
            sync.samples.extend(m.sync_lat.samples)
        secs = (self.finished_ns - self.measure_from_ns) / 1e9
        done = {op: sum(m.bytes_done[op] for m in self.members) for op in (READ, WRITE)}
        syncing = any(j.sync_every for j in self.cfg.jobs)
        timed = any(m.submit_latencies() is not None for m in self.members)
        out = summarize(secs, lat, done, sync if syncing else None, slat if timed else None)
        out["error"] = max(m.error for m in self.members)
        for m in self.members:
            out.update({f"job{m.index}.{k}": v for k, v in m.results().items()})
        return out

    def iostat(self) -> dict:
        if self.finished_ns is None:
            self.results()
        return self._iostat
