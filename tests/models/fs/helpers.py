"""Small stacks and devices for the filesystem tests."""
from models.block import BlockConfig, BlockQueue
from models.device.base import Device
from models.device.request import FLUSH, READ, WRITE
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator


class CacheDevice(Device):
    """Fixed service time per command (plus ``size / mb_per_s``) and a volatile write cache: acknowledged,
    non-FUA writes stay volatile until a FLUSH completes (which costs ``flush_ns``).
    ``log`` records (time_ns, op, offset, size, fua) at service start."""

    def __init__(self, sim, service_ns=100_000, flush_ns=1_000_000, queue_depth=1,
                 write_cache=True, mb_per_s=0.0, capacity_bytes=2**36, name="dev0"):
        super().__init__(sim, name, capacity_bytes, queue_depth)
        self.fixed_ns = service_ns
        self.ns_per_byte = 1e9 / (mb_per_s * 2**20) if mb_per_s else 0.0
        self.flush_ns = flush_ns
        self.write_cache = write_cache
        self.dirty = 0
        self.log = []

    def service_ns(self, req):
        self.log.append((self.sim.now_ns, req.op, req.offset_bytes, req.size_bytes, req.fua))
        if req.op == FLUSH:
            self.dirty = 0
            return self.flush_ns
        if req.op == WRITE and self.write_cache and not req.fua:
            self.dirty += req.size_bytes
        return self.fixed_ns + int(req.size_bytes * self.ns_per_byte)

    def volatile_bytes(self):
        return self.dirty

    def ops(self, op):
        return [e for e in self.log if e[1] == op]


def stack(fs_type="ext4", device=None, memory="64m", nr_requests=128, cache_cfg=None, **fs_kw):
    sim = Simulator()
    dev = device(sim) if callable(device) else CacheDevice(sim)
    q = BlockQueue(sim, dev, BlockConfig(nr_requests=nr_requests))
    cache = PageCache(sim, cache_cfg or PageCacheConfig(memory_bytes=memory))
    fs = Filesystem(sim, FsConfig(type=fs_type, **fs_kw), q, cache)
    return sim, dev, q, fs


def run_thread(sim, gen, until_ns=None):
    """Run ``gen`` as a simulated thread; returns its return value."""
    p = sim.spawn(gen)
    if until_ns is None:
        while not p.triggered and sim.pending:
            sim.run(until_ns=sim.now_ns + 10**9)
    else:
        sim.run(until_ns=until_ns)
    assert p.triggered, "thread did not finish"
    return p.value


def timed(sim, ev_factory):
    """Generator: call ``ev_factory()`` and return how long the returned event took."""
    t0 = sim.now_ns
    yield ev_factory()
    return sim.now_ns - t0


def trace(fs, dev, since=0):
    """(op, where, size, fua): where = 'data' | 'journal' | 'meta' | None (flush)."""
    jstart = fs.layout.journal_start * 4096
    jend = jstart + fs.layout.journal_blocks * 4096
    out = []
    for t, op, off, size, fua in dev.log[since:]:
        if op == FLUSH:
            out.append(("flush",))
            continue
        where = "journal" if jstart <= off < jend else "meta" if off < jstart else "data"
        out.append(("read" if op == READ else "write", where, size, fua))
    return out
