"""Small stand-in devices for testing the layers above devices."""
from models.device.base import Device


class FixedDevice(Device):
    """Serves every command in ``service_ns`` (FIFO), ``queue_depth`` tags."""

    def __init__(self, sim, service_ns=100_000, queue_depth=1, capacity_bytes=2**40, name="fake0"):
        super().__init__(sim, name, capacity_bytes, queue_depth)
        self.fixed_ns = service_ns
        self.served = []

    def service_ns(self, req):
        self.served.append((self.sim.now_ns, req.op, req.offset_bytes, req.size_bytes))
        return self.fixed_ns


class PerByteDevice(FixedDevice):
    """Overhead plus transfer time: ``overhead_ns + size / bytes_per_ns``."""

    def __init__(self, sim, overhead_ns=50_000, mb_per_s=100.0, **kw):
        super().__init__(sim, **kw)
        self.overhead_ns = overhead_ns
        self.bytes_per_ns = mb_per_s * 2**20 / 1e9

    def service_ns(self, req):
        self.served.append((self.sim.now_ns, req.op, req.offset_bytes, req.size_bytes))
        return self.overhead_ns + int(req.size_bytes / self.bytes_per_ns)
