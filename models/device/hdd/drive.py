"""A hard disk drive: zoned platters, a seeking arm, a spinning spindle, a segmented
buffer with read-ahead, an optional volatile write cache and a tagged command queue.

Modelled (DiskSim's disk model is the reference for the parameter set; Ruemmler &
Wilkes, "An introduction to disk drive modeling", IEEE Computer 1994, for the
mechanisms):

- Layout: zones of cylinders with a fixed number of 512-byte sectors per track,
  ``surfaces`` heads, LBAs filling every surface of a cylinder before the next
  cylinder (optionally serpentine), track and cylinder skew in sectors, and the
  sectors that hold no LBA: reserved space at a zone's front, spares at the end of
  ranges of cylinders or of the zone, slipped defects (``layout``).
- Mechanics: seek time by cylinder distance (three data-sheet points or a measured
  table), head switch, write settle, and the platter angle as a function of absolute
  simulated time (``now_ns mod revolution``): a command that arrives just after its
  sector passed the head waits almost a whole revolution. Never an averaged latency.
- Controller: per-command overheads (read hit, read miss, write hit, write miss,
  flush; optionally different after a write, as DiskSim has them), data preparation,
  reconnection and completion (status) overheads, the host interface rate (separate
  for write data if need be). A read miss disconnects and reconnects once its
  watermark's worth is buffered, then streams as the sectors come off the media; a
  write's sectors are written once they crossed the link, after at least the
  minimum seek delay (disksim_diskctlr.c: disk_read_arrive, disk_write_arrive,
  disk_check_bus, disk_request_complete). A queued write that starts where the media
  write in progress ends continues it (``combine_seq_writes``, DiskSim's Combine seq
  writes): the controller took its command and data in while the other was on the
  platter, one command after another, so sequential writes stream with the write
  cache off once their data keeps ahead of the head.
- Buffer: ``cache_segments`` circular segments of ``cache_segment_bytes``; after a
  media read the drive keeps reading ahead (``read_ahead_scheme``: a number of bytes,
  to the track or cylinder end, or DiskSim's DEC track-stream scheme) for as long as
  no other command needs the arm, so sequential and near-sequential reads hit the
  buffer, and a read that lands in the stream being read ahead waits only for its
  sectors to come off the platter. A write stops read-ahead and empties the
  segments holding any of its sectors.
- Write cache (WCE): writes complete once in the buffer (up to
  ``write_cache_bytes`` dirty; sequential writes coalesce into extents of at most a
  segment), are destaged when the arm is idle (no command queued, or only ones the
  buffer serves: a stream of cached writes is accepted while the arm writes back),
  when the dirty limit is reached, and by FLUSH (SYNCHRONIZE CACHE), which completes
  when all dirty data is on the media, including an extent being destaged.
  ``volatile_bytes()`` is the dirty data. FUA writes go to the media.
- Queue: ``queue_depth`` tagged commands (SCSI TCQ / SATA NCQ), served ``fifo`` or
  ``sptf`` (shortest positioning time first, buffer hits first) with an optional age
  limit after which the oldest command is served regardless (starvation guard).
  A FLUSH is a barrier: commands queued after it are not served before it.

Deliberately not modelled: remapped defects (sectors relocated to a spare elsewhere),
zero-latency (out-of-order) track reads, seek-time variance between reads and writes
other than the settle time, thermal recalibration, retries, power states, the
disconnect messages themselves (they do not delay the drive at queue depth 1), bus
arbitration with other devices.

Modules: ``config`` (HDDZone, HDDConfig), ``layout`` (LBA -> platter),
``mech`` (seek, rotation, transfer, SPTF, the state vector), ``buffer``
(segments, the read-ahead stream), ``cache`` (reads, the compiled command entry
points), ``write`` (writes, the write cache, FLUSH), ``state`` (slot numbers).
"""
from __future__ import annotations

from ...sim import Simulator
from ..base import Device
from .cache import hdd_arm_wanted, hdd_destage_idle, hdd_dispatch, hdd_submit
from .config import SECTOR_BYTES, HDDConfig
from .mech import build_state
from .state import C_DESTAGES, C_SEEKS, C_SEG_HITS, C_STREAM_HITS, D_N, D_SECT, H_TFREE
from ..request import WRITE, IORequest


class HDD(Device):
    """A disk drive; ``HDD(sim, name, cfg)``.

    The base ``Device`` interface is kept (``submit``, ``can_accept``, ``on_complete``,
    ``inflight``, ``queue_depth`` tags); the queued commands live in tag slots of the
    compiled state vector (``hdd_submit`` at submit, one ``hdd_dispatch`` call per
    command choosing and serving it), so the base's ``queue`` list stays empty. The
    drive destages its write cache in the background when idle. Read-ahead needs no
    events: its progress follows from the layout and the clock.
    """

    kind = "hdd"

    def __init__(self, sim: Simulator, name: str, cfg: HDDConfig) -> None:
        super().__init__(sim, name, cfg.sectors * SECTOR_BYTES, queue_depth=cfg.queue_depth,
                         n_servers=1)
        self.cfg = cfg
        self.S = build_state(cfg)
        self._destaging_bytes = 0    # destaged by the command in service (not yet done)
        self._unacked_bytes = 0      # a cached write not yet acknowledged
        self._wce = cfg.write_cache
        self._bg_destage = False     # a background destage is under way
        self._bg_destaging_bytes = 0
        # the command queue lives in tag slots of the state vector (queue order by
        # arrival number); the base's ``queue`` list stays empty
        self._slots: list[IORequest | None] = [None] * cfg.queue_depth
        self._free = list(range(cfg.queue_depth - 1, -1, -1))

    # -- interface ------------------------------------------------------------------
    def submit(self, req: IORequest) -> None:
        now = self.sim.now_ns
        req.dispatch_ns = now
        op = req.op
        if op <= WRITE:
            off = req.offset_bytes
            end = off + req.size_bytes
            if off < 0 or end <= off or end > self.capacity_bytes:
                raise ValueError(f"{self.name}: {req} outside the drive's {self.capacity_bytes} bytes")
            slot = self._free.pop()
            hdd_submit(self.S, slot, off, end, op | 4 if req.fua else op, now)
        else:
            slot = self._free.pop()
            hdd_submit(self.S, slot, 0, 0, op, now)
        self._slots[slot] = req
        self.inflight += 1
        if self.free_servers:
            self._start_next()

    @property
    def write_cache_mode(self) -> str:
        return "write back" if self._wce else "write through"

    @property
    def fua(self) -> bool:
        """A SATA drive sits behind libata, which advertises no FUA."""
        return self.cfg.interface != "sata"

    def volatile_bytes(self) -> int:
        return (int(self.S[D_SECT]) * SECTOR_BYTES + self._destaging_bytes
                + self._bg_destaging_bytes - self._unacked_bytes)

    def stats(self) -> dict:
        out = super().stats()
        S = self.S
        out.update(media_accesses=int(S[C_SEEKS]), destages=int(S[C_DESTAGES]),
                   stream_hits=int(S[C_STREAM_HITS]), segment_hits=int(S[C_SEG_HITS]))
        return out

    # -- queueing and time ------------------------------------------------------------
    def _start_next(self) -> None:
        # called with the server free: every command in flight is queued
        if self.inflight:
            S, sim = self.S, self.sim
            now = sim.now_ns
            slots = self._slots
            if self._wce:
                self._destage_meanwhile()
                before = S[D_SECT]
                slot, done_ns, hit = hdd_dispatch(S, now)
                req = slots[slot]
                # destaged during this command: on the platter only when it completes
                drained = before - S[D_SECT]
                if hit and req.op == WRITE:
                    n = -(-req.end_bytes // SECTOR_BYTES) - req.offset_bytes // SECTOR_BYTES
                    drained += n
                    self._unacked_bytes = n * SECTOR_BYTES
                self._destaging_bytes = int(drained) * SECTOR_BYTES
            else:
                slot, done_ns, hit = hdd_dispatch(S, now)
                req = slots[slot]
            slots[slot] = None
            self._free.append(slot)
            if hit:
                req.cache_hit = True
            self.free_servers = 0
            self.busy_ns += done_ns - now
            sim.at(done_ns, self._finish, req)
        elif self._wce and not self._bg_destage and self.S[D_N] > 0.0:
            self._start_destage()   # idle: write back the cache

    def _finish(self, req: IORequest) -> None:
        # the base's completion, with the queue held in tag slots
        self._unacked_bytes = 0
        self._destaging_bytes = 0
        self.free_servers = 1
        self.inflight -= 1
        req.done_ns = self.sim.now_ns
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        if req.cache_hit:
            self.cache_hits += 1
        self._start_next()
        self.on_complete(req)

    def _destage_meanwhile(self) -> None:
        """(Write cache on.) Dirty data, the arm free and no command queued that needs
        it (the buffer serves them): the arm writes back meanwhile, as on an idle drive -
        a contiguous next extent without a break."""
        S = self.S
        if (not self._bg_destage and S[D_N] > 0.0 and S[H_TFREE] <= self.sim.now_ns
                and not hdd_arm_wanted(S)):
            self._start_destage()

    def _start_destage(self) -> None:
        # background: the server stays free for commands the buffer can serve; the
        # arm is busy until the destage ends (S[H_TFREE])
        S = self.S
        before = S[D_SECT]
        done_ns = hdd_destage_idle(S, self.sim.now_ns)
        self._bg_destaging_bytes = int(before - S[D_SECT]) * SECTOR_BYTES
        self._bg_destage = True
        self.sim.at(done_ns, self._destage_done, None)

    def _destage_done(self, _arg) -> None:
        self._bg_destaging_bytes = 0
        self._bg_destage = False
        if self.free_servers:
            self._start_next()
        else:               # a command the buffer serves is in progress
            self._destage_meanwhile()


def default_15k_sas(**overrides) -> HDDConfig:
    """A 2009 15k RPM SAS drive: Seagate Cheetah 15K.7 300 GB (ST3300657SS), built
    from its data sheet (``datasheet.CHEETAH_15K7``: the sheet's figures and what
    is assumed where it is silent). ``overrides`` replace fields (e.g.
    ``queue_depth=1``, ``write_cache=True``)."""
    from .datasheet import CHEETAH_15K7, hdd_from_datasheet

    return hdd_from_datasheet(CHEETAH_15K7, **overrides)
