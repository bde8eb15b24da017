"""fio with ``direct=0`` (``buffered=1``, fio's default): the job's I/O goes through a
filesystem and the page cache (``models.fs``), as ``read(2)`` / ``write(2)`` of a
file without ``O_DIRECT``.

Modelled, with the options of ``models.workload.fio.FioConfig``:

- Files: each of the ``numjobs`` jobs has its own file (fio's ``<jobname>.<job>.0``)
  of ``offset`` + ``size`` bytes on the filesystem, laid out before the run and not
  cached (fio lays the file out, then ``invalidate=1`` drops its pages); the job's
  I/O goes to ``[offset, offset + size)`` of its file (job j's starts ``j`` x
  ``offset_increment`` further, and its file is that much longer). A percentage
  size, offset or offset_increment is of the filesystem's device.
- Reads: ``pread`` through the page cache - a cached page is copied, a missing one
  read from the device (with the kernel's sequential read-ahead); the page cache's
  ``memory_bytes`` holds what it can, least recently used pages evicted first.
  ``fadvise_hint`` (fio's default 1) advises each file as fio opens it: a random
  mode POSIX_FADV_RANDOM (no read-ahead), any other POSIX_FADV_SEQUENTIAL (read-ahead
  windows up to twice ``read_ahead_kb``); 0 advises nothing.
- Writes: ``pwrite`` dirties pages (a partial page not cached is read first); the
  kernel's writeback (``dirty_background_ratio``, ``dirty_expire_centisecs``,
  throttling at ``dirty_ratio``) writes them, not the job.
- ``fsync`` / ``fdatasync`` = N: after every N writes the job calls ``fsync(2)`` /
  ``fdatasync(2)`` on its file (dirty pages written and waited for, the journal
  committed if needed, the device cache flushed); their latencies are ``sync_lat_*``.
- ``end_fsync`` (``fsync_on_close``): a job that writes ends with ``fsync(2)`` of its
  file, inside its runtime (what it left in the page cache written and flushed).
- ``sync`` = sync (1) | dsync: the file is opened ``O_SYNC`` / ``O_DSYNC``: each write
  returns after what ``fsync`` / ``fdatasync`` of its range would do
  (``models.fs``); its latency includes it.
- ``rate_iops`` / ``rate`` (per direction, ``pace.RateCap``), ``rate_min`` /
  ``rate_iops_min`` (``pace.MinRate``), ``thinktime`` /
  ``thinktime_blocks``, ``random_distribution``, ``rw`` / ``rwmixread``, ``bs`` /
  ``bsrange`` / ``bssplit``, ``runtime`` / ``ramp_time`` / ``startdelay`` / ``time_based`` /
  ``number_ios``, as for ``direct=1`` (the
  job runs ramp + runtime and measures the runtime; at its end a thread's system call
  in progress - read, write or sync - completes and counts, and the measured time
  runs to it; a thread asleep in its think time or rate wait ends there).
- Size: the files of all jobs together hold at most ``models.fs.file.MAX_PAGES`` pages
  (128 GiB): the page cache keeps state for every page of a file, so a bigger ``size``
  is refused as a config error (``direct=1`` jobs have no such bound).
- Latency (``clat``) is the time of the system call, as fio's sync engines measure it.

Every engine runs the job one system call at a time (``iodepth`` 1): with buffered I/O
Linux's ``libaio`` submits synchronously (fio's HOWTO: queued behaviour only with
``direct=1``), and ``psync`` / ``sync`` are synchronous anyway. Not modelled:
``io_uring``'s asynchronous buffered I/O (its io-wq workers), ``invalidate=0``,
``pre_read``, mmap.
"""
from __future__ import annotations

import numpy as np

from ...device.request import READ, WRITE
from ...fs import PAGE_BYTES, Filesystem
from ...fs.file import MAX_PAGES, STATE_BYTES_PER_PAGE
from ...metrics.latency import LatencyRecorder
from ...sim import Simulator
from .pace import EIO, MinRate, RateCap, min_bytes_per_s, rate_ns_per_io
from .offsets import Offsets, byte_limit, io_limit
from .stats import FioGroup

class FioBufferedJob(FioGroup):
    """``numjobs`` buffered fio jobs on one filesystem (one simulated thread each)."""

    def __init__(self, sim: Simulator, cfg, fs: Filesystem, rng: np.random.Generator,
                 jobname: str = "fio") -> None:
        if cfg.direct:
            raise ValueError("direct: a buffered fio job is direct=0 (buffered=1)")
        capacity = fs.queue.device.capacity_bytes
        self.offset_bytes, self.size_bytes = cfg.region(capacity)
        self.increment_bytes = cfg.increment(capacity)
        file_bytes = [self.offset_bytes + j * self.increment_bytes + self.size_bytes
                      for j in range(cfg.numjobs)]
        total = sum(file_bytes)
        # what the total is, in the options that made it: clone k's file is offset +
        # k x offset_increment + size bytes
        what = ("numjobs x (offset + size)" if not self.increment_bytes or cfg.numjobs == 1
                else "the clones' files (offset + k x offset_increment + size each)")
        if total > capacity:
            raise ValueError(f"size: {what} ({total} "
                             f"bytes) exceeds the filesystem's device {fs.queue.device.name!r} "
                             f"({capacity} bytes)")
        pages = sum(-(-b // PAGE_BYTES) for b in file_bytes)
        if pages > MAX_PAGES:
            raise ValueError(f"size: {what} ({total} bytes) "
                             f"is {pages} pages of page-cache state "
                             f"({pages * STATE_BYTES_PER_PAGE / 2**30:.1f} GiB); the model holds "
                             f"at most {MAX_PAGES} pages ({MAX_PAGES * PAGE_BYTES >> 30} GiB of "
                             f"files): give a smaller size, or direct=1")
        self.sim, self.cfg, self.fs, self.queue = sim, cfg, fs, fs.queue
        self.files = [fs.create(f"{jobname}.{j}.0", file_bytes[j], "zero_fill")
                      for j in range(cfg.numjobs)]
        if cfg.fadvise is not None:         # fio advises each file it opens
            for f in self.files:
                fs.fadvise(f, cfg.fadvise)
        seeds = rng.bit_generator.seed_seq.spawn(cfg.numjobs)
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.lat = {READ: LatencyRecorder(), WRITE: LatencyRecorder()}
        self.bytes_done = {READ: 0, WRITE: 0}
        self.sync_lat = LatencyRecorder()
        self.limit = io_limit(cfg, self.size_bytes)
        self.byte_limit = byte_limit(cfg, self.size_bytes)
        self.stopping = False
        self.running = 0
        self.in_call = 0          # threads inside a read / write / sync system call
        self.started_ns = 0
        self.measure_from_ns = 0
        self.finished_ns: int | None = None
        self._iostat_from: tuple | None = None
        self._iostat: dict = {}

    def start(self) -> None:
        """Start the jobs, after ``startdelay``."""
        delay_ns = int(self.cfg.startdelay_s * 1e9)
        if delay_ns:
            self.measure_from_ns = self.sim.now_ns + delay_ns + int(self.cfg.ramp_time_s * 1e9)
            self.sim.after(delay_ns, self._start_now)
        else:
            self._start_now()

    def _start_now(self, _arg=None) -> None:
        cfg = self.cfg
        self.started_ns = self.sim.now_ns
        self.measure_from_ns = self.started_ns + int(cfg.ramp_time_s * 1e9)
        self._iostat_from = self.queue.snapshot()
        self.sim.at(self.measure_from_ns, self._begin_measure)
        # fio: runtime counts from the ramp's end (reset_all_stats resets td->epoch)
        self.sim.at(self.measure_from_ns + int(cfg.runtime_s * 1e9), self.runtime_over)
        self.running = cfg.numjobs
        for j, f in enumerate(self.files):
            self.sim.spawn(self._job(j, f, Offsets(cfg, self.size_bytes, self.rngs[j])),
                           f"fio.{j}")

    def _job(self, j: int, f, offsets: Offsets):
        cfg, fs, sim = self.cfg, self.fs, self.sim
        start = self.offset_bytes + j * self.increment_bytes
        rate = (RateCap(cfg, sim.now_ns, self.measure_from_ns, self.rngs[j])
                if any(rate_ns_per_io(cfg))
                else None)
        min_rate = MinRate(cfg, sim.now_ns) if any(min_bytes_per_s(cfg)) else None
        think_ns = int(round(cfg.thinktime_us * 1000))
        sync = fs.fsync if cfg.fsync else fs.fdatasync
        o_sync = cfg.o_sync
        writes = thought = issued = issued_bytes = 0
        limit, blimit = self.limit, self.byte_limit
        while not self.stopping and (limit is None or issued < limit) and (
                blimit is None or issued_bytes < blimit):
            if rate is None:
                op, off, bs = offsets.next()
            else:
                op, wait_ns = rate.choose(offsets.direction(), sim.now_ns)
                if wait_ns > 0:
                    yield wait_ns
                    if self.stopping:
                        break
                off, bs = offsets.offset(op)
                rate.issued(op, bs)
            t0 = sim.now_ns
            off += start
            self.in_call += 1
            yield (fs.pread(f, off, bs, issuer=j + 1) if op == READ
                   else fs.pwrite(f, off, bs, issuer=j + 1, sync=o_sync))
            self.in_call -= 1
            issued += 1
            issued_bytes += bs
            if t0 >= self.measure_from_ns:          # a call made in the runtime counts
                self.lat[op].add(sim.now_ns - t0)
                self.bytes_done[op] += bs
            if min_rate is not None and min_rate.check(op, bs, sim.now_ns):
                self.error = EIO            # fio: rate_min not met, the job exits
                break
            if self.stopping and self._ended_without_sync():
                return
            if op == WRITE and cfg.sync_every and not self.stopping:
                writes += 1
                if writes >= cfg.sync_every:
                    writes = 0
                    t1 = sim.now_ns
                    self.in_call += 1
                    yield sync(f, issuer=j + 1)
                    self.in_call -= 1
                    if t1 >= self.measure_from_ns:
                        self.sync_lat.add(sim.now_ns - t1)
                    if self.stopping and self._ended_without_sync():
                        return
            if think_ns:
                thought += 1
                if thought >= cfg.thinktime_blocks:
                    thought = 0
                    yield think_ns
        if cfg.end_fsyncs:
            yield fs.fsync(f, issuer=j + 1)      # end_fsync: inside the job's runtime
        self.running -= 1
        if self.running == 0:
            self._stop()

    def jobs_stop(self) -> None:
        self._ended_without_sync()

    def _ended_without_sync(self) -> bool:
        """Once the runtime is over, a job group without an end fsync ends when no
        thread is inside a system call (a thread asleep - think time, a rate wait -
        has nothing to reap); True if this one has ended that way. With an end fsync
        each thread leaves its loop and syncs, and the group ends with the last."""
        if self.cfg.end_fsyncs:
            return False
        if not self.in_call:
            self._stop()
        return True

    def _begin_measure(self, _arg=None) -> None:
        self._iostat_from = self.queue.snapshot()

