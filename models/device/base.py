"""The queue-owning device base: every device model decides only *what goes next* and
*how long it takes*.

``Device`` owns the command queue (NCQ/TCQ tags: at most ``queue_depth`` commands
accepted at once), the servers (an HDD has one actuator; an SSD has several flash
units), the busy-time accounting and completion. A policy subclass overrides:

- ``pick(queue) -> index`` - which queued command is served next (FIFO by default;
  an HDD picks the shortest positioning time);
- ``service_ns(req) -> int`` - how long serving it takes, updating the device's own
  mechanical/cache state.

Completion calls ``self.on_complete(req)`` - the block layer above (or a test) sets it.

Durability: ``volatile_bytes()`` is how many acknowledged-written bytes would be lost
by a power failure right now (write caches override it).

Deliberately not modelled here: command aborts, errors, timeouts.
"""
from __future__ import annotations

from typing import Callable

from ..sim import Simulator
from .request import FLUSH, READ, WRITE, IORequest


class Device:
    """Base class: FIFO service by ``n_servers`` identical servers.

    ``max_hw_sectors_kb`` is the largest command the device (its driver) accepts, as in
    ``/sys/block/<dev>/queue/max_hw_sectors_kb``; the block layer never builds a larger
    request (0: no limit of the device's own).
    ``fua``: the driver advertises forced unit access (``/sys/block/<dev>/queue/fua``):
    SCSI / SAS disks, NVMe drives and RAID controllers do; a SATA drive behind libata
    does not (``libata.fua=0``, the default of every release modelled) - the block
    layer then sends a FUA write as the write and a FLUSH (``models/block/fua.py``).
    """

    kind = "device"
    max_hw_sectors_kb = 0
    fua = True

    def __init__(self, sim: Simulator, name: str, capacity_bytes: int,
                 queue_depth: int = 1, n_servers: int = 1) -> None:
        if queue_depth < 1:
            raise ValueError(f"device {name!r}: queue_depth must be >= 1")
        self.sim = sim
        self.name = name
        self.capacity_bytes = int(capacity_bytes)
        self.queue_depth = int(queue_depth)
        self.n_servers = int(n_servers)
        self.free_servers = int(n_servers)
        self.queue: list[IORequest] = []
        self.inflight = 0
        self.on_complete: Callable[[IORequest], None] = _no_completion_handler
        # device-internal statistics (iostat lives in the block layer above)
        self.completed = [0, 0, 0, 0]
        self.bytes_done = [0, 0, 0, 0]
        self.busy_ns = 0
        self.cache_hits = 0
        self.flushes = 0
        # time with a command outstanding (``outstanding_ns``)
        self._busy_since = 0
        self._busy_total = 0

    # -- interface used by the block layer -----------------------------------------
    def can_accept(self) -> bool:
        return self.inflight < self.queue_depth

    def submit(self, req: IORequest) -> None:
        """Accept a command (caller checked ``can_accept``)."""
        req.dispatch_ns = self.sim.now_ns
        if not self.inflight:
            self._busy_since = req.dispatch_ns
        self.inflight += 1
        self.queue.append(req)
        if self.free_servers:
            self._start_next()

    def volatile_bytes(self) -> int:
        """Acknowledged writes held only in volatile cache (lost on power failure)."""
        return 0

    @property
    def write_cache_mode(self) -> str:
        """What the driver reports, as ``/sys/block/<dev>/queue/write_cache``: ``"write
        back"`` (the block layer sends cache FLUSHes) or ``"write through"`` (a drive
        with its write cache off: Linux sends none - sd_issue_flush of 2.6.18 returns at
        once without WCE, and from 2.6.37 the flush machinery completes such a request
        without dispatching it). Devices with a write cache switch override this."""
        return "write back"

    def outstanding_ns(self) -> int:
        """Time with at least one command outstanding, up to now (the busy period in
        progress included) - what iostat's %util sees of a device that serves many
        commands at once; ``busy_ns``, the sum of service times, counts overlapping
        service more than once. Kept by this class's ``submit`` / ``_finish``: a device
        that replaces them (the HDD, the RAID controller, the bus) keeps its own."""
        busy = self._busy_total
        if self.inflight:
            busy += self.sim.now_ns - self._busy_since
        return busy

    def stats(self) -> dict:
        """Device-internal counters under the device's own name."""
        return {
            "completed_reads": self.completed[READ],
            "completed_writes": self.completed[WRITE],
            "flushes": self.completed[FLUSH],
            "bytes_read": self.bytes_done[READ],
            "bytes_written": self.bytes_done[WRITE],
            "busy_ns": self.busy_ns,
            "cache_hits": self.cache_hits,
        }

    # -- policy hooks -----------------------------------------------------------------
    def pick(self, queue: list[IORequest]) -> int:
        return 0

    def service_ns(self, req: IORequest) -> int:
        raise NotImplementedError

    # -- queueing and time (the base's job) ----------------------------------------
    def _start_next(self) -> None:
        queue = self.queue
        while self.free_servers and queue:
            i = self.pick(queue) if len(queue) > 1 else 0
            req = queue.pop(i)
            t = self.service_ns(req)
            if t < 0:
                raise RuntimeError(f"{self.name}: negative service time for {req}")
            self.free_servers -= 1
            self.busy_ns += t
            self.sim.after(t, self._finish, req)

    def _finish(self, req: IORequest) -> None:
        now = self.sim.now_ns
        if self.inflight == 1:
            self._busy_total += now - self._busy_since
        self.free_servers += 1
        self.inflight -= 1
        req.done_ns = now
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        if req.cache_hit:
            self.cache_hits += 1
        if self.queue:
            self._start_next()
        self.on_complete(req)


def _no_completion_handler(req: IORequest) -> None:
    if req.on_done is not None:
        req.on_done(req)
