"""A fio job group against a block device (``direct=1``): ``FioJob`` runs ``numjobs``
jobs, each keeping ``iodepth`` I/Os in flight (``_Job``), or pausing for think time,
rate caps and syncs (``_PacedJob``); the options are ``FioConfig``'s (``config.py``),
the package's docstring says what each does."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...block import BlockQueue
from ...device.request import FLUSH, READ, WRITE, IORequest
from ...metrics.latency import LatencyRecorder
from ...sim import Simulator
from .config import SYNC_ENGINES, FioConfig
from .offsets import Offsets, byte_limit, io_limit
from .pace import Pace
from .stats import FioGroup


class _Job:
    """One fio job: keeps ``iodepth`` I/Os in flight against one block queue."""

    def __init__(self, fio: "FioJob", index: int, rng: np.random.Generator) -> None:
        cfg = fio.cfg
        self.fio = fio
        self.index = index
        self.rng = rng
        self.region_start = fio.offset_bytes + index * fio.increment_bytes
        self.offsets = Offsets(cfg, fio.size_bytes, rng)
        self._draw = self.offsets.next
        sync_engine = cfg.ioengine in SYNC_ENGINES
        self.iodepth = 1 if sync_engine else cfg.iodepth
        self.batch = 1 if sync_engine else cfg.iodepth_batch_submit
        self.complete_min = 1 if sync_engine else cfg.iodepth_batch_complete_min
        # fio's low water mark: a full queue is refilled once it has drained to it
        # (init.c: 0 or above iodepth is iodepth - refilled at every reap)
        low = cfg.iodepth_low
        self.low = self.iodepth if not low or low > self.iodepth else low
        self.in_flight = 0
        # an asynchronous engine's io_submit that sleeps (no request free) delays its
        # I/Os' issue time: fio's slat (a synchronous engine's sleep is in its call, clat)
        self.timed_submit = not sync_engine
        self.call: Sequence[IORequest] = ()      # the bios of the sleeping io_submit
        self.early: list[IORequest] = []        # ... completed before it returned
        self.depth_ios = [0] * (self.iodepth + 1)   # I/Os issued at each depth (io_u_map)
        self.reaped = 0          # completions since the last refill
        self.issued = 0
        self.limit = io_limit(cfg, fio.size_bytes)
        self.byte_limit = byte_limit(cfg, fio.size_bytes)
        self.issued_bytes = 0
        self.blocked = False
        # O_SYNC / O_DSYNC writes (fio sync=) as the kernel's device node sends them
        # (BlockConfig.blkdev_sync; unset: 2.6.18's, nothing)
        mode = fio.blkdev_sync
        dsync = bool(cfg.o_sync) and mode != "none"
        self.fua_op = WRITE if dsync and mode == "fua" else -1   # writes carry FUA
        self.flush_after_write = dsync and sync_engine    # generic_write_sync's FLUSH
        self.flush_at_submit = dsync and mode == "flush" and not sync_engine
        self.end_sync = cfg.end_fsyncs
        self._submit = fio.queue.submit

    def exhausted(self) -> bool:
        """Has the job issued all it issues (``number_ios``, or its passes over the
        region: in I/Os, or in bytes when its sizes vary)?"""
        return ((self.limit is not None and self.issued >= self.limit)
                or (self.byte_limit is not None and self.issued_bytes >= self.byte_limit))

    def refill(self) -> None:
        """Queue new I/Os up to iodepth, submitting in batches of iodepth_batch_submit."""
        fio = self.fio
        if self.blocked or fio.stopping:
            return
        self.reaped = 0
        iodepth, batch, limit = self.iodepth, self.batch, self.limit
        submit, draw, start = self._submit, self._draw, self.region_start
        blimit = self.byte_limit
        fua_op = self.fua_op
        if batch == 1:      # one bio per io_submit: no list, no plug
            on_done, index, depth_ios = self.on_done, self.index, self.depth_ios
            while self.in_flight < iodepth:
                if limit is not None and self.issued >= limit:
                    return
                if blimit is not None and self.issued_bytes >= blimit:
                    return
                op, off, nbytes = draw()
                self.in_flight += 1
                self.issued += 1
                self.issued_bytes += nbytes
                depth_ios[self.in_flight] += 1
                bio = IORequest(op, start + off, nbytes, on_done, True, op == fua_op, index)
                gate = submit(bio)
                if gate is not None:
                    self._wait(gate, (bio,))
                    return
            return
        while self.in_flight < iodepth:
            room = iodepth - self.in_flight
            n = batch if batch < room else room
            if limit is not None:
                left = limit - self.issued
                if left <= 0:
                    return
                if left < n:
                    n = left
            if blimit is not None and self.issued_bytes >= blimit:
                return
            if n < batch and room >= batch:
                return
            bios = []
            for _ in range(n):
                op, off, nbytes = draw()
                self.issued_bytes += nbytes
                bios.append(IORequest(op, start + off, nbytes, self.on_done, True,
                                      op == fua_op, self.index))
                if blimit is not None and self.issued_bytes >= blimit:
                    break
            n = len(bios)
            self.in_flight += n
            self.issued += n
            self.depth_ios[self.in_flight] += n
            gate = submit(bios[0] if n == 1 else bios, n > 1)
            if gate is not None:
                self._wait(gate, bios)
                return

    def _wait(self, gate, bios: Sequence[IORequest]) -> None:
        """The block layer has no request free: the ``io_submit`` call sleeps until its
        bios are queued. An asynchronous engine's bios are issued when it returns
        (``IORequest.tag``: -1 while it sleeps, then the time it returned)."""
        self.blocked = True
        if self.timed_submit:
            for b in bios:
                b.tag = -1
            self.call = bios
        gate.add_callback(self._unblocked)

    def _unblocked(self, _value) -> None:
        self.blocked = False
        if self.call and not self.in_sync_call():
            self.call_returned()
        self.refill()

    def in_sync_call(self) -> bool:
        """Is the job inside an O_SYNC write's ``io_submit`` that waits for its FLUSH
        (``_PacedJob``)?"""
        return False

    def call_returned(self) -> None:
        """The ``io_submit`` whose bios are ``call`` returns now: they are issued now;
        those that completed meanwhile are counted (clat 0)."""
        now = self.fio.sim.now_ns
        for b in self.call:
            b.tag = now
        self.call = ()
        for b in self.early:        # reaped once the call has returned: clat 0
            self._count_issued(b, now)
        self.early = []

    def _count_issued(self, bio: IORequest, issued: int) -> None:
        """Count a bio whose ``io_submit`` slept: its clat from the call's return (or 0
        when it completed before), its slat up to it (``FioJob.slat``, sparse)."""
        fio, op = self.fio, bio.op
        samples = fio.lat[op].samples
        samples.append(bio.done_ns - issued if bio.done_ns > issued else 0)
        fio.slat[op].append((len(samples) - 1, issued - bio.submit_ns))

    def on_done(self, bio: IORequest) -> None:
        fio = self.fio
        self.in_flight -= 1
        self.reaped += 1
        if bio.submit_ns >= fio.measure_from_ns:
            op = bio.op
            issued = bio.tag
            if issued is None:          # issued as submitted: clat from there, slat 0
                fio.lat[op].samples.append(bio.done_ns - bio.submit_ns)  # LatencyRecorder.add
            elif issued < 0:            # its io_submit still sleeps
                self.early.append(bio)
            else:
                self._count_issued(bio, issued)
            fio.bytes_done[op] += bio.size_bytes
        if (self.reaped >= self.complete_min and self.in_flight <= self.low) or not self.in_flight:
            self.refill()
        if not self.in_flight:
            self.end_if_done()

    def end_if_done(self) -> None:
        """Nothing in flight and nothing more to issue: the job ends - after its
        ``end_fsync`` when it has one (fio's ``fio_file_fsync`` once the I/O loop
        drained, inside the job's runtime)."""
        fio = self.fio
        if self.in_flight or not (fio.stopping or self.exhausted()):
            return
        if self.end_sync:
            self.end_sync = False
            self.in_flight += 1
            fio.fsync_device(self.index, self._end_synced)
            return
        fio.job_finished()

    def _end_synced(self, _flush: IORequest) -> None:
        self.in_flight -= 1
        self.fio.job_finished()


class _PacedJob(_Job):
    """A job with think time, a rate cap, periodic syncs or O_SYNC writes
    (``models.workload.fio.pace``): the same loop, issuing at most what the pace allows
    now. A job whose O_SYNC writes are synced when submitted issues one I/O at a time
    until a write makes it wait for its FLUSH."""

    def __init__(self, fio: "FioJob", index: int, rng: np.random.Generator) -> None:
        super().__init__(fio, index, rng)
        self.pace = Pace(self, fio.cfg)
        self.max_depth = self.iodepth
        self._draw = self._paced_draw
        if self.flush_at_submit:
            self._submit = self._submit_o_sync

    def _submit_o_sync(self, bio: IORequest, plug: bool = False):
        """2.6.32-3.10: an O_SYNC write's ``io_submit`` queues the write, then
        ``generic_write_sync`` sends a FLUSH and waits for it (``Pace``), and only then
        returns: the write is issued then (fio's slat is the wait, its clat runs from the
        return - 0 if it completed before)."""
        if bio.op == WRITE:
            bio.tag = -1
            self.call = (bio,)
        return self.fio.queue.submit(bio, plug)

    def in_sync_call(self) -> bool:
        return self.pace.submit_sync

    def refill(self) -> None:
        while True:
            if self.blocked or self.fio.stopping:
                return
            allowed = self.pace.allowance()
            if allowed <= 0:
                return
            issued = self.issued
            self.iodepth = min(self.max_depth, self.in_flight + allowed)
            try:
                super().refill()
            finally:
                self.iodepth = self.max_depth
            if not self.blocked:
                self.pace.issued_all_due()
            if not self.flush_at_submit or self.issued == issued:
                return

    def _paced_draw(self) -> tuple[int, int, int]:
        """The drawn direction as the pace lets it go (a rate cap may switch it), and
        the offset and size of an I/O of the direction it goes in."""
        op = self.pace.issue(self.offsets.direction())
        off, nbytes = self.offsets.offset(op)
        self.pace.issued(op, nbytes)
        return op, off, nbytes

    def on_done(self, bio: IORequest) -> None:
        if self.flush_after_write and bio.op == WRITE:
            # a synchronous O_SYNC write returns once the FLUSH that follows it has
            self.fio.fsync_device(self.index, lambda f, bio=bio: self._write_synced(bio, f))
            return
        self.pace.completed(bio)
        super().on_done(bio)

    def _write_synced(self, bio: IORequest, flush: IORequest) -> None:
        bio.done_ns = flush.done_ns
        self.pace.completed(bio)
        super().on_done(bio)


class FioJob(FioGroup):
    """A group of ``numjobs`` jobs with the same options against one block queue."""

    def __init__(self, sim: Simulator, cfg: FioConfig, queue: BlockQueue,
                 rng: np.random.Generator) -> None:
        if not cfg.direct:
            raise ValueError("direct: the block-device fio job is direct=1 (buffered=0); "
                             "direct=0 runs on a filesystem (models.workload.fio.buffered)")
        capacity = queue.device.capacity_bytes
        self.offset_bytes, self.size_bytes = cfg.region(capacity)
        self.increment_bytes = cfg.increment(capacity)
        end = self.offset_bytes + (cfg.numjobs - 1) * self.increment_bytes + self.size_bytes
        if end > capacity:
            raise ValueError(f"size: offset + (numjobs - 1) x offset_increment + size ({end} "
                             f"bytes) exceeds device {queue.device.name!r} ({capacity} bytes)")
        self.sim = sim
        self.cfg = cfg
        self.queue = queue
        self.blkdev_sync = queue.cfg.blkdev_sync or "none"    # unset: 2.6.18's
        self.lat = {READ: LatencyRecorder(), WRITE: LatencyRecorder()}   # clat
        # slat of the I/Os whose io_submit slept: (index into lat's samples, ns); every
        # other I/O's is 0
        self.slat: dict[int, list[tuple[int, int]]] = {READ: [], WRITE: []}
        self.bytes_done = {READ: 0, WRITE: 0}
        self.stopping = False
        self.running = 0
        self.ramp_ns = int(cfg.ramp_time_s * 1e9)
        self.runtime_ns = int(cfg.runtime_s * 1e9)      # measured, after the ramp
        self.measure_from_ns = self.ramp_ns
        seeds = rng.bit_generator.seed_seq.spawn(cfg.numjobs) if hasattr(rng.bit_generator, "seed_seq") else None
        job_cls = _Job if cfg.plain else _PacedJob
        self.jobs = [job_cls(self, j, np.random.default_rng(seeds[j]) if seeds else rng)
                     for j in range(cfg.numjobs)]
        self.started_ns = 0
        self.finished_ns: int | None = None
        self._iostat_from: tuple | None = None
        self.sync_lat = LatencyRecorder()      # fsync/fdatasync: drain + FLUSH

    def start(self, genesis_ns: int | None = None) -> None:
        """Start the jobs, after ``startdelay``: counted from ``genesis_ns`` when given
        (fio's start, for a job that waited for a stonewall: ``run_threads`` starts a job
        once ``utime_since_genesis`` has passed its delay), else from now."""
        delay_ns = int(self.cfg.startdelay_s * 1e9)
        if genesis_ns is not None:
            delay_ns = max(0, genesis_ns + delay_ns - self.sim.now_ns)
        if delay_ns:
            self.measure_from_ns = self.sim.now_ns + delay_ns + self.ramp_ns
            self.sim.after(delay_ns, self._start_now)
        else:
            self._start_now()

    def _start_now(self, _arg=None) -> None:
        self.running = len(self.jobs)
        self.started_ns = self.sim.now_ns
        self.measure_from_ns = self.started_ns + self.ramp_ns
        self._iostat_from = self.queue.snapshot()
        if self.ramp_ns:    # without a ramp the measured interval starts with the job
            self.sim.at(self.measure_from_ns, self._begin_measure)
        # fio: runtime counts from the ramp's end (reset_all_stats resets td->epoch)
        self.sim.at(self.measure_from_ns + self.runtime_ns, self.runtime_over)
        for job in self.jobs:
            job.refill()

    def _begin_measure(self, _arg=None) -> None:
        self._iostat_from = self.queue.snapshot()
        self.measure_from_ns = self.sim.now_ns
        for job in self.jobs:
            job.depth_ios = [0] * len(job.depth_ios)

    def submit_latencies(self):
        return None if self.cfg.ioengine in SYNC_ENGINES else self.slat

    def jobs_stop(self) -> None:
        for job in self.jobs:
            job.end_if_done()

    def fsync_device(self, issuer: int, on_done) -> None:
        """``fsync(2)`` of the block device: a FLUSH from 2.6.32 (``on_done`` gets it at
        its completion), nothing before (``BlockConfig.blkdev_sync`` none: ``on_done``
        at once, with a request that took no time)."""
        flush = IORequest(FLUSH, 0, 0, on_done, True, False, issuer)
        if self.blkdev_sync == "none":
            flush.submit_ns = flush.done_ns = self.sim.now_ns
            self.sim.at(self.sim.now_ns, on_done, flush)
            return
        # with nr_requests exhausted the FLUSH waits in the queue; nothing else to hold
        self.queue.submit(flush)

    def job_finished(self) -> None:
        self.running -= 1
        if self.running == 0 and self.finished_ns is None:
            self._stop()
