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
