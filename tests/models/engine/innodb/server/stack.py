"""A small InnoDB server stack for tests: a device -> BlockQueue -> ext4 + page cache ->
InnoDBServer, and closed-loop clients running ``ops.Transaction`` lists."""
from __future__ import annotations

import numpy as np

from models.block import BlockQueue
from models.device.ram import RAM, RAMConfig
from models.device.ssd import SSD, SSDConfig
from models.engine.cpu import CPUConfig
from models.engine.innodb import fs_open_file
from models.engine.innodb.ops import Op, TableDef, Transaction
from models.engine.innodb.server import InnoDBServerConfig, make_innodb_server
from models.fs import Filesystem, PageCache
from models.fs.config import FsConfig, PageCacheConfig
from models.sim import Simulator


class Router:
    def pwrite(self, f, *a, **k):
        return f.fs.pwrite(f, *a, **k)

    def pread(self, f, *a, **k):
        return f.fs.pread(f, *a, **k)

    def fsync(self, f, *a, **k):
        return f.fs.fsync(f, *a, **k)

    def fdatasync(self, f, *a, **k):
        return f.fs.fdatasync(f, *a, **k)


def build(tables=(TableDef("sbtest1", 20_000, 180, ("k",)),), device="ram",
          cache_bytes="4g", cores=16, ram_MBps=5000.0, **cfg_kw):
    sim = Simulator()
    if device == "ssd":
        dev = SSD(sim, "sda", SSDConfig())
    else:
        dev = RAM(sim, "sda", RAMConfig(capacity_bytes=8 * 2**30, bandwidth_MBps=ram_MBps))
    q = BlockQueue(sim, dev)
    cache = PageCache(sim, PageCacheConfig(memory_bytes=cache_bytes))
    fs = Filesystem(sim, FsConfig(type="ext4"), q, cache, name="sda")
    cfg = InnoDBServerConfig(**cfg_kw)
    srv = make_innodb_server(sim, cfg, CPUConfig(cores=cores), fs, fs, Router(),
                             fs_open_file(fs, cfg.log_files_cached))
    srv.create_tables(list(tables))
    return sim, srv, fs, q


def clients(sim, srv, n, make_trx, duration_s, seed=1, preload=False):
    """``n`` closed-loop clients, each running ``make_trx(rng, thread)`` until
    ``duration_s``; returns a dict with the count of transactions committed."""
    out = {"trx": 0, "lat_ns": []}
    end = int(duration_s * 1e9)

    def client(i):
        rng = np.random.default_rng([seed, i])
        while sim.now_ns < end:
            t0 = sim.now_ns
            yield from srv.run(i, make_trx(rng, i))
            out["trx"] += 1
            out["lat_ns"].append(sim.now_ns - t0)
        return None

    if preload:
        srv.preload()
    srv.start()
    for i in range(n):
        sim.spawn(client(i), f"client{i}")

    def stopper():
        yield end
        srv.stop()
    sim.spawn(stopper(), "stop")
    sim.run(until_ns=end + 5 * 10**9)
    return out


def point_selects(table="sbtest1", rows=20_000, n=10, dist="uniform"):
    def make(rng, i):
        keys = rng.integers(1, rows + 1, n)
        return Transaction(tuple(Op("point_select", table, int(k)) for k in keys))
    return make


def updates(table="sbtest1", rows=20_000, n=4, kind="update_non_index", key_range=None):
    def make(rng, i):
        lo, hi = key_range(i) if key_range else (1, rows)
        keys = rng.integers(lo, hi + 1, n)
        return Transaction(tuple(Op(kind, table, int(k)) for k in keys))
    return make
