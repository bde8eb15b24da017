"""A shared link between the host and several devices: a host bus adapter's port, a
SATA link behind a port multiplier, a SAS wide port to an expander. Its bandwidth is
shared: a data transfer of N bytes occupies the link for N / ``bandwidth_MBps``, and
transfers of different devices queue on it first come, first served.

Attachment (the design choice): a device is wrapped, not changed. ``Bus.attach(dev)``
returns a ``BusPort``, itself a ``Device``, that the block layer (or a RAID
controller, for members behind an expander) uses instead of ``dev``; the port sets
``dev.on_complete`` and passes the same ``IORequest`` objects through. So any device
model (hdd, ssd, ram, raid) works behind a link without knowing about it.

Timing (cut-through, so an idle link adds no latency and a busy one adds its queue):

- WRITE: the data must cross the link to reach the device. Its transfer is booked at
  the earliest time the link is free (FIFO); the command reaches the device when its
  data starts to flow, and completes when both the device has completed it and the
  transfer has ended.
- READ: the data crosses the link as the device delivers it. The transfer is booked
  to end when the device completes (starting no earlier than the command reached the
  port), or later if the link is still busy with earlier transfers (then it starts
  when the link frees up, in FIFO order); the command completes when it ends.
- FLUSH, DISCARD: no data; passed straight through.

The port accepts as many commands as the device's queue depth, counting commands
whose write data is still waiting for the link.

Deliberately not modelled: link-level framing and flow-control overhead (fold it into
``bandwidth_MBps``), per-command protocol time on the link, full duplex (reads and
writes share one direction's bandwidth here), link resets and errors.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import above
from ..sim import Simulator
from .base import Device
from .request import READ, WRITE, IORequest


@dataclass(frozen=True)
class BusConfig:
    """One shared link. ``bandwidth_MBps`` in 10^6 bytes/s of payload: a SATA 3 Gb/s
    link carries 300 (8b/10b), a 4-lane 3 Gb/s SAS wide port 1,200, a PCIe 1.0 x4 HBA
    ~1,000."""

    bandwidth_MBps: float = 300.0

    def __post_init__(self) -> None:
        above(self, 0, "bandwidth_MBps")


class Bus:
    """The link: a FIFO calendar (``free_ns``) and its statistics."""

    def __init__(self, sim: Simulator, name: str, cfg: BusConfig = BusConfig()) -> None:
        self.sim = sim
        self.name = name
        self.cfg = cfg
        self._bpns = cfg.bandwidth_MBps * 1e6 / 1e9
        self.free_ns = 0
        self.ports: list[BusPort] = []
        self.transfers = 0
        self.bytes = 0
        self.busy_ns = 0
        self.wait_ns = 0            # time transfers waited for the link

    def attach(self, device: Device, name: str | None = None) -> "BusPort":
        """Put ``device`` behind this link; use the returned port in its place."""
        port = BusPort(self, device, name)
        self.ports.append(port)
        return port

    def book(self, nbytes: int, earliest_ns: int) -> tuple[int, int]:
        """Book a transfer that could start at ``earliest_ns``; returns (start, end)."""
        dur = int(nbytes / self._bpns)
        start = earliest_ns if earliest_ns > self.free_ns else self.free_ns
        end = start + dur
        self.free_ns = end
        self.transfers += 1
        self.bytes += nbytes
        self.busy_ns += dur
        self.wait_ns += start - earliest_ns
        return start, end

    def transfer_ns(self, nbytes: int) -> int:
        return int(nbytes / self._bpns)

    def stats(self) -> dict:
        return {"transfers": self.transfers, "bytes": self.bytes, "busy_ns": self.busy_ns,
                "wait_ns": self.wait_ns}


class BusPort(Device):
    """``device`` as seen through ``bus`` (see module docstring)."""

    kind = "bus_port"

    def __init__(self, bus: Bus, device: Device, name: str | None = None) -> None:
        super().__init__(bus.sim, name or device.name, device.capacity_bytes,
                         device.queue_depth, n_servers=device.queue_depth)
        self.bus = bus
        self.device = device
        self._write_end: dict[int, int] = {}
        device.on_complete = self._device_done

    def can_accept(self) -> bool:
        return self.inflight < self.queue_depth and self.device.can_accept()

    def submit(self, req: IORequest) -> None:
        now = self.sim.now_ns
        req.dispatch_ns = now
        self.inflight += 1
        if req.op == WRITE and req.size_bytes:
            start, end = self.bus.book(req.size_bytes, now)
            self._write_end[id(req)] = end
            if start > now:
                self.sim.at(start, self._to_device, req)
                return
        self.device.submit(req)

    def _to_device(self, req: IORequest) -> None:
        dispatched = req.dispatch_ns
        self.device.submit(req)
        req.dispatch_ns = dispatched

    def _device_done(self, req: IORequest) -> None:
        now = self.sim.now_ns
        op = req.op
        if op == READ and req.size_bytes:
            dur = self.bus.transfer_ns(req.size_bytes)
            _, end = self.bus.book(req.size_bytes, max(now - dur, req.dispatch_ns))
        elif op == WRITE:
            end = self._write_end.pop(id(req), now)
        else:
            end = now
        if end > now:
            self.sim.at(end, self._done, req)
        else:
            self._done(req)

    def _done(self, req: IORequest) -> None:
        self.inflight -= 1
        req.done_ns = self.sim.now_ns
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        self.on_complete(req)

    def volatile_bytes(self) -> int:
        return self.device.volatile_bytes()

    @property
    def write_cache_mode(self) -> str:
        return self.device.write_cache_mode

    @property
    def fua(self) -> bool:
        return self.device.fua

    def stats(self) -> dict:
        return self.device.stats()
