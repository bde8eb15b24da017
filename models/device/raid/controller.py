"""A hardware RAID controller: RAID 0 / 1 / 10 over member devices, a command queue, a
per-command firmware cost, and a write-back cache that is battery-backed or not.

Modelled (the host sees one device; the members are any ``Device``s - HDDs, SSDs,
devices behind a ``bus`` - whose completions come back to the controller):

- Geometry: RAID 0 stripes ``stripe_size_bytes`` chunks round-robin over the members;
  RAID 1 mirrors every member (n-way); RAID 10 stripes over mirrored pairs (members
  0+1, 2+3, ...). A request is split at chunk boundaries; pieces contiguous on one
  member are merged into one member command.
- Controller: each host command takes ``controller_cpu_us`` of serial firmware time
  (one embedded CPU: bounds the array's command rate), then a fixed
  ``controller_latency_us`` (DMA setup, completion interrupt) that overlaps with other
  commands, and data moves between host and cache at ``host_MBps`` over one shared,
  full-duplex host link (PCIe; reads from the members stream through as they arrive).
  The
  controller queues up to ``queue_depth`` host commands; member commands beyond a
  member's own queue depth wait in the controller, host commands ahead of destage.
- Reads: a read whose bytes are all in the cache (dirty, or being destaged) is served
  from it; otherwise each piece goes to one mirror - the one with fewer outstanding
  commands, then the one whose last command ended nearest (RAID 1/10).
- Write-back (``write_back`` with ``battery_backed``): a write completes once in the
  cache (firmware + transfer + latency, ~0.1 ms). Cache space is managed in lines of
  ``cache_line_bytes`` (64 KB, the stripe-sized lines of LSI-class firmware): a write
  takes every line it touches that holds nothing yet, so scattered small writes fill
  the cache long before its bytes are used (256 MB = 4,096 scattered 4 KB writes),
  while a sequential stream fills lines completely. Overwriting dirty data takes no
  new space; adjacent dirty data coalesces. Destage starts as soon as there is dirty
  data and keeps up to ``destage_max_inflight`` destage writes (at most
  ``destage_max_bytes`` each) at the members, oldest data first (``destage_order:
  age``: the controller does not sort its cache; the member disks reorder the few
  writes they hold) or, with ``destage_order: address``, in ascending address order
  from a wrapping cursor (an elevator over the whole cache, as HP Smart Array's
  "elevator sort"); see ``cache.py``. A line is free again when nothing in it is
  dirty or being destaged. When the cache is full a write waits (FIFO) until destage
  frees room, so sustained writes complete at destage speed. A FLUSH costs only the
  controller overhead and is not forwarded: the battery makes the cache non-volatile
  (LSI MegaRAID / Dell PERC "write back" with a good BBU).
- No battery: the cache falls back to write-through (LSI's default "No Write Cache if
  Bad BBU"): writes complete when every member completed them, FLUSH is forwarded to
  all members. ``write_back_without_battery`` forces write-back anyway ("Always Write
  Back"): the cache is then volatile and FLUSH waits until the cache is empty, then
  flushes the members.
- ``volatile_bytes()``: the cache's contents when write-back without a battery, plus
  whatever the members' own volatile caches hold (controllers normally switch member
  drive caches off: configure the members so).

Deliberately not modelled: parity RAID (5/6), read caching of clean data and
controller read-ahead, rebuilds and degraded mode, cache mirroring between
controllers, the periodic cache flush timer, TRIM pass-through (DISCARD completes
after the controller overhead and is dropped).
"""
from __future__ import annotations

from collections import deque

from ...sim import Simulator
from ..base import Device
from ..request import FLUSH, READ, WRITE, IORequest
from .cache import CacheLines, DirtyExtents
from .config import RAIDConfig, check_member_count

_HOST, _DESTAGE = 0, 1


class _Cmd:
    """A host command or a destage write fanned out to member commands."""

    __slots__ = ("req", "kind", "remaining", "start", "end")

    def __init__(self, req: IORequest | None, kind: int, start: int = 0, end: int = 0) -> None:
        self.req = req
        self.kind = kind
        self.remaining = 0
        self.start = start
        self.end = end


class RAID(Device):
    """RAID 0/1/10 with a controller cache (see module docstring).

    ``RAID(sim, name, cfg, members)``; sets every member's ``on_complete``.
    """

    kind = "raid"

    def __init__(self, sim: Simulator, name: str, cfg: RAIDConfig = RAIDConfig(),
                 members: list[Device] | None = None) -> None:
        members = list(members or [])
        check_member_count(cfg.level, len(members))
        if cfg.members and len(cfg.members) != len(members):
            raise ValueError(f"members: config names {len(cfg.members)} members, "
                             f"{len(members)} devices given")
        stripe = cfg.stripe_size_bytes
        cap = min(m.capacity_bytes for m in members)
        if cfg.level == 1:
            self.groups = [list(range(len(members)))]
            capacity = cap
        elif cfg.level == 0:
            self.groups = [[i] for i in range(len(members))]
            capacity = len(members) * (cap // stripe) * stripe
        else:
            self.groups = [[i, i + 1] for i in range(0, len(members), 2)]
            capacity = len(self.groups) * (cap // stripe) * stripe
        super().__init__(sim, name, capacity, cfg.queue_depth, n_servers=1)
        self.cfg = cfg
        self.max_hw_sectors_kb = cfg.max_hw_sectors_kb
        self.members = members
        for m in members:
            m.on_complete = self._member_done
        n = len(members)
        self._width = len(self.groups)
        self._cpu_ns = int(round(cfg.controller_cpu_us * 1000))
        self._lat_ns = int(round(cfg.controller_latency_us * 1000))
        self._host_bpns = cfg.host_MBps * 1e6 / 1e9
        self._cpu_free = 0
        self._link_free = [0, 0]               # host link, per direction (to host, from host)
        self._pend_host = [deque() for _ in range(n)]
        self._pend_destage = [deque() for _ in range(n)]
        self._outstanding = [0] * n            # at the member or waiting for its queue
        self._last_end = [0] * n               # where the member's last command ended
        self.write_back = cfg.write_back and (cfg.battery_backed or cfg.write_back_without_battery)
        self.cache_volatile = self.write_back and not cfg.battery_backed
        self.dirty = DirtyExtents(by_age=cfg.destage_order == "age")
        self._destaging: list[_Cmd] = []
        self._data_bytes = 0                   # dirty + being destaged
        self.lines = CacheLines(cfg.cache_line_bytes)
        self._cursor = 0
        self._waiting: deque[tuple[IORequest, int]] = deque()   # writes waiting for room
        self._drain_flushes: list[IORequest] = []               # volatile write-back
        self._busy_since = 0
        # statistics
        self.cache_write_hit_bytes = 0
        self.cache_full_waits = 0
        self.cache_wait_ns = 0
        self.destage_ops = 0
        self.destage_bytes = 0
        self.max_cache_used = 0

    # -- interface ------------------------------------------------------------------------
    def submit(self, req: IORequest) -> None:
        now = self.sim.now_ns
        req.dispatch_ns = now
        if self.inflight == 0:
            self._busy_since = now
        self.inflight += 1
        t = max(now, self._cpu_free) + self._cpu_ns
        self._cpu_free = t
        op = req.op
        if op == READ:
            if self._in_cache(req.offset_bytes, req.end_bytes):
                req.cache_hit = True
                self.sim.at(self._link(READ, t, req.size_bytes) + self._lat_ns, self._done, req)
            else:
                self.sim.at(t, self._read, req)
        elif op == WRITE:
            if self.write_back and req.size_bytes <= self.cfg.cache_size_bytes:
                self.sim.at(t, self._cache_write, req)
            else:
                self.sim.at(t, self._write_through, req)
        elif op == FLUSH:
            if self.write_back and not self.cache_volatile:
                self.sim.at(t + self._lat_ns, self._done, req)
            elif self.write_back:
                self.sim.at(t, self._drain_then_flush, req)
            else:
                self.sim.at(t, self._flush_members, req)
        else:                                  # DISCARD: not passed through
            self.sim.at(t + self._lat_ns, self._done, req)

    def volatile_bytes(self) -> int:
        own = self._data_bytes if self.cache_volatile else 0
        return own + sum(m.volatile_bytes() for m in self.members)

    def stats(self) -> dict:
        s = super().stats()
        s.update({
            "cache_write_hit_bytes": self.cache_write_hit_bytes,
            "cache_full_waits": self.cache_full_waits,
            "cache_wait_ns": self.cache_wait_ns,
            "destage_ops": self.destage_ops,
            "destage_bytes": self.destage_bytes,
            "cache_dirty_bytes": self._data_bytes,
            "cache_max_used_bytes": self.max_cache_used,
            "cache_lines_used": len(self.lines.lines),
        })
        return s

    def member_stats(self) -> dict[str, dict]:
        """Each member's own ``stats()``, by member name."""
        return {m.name: m.stats() for m in self.members}

    # -- geometry ---------------------------------------------------------------------------
    def split(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """``(group, member offset, length)`` pieces of a logical range, pieces that
        are contiguous on one group merged."""
        if self.cfg.level == 1:
            return [(0, start, end - start)]
        stripe = self.cfg.stripe_size_bytes
        width = self._width
        chunk, within = divmod(start, stripe)
        if end - start <= stripe - within:      # within one stripe unit: one piece
            return [(chunk % width, (chunk // width) * stripe + within, end - start)]
        pieces: list[list[int]] = []
        last: dict[int, int] = {}
        off = start
        while off < end:
            chunk, within = divmod(off, stripe)
            n = min(end - off, stripe - within)
            g = chunk % width
            moff = (chunk // width) * stripe + within
            k = last.get(g)
            if k is not None and pieces[k][1] + pieces[k][2] == moff:
                pieces[k][2] += n
            else:
                last[g] = len(pieces)
                pieces.append([g, moff, n])
            off += n
        return [tuple(p) for p in pieces]

    # -- host commands ------------------------------------------------------------------------
    def _xfer(self, nbytes: int) -> int:
        return int(nbytes / self._host_bpns)

    def _link(self, direction: int, ready_ns: int, nbytes: int) -> int:
        """Occupy the host link (PCIe, full duplex: one clock per direction) for
        ``nbytes`` from ``ready_ns`` or when it frees up; returns when the data is through.
        Commands share it, so the array's throughput is capped at ``host_MBps``."""
        start = max(ready_ns, self._link_free[direction])
        end = start + self._xfer(nbytes)
        self._link_free[direction] = end
        return end

    def _in_cache(self, start: int, end: int) -> bool:
        if not self._data_bytes:
            return False
        if self.dirty.covered(start, end) == end - start:
            return True
        return any(c.start <= start and end <= c.end for c in self._destaging)

    def _read(self, req: IORequest) -> None:
        cmd = _Cmd(req, _HOST)
        for g, moff, n in self.split(req.offset_bytes, req.end_bytes):
            m = self._pick_mirror(self.groups[g], moff)
            self._send(m, IORequest(READ, moff, n, sync=req.sync, issuer=req.issuer), cmd, True)

    def _pick_mirror(self, group: list[int], moff: int) -> int:
        if len(group) == 1:
            return group[0]
        out, last = self._outstanding, self._last_end
        if len(group) == 2:     # the min below, written out for a mirrored pair
            a, b = group
            return a if (out[a], abs(last[a] - moff)) <= (out[b], abs(last[b] - moff)) else b
        return min(group, key=lambda i: (out[i], abs(last[i] - moff)))

    def _write_through(self, req: IORequest) -> None:
        cmd = _Cmd(req, _HOST)
        for g, moff, n in self.split(req.offset_bytes, req.end_bytes):
            for m in self.groups[g]:
                self._send(m, IORequest(WRITE, moff, n, sync=req.sync, fua=req.fua,
                                        issuer=req.issuer), cmd, True)

    def _flush_members(self, req: IORequest) -> None:
        cmd = _Cmd(req, _HOST)
        for m in range(len(self.members)):
            self._send(m, IORequest(FLUSH, 0, 0), cmd, True)

    def _drain_then_flush(self, req: IORequest) -> None:
        if self._data_bytes:
            self._drain_flushes.append(req)
        else:
            self._flush_members(req)

    def _cache_write(self, req: IORequest) -> None:
        if self._waiting or self.lines.used_bytes + self._need(req) > self.cfg.cache_size_bytes:
            self.cache_full_waits += 1
            self._waiting.append((req, self.sim.now_ns))
            return
        self._admit(req)

    def _need(self, req: IORequest) -> int:
        """Cache space a write needs: the lines it touches that hold nothing yet."""
        return self.lines.need(req.offset_bytes, req.end_bytes)

    def _admit(self, req: IORequest) -> None:
        added = self.dirty.add(req.offset_bytes, req.end_bytes)
        self.cache_write_hit_bytes += req.size_bytes - added
        self._data_bytes += added
        self.lines.take(req.offset_bytes, req.end_bytes)
        if self.lines.used_bytes > self.max_cache_used:
            self.max_cache_used = self.lines.used_bytes
        self.sim.at(self._link(WRITE, self.sim.now_ns, req.size_bytes) + self._lat_ns, self._done, req)
        self._destage()

    def _done(self, req: IORequest) -> None:
        now = self.sim.now_ns
        req.done_ns = now
        self.inflight -= 1
        if self.inflight == 0:
            self.busy_ns += now - self._busy_since
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        if req.cache_hit:
            self.cache_hits += 1
        self.on_complete(req)

    # -- destage --------------------------------------------------------------------------------
    def _destage(self) -> None:
        cfg = self.cfg
        by_age = self.dirty.by_age
        while len(self._destaging) < cfg.destage_max_inflight and self.dirty.bytes:
            if by_age:
                s, e = self.dirty.take_oldest(cfg.destage_max_bytes)
            else:
                s, e = self.dirty.take(self._cursor, cfg.destage_max_bytes)
                self._cursor = e
            cmd = _Cmd(None, _DESTAGE, s, e)
            self._destaging.append(cmd)
            self.destage_ops += 1
            self.destage_bytes += e - s
            for g, moff, n in self.split(s, e):
                for m in self.groups[g]:
                    self._send(m, IORequest(WRITE, moff, n, sync=False), cmd, False)

    def _destaged(self, cmd: _Cmd) -> None:
        self._destaging.remove(cmd)
        self._data_bytes -= cmd.end - cmd.start
        self.lines.release(cmd.start, cmd.end, lambda a, b: self.dirty.covered(a, b) > 0 or any(
            c.start < b and a < c.end for c in self._destaging))
        now = self.sim.now_ns
        waiting = self._waiting
        while waiting:
            req, since = waiting[0]
            if self.lines.used_bytes + self._need(req) > self.cfg.cache_size_bytes:
                break
            waiting.popleft()
            self.cache_wait_ns += now - since
            self._admit(req)
        self._destage()
        if self._drain_flushes and not self._data_bytes:
            flushes, self._drain_flushes = self._drain_flushes, []
            for req in flushes:
                self._flush_members(req)

    # -- members ----------------------------------------------------------------------------------
    def _send(self, m: int, child: IORequest, cmd: _Cmd, host: bool) -> None:
        cmd.remaining += 1
        child.tag = (cmd, m)
        self._outstanding[m] += 1
        if child.op != FLUSH:
            self._last_end[m] = child.end_bytes
        member = self.members[m]
        pend = self._pend_host[m] if host else self._pend_destage[m]
        if member.can_accept() and not self._pend_host[m] and not self._pend_destage[m]:
            member.submit(child)
        else:
            pend.append(child)

    def _member_done(self, child: IORequest) -> None:
        cmd, m = child.tag
        self._outstanding[m] -= 1
        member = self.members[m]
        ph, pd = self._pend_host[m], self._pend_destage[m]
        while (ph or pd) and member.can_accept():
            member.submit(ph.popleft() if ph else pd.popleft())
        cmd.remaining -= 1
        if cmd.remaining:
            return
        if cmd.kind == _DESTAGE:
            self._destaged(cmd)
        elif cmd.req.op == READ:
            # read data streams to the host as it arrives from the members (cut-through):
            # only a busy link delays it
            now = self.sim.now_ns
            req = cmd.req
            end = self._link(READ, max(req.dispatch_ns, now - self._xfer(req.size_bytes)), req.size_bytes)
            self.sim.at(max(end, now) + self._lat_ns, self._done, req)
        else:
            self.sim.after(self._lat_ns, self._done, cmd.req)

