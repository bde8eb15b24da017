"""What pauses a fio job's issuing (``models.workload.fio``): ``thinktime`` /
``thinktime_blocks``, ``rate_iops``, periodic ``fsync`` / ``fdatasync`` and O_SYNC
writes synced at submission.

- think time: after every ``thinktime_blocks`` completions the job issues nothing
  more, waits for its I/Os in flight to complete (fio's ``io_u_quiesce`` in
  ``handle_thinktime``), then sleeps ``thinktime_us``; completions while it drains
  count toward the next think, as fio's ``last_thinktime_blocks`` is taken before
  the drain;
- rate: ``rate_iops`` / ``rate`` with fio's syntax ``r[,w[,t]]`` (``500``: 500 reads
  and 500 writes a second, each direction capped on its own; ``500,200``; ``,200``
  caps only writes; ``rate`` in bytes a second, ``10m,5m``, and over ``rate_iops``
  where both are set, as fio's ``__setup_rate``, which turns ``rate_iops`` into bytes
  with the direction's smallest size). A direction's next I/O is issued no earlier
  than the bytes it issued so far / rate after the job started (fio's
  ``usec_for_io``: with one size, the k-th I/O at k x bs / rate) - except a
  ``rate_iops`` cap of a ``bssplit`` direction, which fio counts in I/Os, whatever
  their size; a
  mixed job whose drawn direction is ahead of its rate takes the other direction if
  that one is due, else waits for the earlier of the two (fio's ``rate_ddir``). The
  count starts over at the ramp's end (``reset_all_stats``). ``rate_process=poisson``
  (fio's ``usec_for_io``): each direction's next I/O falls due an exponentially
  distributed gap after the last one's due time, mean 1 / the cap's IOPS (at the
  direction's smallest size), drawn from a stream of its own (fio's
  ``poisson_state``): a Poisson arrival process, falling behind caught up as with the
  linear one. A job ahead of its rate first waits for its I/Os in flight, then sleeps
  as long as it was ahead when it stopped (fio's ``rate_ddir``: ``io_u_quiesce``,
  then ``usec_sleep`` of the time computed before it), and catches up after. Trim
  caps are accepted and unused (no trims are issued);
- minimum rate: ``rate_min`` (bytes a second) / ``rate_iops_min``, ``r[,w]`` as the
  caps: from 2 s after the ramp's end (fio's settle counts from ``td->start``, which
  ``reset_all_stats`` resets when the ramp ends), every ``rate_cycle`` ms (fio's default 1000)
  of a direction that did I/O, the rate completed since the last check must reach
  the minimum, else the job ends with fio's error EIO (``__check_min_rate`` in
  backend.c: checked as I/Os complete, ``rate_min`` over ``rate_iops_min``);
- sync: once ``fsync`` (or ``fdatasync``) writes have been issued since the last sync,
  the job waits until its I/Os in flight completed (as fio's asynchronous engines
  quiesce before a sync), submits a FLUSH of the block device and waits for it. The
  time from submitting the FLUSH to its completion is the sync latency. A kernel
  whose device node's fsync sends no FLUSH (``BlockConfig.blkdev_sync`` none, before
  2.6.32) syncs in no time;
- O_SYNC writes synced at submission (``sync=1`` with an asynchronous engine,
  ``blkdev_sync`` flush, Linux 2.6.32-3.10: ``blkdev_aio_write`` calls
  ``generic_write_sync`` when the write is queued): after each write the job submits
  a FLUSH and issues nothing more until it completes (the thread is still in
  ``io_submit``); the write itself completes on its own.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from ...device.request import READ, WRITE, IORequest
from ...units import parse_size


def _caps(text, key: str, parse) -> list[float]:
    """fio's per-direction ``r[,w[,t]]`` (one value: every direction) -> [read, write]."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) > 3:
        raise ValueError(f"{key}: expected read[,write[,trim]], got {text!r}")
    if len(parts) == 1:
        parts = parts * 2
    vals = []
    for p in parts[:2]:
        try:
            v = parse(p) if p else 0
        except ValueError:
            v = -1
        if v < 0:
            raise ValueError(f"{key}: expected read[,write[,trim]] caps >= 0, got {text!r}")
        vals.append(float(v))
    return vals


def rate_ns_per_io(cfg) -> tuple[float, float]:
    """Nanoseconds between two I/Os of (reads, writes) under the job's ``rate`` /
    ``rate_iops`` (0: no cap in that direction; an I/O of the direction's smallest
    size). ``ValueError`` naming the option."""
    by_iops = _caps(cfg.rate_iops, "rate_iops", lambda p: int(p))
    by_bw = _caps(cfg.rate, "rate", lambda p: parse_size(p, "rate"))
    out = []
    for iops, bw, sizes in zip(by_iops, by_bw, cfg.block_sizes):
        bs = sizes.min_bs
        bps = bw or iops * bs
        out.append(bs * 1e9 / bps if bps else 0.0)
    return out[0], out[1]


class RateCap:
    """fio's rate limit of one job: when the next I/O of each direction is due. At
    ``restart_ns`` (the ramp's end) the count starts over from there, as fio's
    ``reset_all_stats`` zeroes ``rate_io_issue_bytes`` / ``rate_next_io_time`` and
    resets ``td->start``: what the job fell behind during the ramp is not caught up
    in a burst after it."""

    def __init__(self, cfg, t0_ns: int, restart_ns: int | None = None,
                 rng: np.random.Generator | None = None) -> None:
        self.ns = dict(zip((READ, WRITE), rate_ns_per_io(cfg)))
        # rate_process=poisson: the due times ahead, per direction, and their stream
        self.poisson = cfg.rate_process == "poisson"
        if self.poisson:
            self.rng = np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])
            self._dues = {READ: deque([t0_ns]), WRITE: deque([t0_ns])}
        self.unit = {op: s.min_bs for op, s in zip((READ, WRITE), cfg.block_sizes)}
        # fio's usec_for_io: a rate_iops cap (no byte rate) of a bssplit direction
        # counts I/Os, whatever their size; every other cap counts bytes
        by_bw = _caps(cfg.rate, "rate", lambda p: parse_size(p, "rate"))
        self.per_io = {op: not bw and bool(s.split)
                       for op, bw, s in zip((READ, WRITE), by_bw, cfg.block_sizes)}
        mixed = cfg.mode in ("randrw", "readwrite")
        fixed = WRITE if cfg.mode in ("write", "randwrite") else READ
        share = {READ: cfg.rwmixread, WRITE: 100 - cfg.rwmixread}
        self.dirs = tuple(op for op in (READ, WRITE) if share[op]) if mixed else (fixed,)
        self.mixed = mixed
        self.bytes = {READ: 0, WRITE: 0}
        self.t0 = t0_ns
        self.restart_ns = restart_ns if restart_ns is not None and restart_ns > t0_ns else None

    def _restart(self, now_ns: int) -> None:
        if self.restart_ns is not None and now_ns >= self.restart_ns:
            self.t0, self.restart_ns = self.restart_ns, None
            self.bytes = {READ: 0, WRITE: 0}
            if self.poisson:
                self._dues = {READ: deque([self.t0]), WRITE: deque([self.t0])}

    def _gap_ns(self, op: int) -> float:
        return self.ns[op] * -math.log(1.0 - self.rng.random())

    def due_ns(self, op: int) -> float:
        """When the next I/O of ``op`` may be issued (``t0`` when uncapped): the bytes
        issued at the rate, counted in whole I/Os of the smallest size and the rest
        (Poisson: the next arrival)."""
        if self.poisson:
            return self._dues[op][0]
        ios, rest = divmod(self.bytes[op], self.unit[op])
        due = self.t0 + ios * self.ns[op]
        return due + rest * self.ns[op] / self.unit[op] if rest else due

    def backlog(self, op: int, now_ns: int) -> float:
        """I/Os of ``op`` (of its smallest size) due by now and not issued (inf: no
        cap)."""
        self._restart(now_ns)
        if not self.ns[op]:
            return math.inf
        if self.poisson:                # arrivals up to now (the last one is later)
            dues = self._dues[op]
            while dues[-1] <= now_ns:
                dues.append(dues[-1] + self._gap_ns(op))
            return len(dues) - 1
        return int((now_ns - self.t0) / self.ns[op]) + 1 - -(-self.bytes[op] // self.unit[op])

    def allowance(self, now_ns: int) -> tuple[float, float]:
        """(I/Os the job may issue now, when the next one falls due if none)."""
        n = sum(max(0, self.backlog(op, now_ns)) for op in self.dirs)
        return n, (0 if n else min(math.ceil(self.due_ns(op)) for op in self.dirs))

    def choose(self, op: int, now_ns: int) -> tuple[int, int]:
        """fio's ``rate_ddir``: the direction to issue and how long to sleep first."""
        self._restart(now_ns)
        other = WRITE if op == READ else READ
        if self.due_ns(op) <= now_ns:
            return op, 0
        if self.mixed and other in self.dirs:
            if self.due_ns(other) <= now_ns:
                return other, 0
            if self.due_ns(other) < self.due_ns(op):
                op = other
        return op, math.ceil(self.due_ns(op)) - now_ns

    def issued(self, op: int, nbytes: int) -> None:
        self.bytes[op] += self.unit[op] if self.per_io[op] else nbytes
        if self.poisson and self.ns[op]:
            dues = self._dues[op]
            due = dues.popleft()
            if not dues:
                dues.append(due + self._gap_ns(op))


EIO = 5            # fio's error when a job misses its minimum rate (td_verror)
_SETTLE_NS = 2_000_000_000     # fio allows 2 s before the first minimum-rate check


def min_bytes_per_s(cfg) -> tuple[float, float]:
    """(reads, writes) bytes a second the job must keep (``rate_min`` over
    ``rate_iops_min``; 0: no minimum). ``ValueError`` naming the option."""
    by_bw = _caps(cfg.rate_min, "rate_min", lambda p: parse_size(p, "rate_min"))
    by_iops = _caps(cfg.rate_iops_min, "rate_iops_min", lambda p: int(p))
    return tuple(bw or iops * sizes.min_bs
                 for bw, iops, sizes in zip(by_bw, by_iops, cfg.block_sizes))


class MinRate:
    """fio's minimum-rate check of one job (``__check_min_rate``): ``check`` as I/Os
    complete; True once a direction fell below its minimum over a ``rate_cycle``."""

    def __init__(self, cfg, t0_ns: int) -> None:
        self.min = dict(zip((READ, WRITE), min_bytes_per_s(cfg)))
        self.cycle_ns = int(cfg.rate_cycle_ms * 1e6)
        self.from_ns = t0_ns + int(cfg.ramp_time_s * 1e9) + _SETTLE_NS   # settle after the ramp
        self.done = {READ: 0, WRITE: 0}
        self.last: dict = {}           # op -> (ns, bytes done) at the last check

    def check(self, op: int, nbytes: int, now_ns: int) -> bool:
        self.done[op] += nbytes
        if now_ns < self.from_ns:
            return False
        for d in (READ, WRITE):
            if not self.min[d] or not self.done[d]:
                continue
            if d in self.last:
                t, b = self.last[d]
                if now_ns - t < self.cycle_ns:
                    continue
                if (self.done[d] - b) * 1e9 / (now_ns - t) < self.min[d]:
                    return True
            self.last[d] = (now_ns, self.done[d])
        return False


class Pace:
    """What pauses a job's issuing: think time, the rate cap, periodic syncs; and the
    minimum rate that ends it."""

    def __init__(self, job, cfg) -> None:
        self.job = job
        self.think_ns = int(round(cfg.thinktime_us * 1000))
        self.think_blocks = cfg.thinktime_blocks
        self.cfg = cfg
        self.rate: RateCap | None = None        # from the first refill
        self.rated = any(rate_ns_per_io(cfg))
        self.sync_every = cfg.sync_every
        self.since_think = 0
        self.thinking = False        # a think is due: draining, then asleep
        self.draining = False        # ... waiting for the I/Os in flight
        self.writes = 0              # since the last sync
        self.syncing = False         # a sync is due (or its FLUSH in flight)
        self.wake_at = -1            # a refill scheduled by the rate cap
        self.rate_sleep_ns = -1      # ahead of the rate: sleep this long once drained
        self.min_rate: MinRate | None = None    # from the first refill
        self.min_rated = any(min_bytes_per_s(cfg))
        self.at_submit = job.flush_at_submit
        self.submit_sync = False     # an O_SYNC write was issued: its FLUSH is due
        self.submit_flushing = False  # ... and in flight

    def allowance(self) -> int:
        """How many I/Os the job may issue now (0: none; it is woken up later)."""
        job = self.job
        sim = job.fio.sim
        if self.rated and self.rate is None:
            self.rate = RateCap(self.cfg, sim.now_ns, self.job.fio.measure_from_ns,
                                self.job.rng)
        if self.min_rated and self.min_rate is None:
            self.min_rate = MinRate(self.cfg, sim.now_ns)
        if self.submit_sync:         # still inside the io_submit of an O_SYNC write
            if not self.submit_flushing:
                self.submit_flushing = True
                job.in_flight += 1
                job.fio.fsync_device(job.index, self._submit_synced)
            return 0
        if self.thinking:
            if self.draining and job.in_flight == 0:
                self.draining = False
                sim.after(self.think_ns, self._thought)
            return 0
        if self.syncing:
            if job.in_flight == 0:
                self._flush()
            return 0
        allowed = 1 if self.at_submit else job.max_depth
        if self.sync_every:
            allowed = min(allowed, self.sync_every - self.writes)
        if self.rate is not None:
            if self.rate_sleep_ns >= 0:              # draining before a rate sleep
                if job.in_flight:
                    return 0
                wake = sim.now_ns + self.rate_sleep_ns
                self.rate_sleep_ns = -1
                self.wake_at = wake
                sim.at(wake, self._wake)
                return 0
            due, wake = self.rate.allowance(sim.now_ns)
            if not due:
                if job.in_flight:       # fio's rate_ddir: quiesce, then the whole sleep
                    self.rate_sleep_ns = wake - sim.now_ns
                elif self.wake_at != wake:
                    self.wake_at = wake
                    sim.at(wake, self._wake)
                return 0
            allowed = min(allowed, due)
        return int(allowed)

    def issued_all_due(self) -> None:
        """The job issued what was due and would issue more (fio asks for its next I/O
        at once): ahead of its rate with I/Os in flight and room for more, it drains
        them, then sleeps as long as it is ahead now (``rate_ddir``)."""
        job = self.job
        if (self.rate is None or self.rate_sleep_ns >= 0 or self.thinking or self.syncing
                or not 0 < job.in_flight < job.max_depth):
            return
        now = job.fio.sim.now_ns
        due, wake = self.rate.allowance(now)
        if not due:
            self.rate_sleep_ns = wake - now

    def issue(self, op: int) -> int:
        """An I/O of ``op`` was drawn: the direction it goes in (the rate cap may switch
        a mixed job's, fio's ``rate_ddir``; the allowance left one due); a write counts
        toward the next sync. ``issued`` then counts its bytes against the rate."""
        if self.rate is not None:
            op, _ = self.rate.choose(op, self.job.fio.sim.now_ns)
        if op == WRITE and self.at_submit:
            self.submit_sync = True
        if op == WRITE and self.sync_every:
            self.writes += 1
            if self.writes >= self.sync_every:
                self.syncing = True
        return op

    def issued(self, op: int, nbytes: int) -> None:
        if self.rate is not None:
            self.rate.issued(op, nbytes)

    def completed(self, bio: IORequest) -> None:
        mr = self.min_rate
        if mr is not None and mr.check(bio.op, bio.size_bytes, bio.done_ns):
            job = self.job
            job.limit = job.issued              # it issues nothing more
            job.fio.error = EIO
            self.min_rated = False
            self.min_rate = None
        if self.think_ns:
            self.since_think += 1
            if self.since_think >= self.think_blocks:
                self.since_think = 0
                self.thinking = self.draining = True    # the next refill sees the drain

    def _thought(self, _arg=None) -> None:
        self.thinking = False
        self.job.refill()

    def _wake(self, _arg=None) -> None:
        self.wake_at = -1
        self.job.refill()

    def _flush(self) -> None:
        job = self.job
        job.in_flight += 1
        job.fio.fsync_device(job.index, self._synced)

    def _submit_synced(self, _flush: IORequest) -> None:
        job = self.job
        job.in_flight -= 1
        self.submit_sync = self.submit_flushing = False
        job.call_returned()          # the O_SYNC write's io_submit returns
        job.refill()
        job.end_if_done()

    def _synced(self, bio: IORequest) -> None:
        job = self.job
        fio = job.fio
        job.in_flight -= 1
        if bio.submit_ns >= fio.measure_from_ns:
            fio.sync_lat.add(bio.done_ns - bio.submit_ns)
        self.writes = 0
        self.syncing = False
        job.refill()
        job.end_if_done()
