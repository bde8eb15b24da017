"""A filesystem on the 15k SAS HDD (WCE off) for the filesystem workload tests."""
from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator


def hdd_fs(fs_type="ext4", nr_requests=128, scheduler="cfq", memory="1g", **fs_kw):
    sim = Simulator()
    dev = HDD(sim, "sda", default_15k_sas())
    q = BlockQueue(sim, dev, BlockConfig(scheduler=scheduler, nr_requests=nr_requests))
    cache = PageCache(sim, PageCacheConfig(memory_bytes=memory))
    return sim, Filesystem(sim, FsConfig(type=fs_type, **fs_kw), q, cache)


def run_workload(sim, wl, limit_s=600):
    wl.start()
    sim.run(until_ns=int(limit_s * 1e9))
    r = wl.results()
    assert r["finished"], "workload did not finish in time"
    return r


class BBUController:
    """Stand-in for a RAID controller with a battery-backed write cache (until
    models/device/raid/controller.py lands): a write completes after ``overhead_us`` plus its
    transfer at ``host_mb_s``, unless the cache (``cache_mb``) is full, in which case
    it waits for the destage, which drains at ``destage_mb_s``. Reads cost the same
    plus ``read_ms`` (a disk access). FLUSH costs ``overhead_us`` (nothing volatile)."""

    def __new__(cls, sim, **kw):
        from models.device.base import Device
        from models.device.request import FLUSH, READ

        class _BBU(Device):
            kind = "raid"

            def __init__(self, sim, overhead_us=60.0, host_mb_s=800.0, destage_mb_s=150.0,
                         cache_mb=256, read_ms=4.0, queue_depth=64):
                super().__init__(sim, "bbu0", 2**40, queue_depth, n_servers=1)
                self.overhead = int(overhead_us * 1000)
                self.host_ns_per_byte = 1e9 / (host_mb_s * 2**20)
                self.destage_ns_per_byte = 1e9 / (destage_mb_s * 2**20)
                self.cache_bytes = cache_mb * 2**20
                self.read_ns = int(read_ms * 1e6)
                self.dirty = 0.0
                self.last_ns = 0

            def _drain(self):
                now = self.sim.now_ns
                self.dirty = max(0.0, self.dirty - (now - self.last_ns) / self.destage_ns_per_byte)
                self.last_ns = now

            def service_ns(self, req):
                self._drain()
                t = self.overhead + int(req.size_bytes * self.host_ns_per_byte)
                if req.op == FLUSH:
                    return self.overhead
                if req.op == READ:
                    return t + self.read_ns
                over = self.dirty + req.size_bytes - self.cache_bytes
                if over > 0:
                    t += int(over * self.destage_ns_per_byte)
                self.dirty += req.size_bytes
                return t

        return _BBU(sim, **kw)


def raid1_bbu(sim):
    """The E4 "HDD + write-cache config": a RAID 1 of two 15k SAS disks (drive caches
    off) behind a controller with a battery-backed write-back cache (default
    ``RAIDConfig``)."""
    from models.device.raid import RAID, RAIDConfig
    members = [HDD(sim, f"hdd{i}", default_15k_sas()) for i in range(2)]
    return RAID(sim, "sda", RAIDConfig(level=1), members)
