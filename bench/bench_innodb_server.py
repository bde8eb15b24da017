"""Speed of the InnoDB server model: an ``oltp_read_write``-shaped load, simulated page
accesses per wall-clock (CPU) second.

The transaction is sysbench 1.0's ``oltp_read_write`` (10 point selects, 4 ranges of
100 rows - plain, SUM, ORDER BY, DISTINCT -, an index update, a non-index update, a
delete and an insert of the same id, inside BEGIN / COMMIT), uniform keys, built here
from ``ops`` (the ``sysbench`` workload proper lives in ``models.workload``). Stack:
SSD model, ext4 mounted nobarrier (as on a battery-backed controller), deadline; ``tables`` x ``table_size`` rows, pool a quarter of the
data. Prints one JSON line::

    python -m bench.bench_innodb_server [--time S] [--threads N] [--tables N]
                                        [--table-size ROWS] [--device ssd|ram] [--profile]

The target of issue 14 is ``--time 60 --threads 16 --tables 8 --table-size 1000000``
in under 60 s of wall time on one core.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import time

import numpy as np

from models.block import BlockQueue
from models.device.ram import RAM, RAMConfig
from models.device.ssd import SSD, SSDConfig
from models.engine.cpu import CPUConfig
from models.engine.innodb import fs_open_file
from models.engine.innodb.ops import Op, TableDef, Transaction
from models.engine.innodb.server import InnoDBServerConfig, make_innodb_server
from models.engine.innodb.tablespace import PAGE_SIZE
from models.fs import Filesystem, PageCache
from models.fs.config import FsConfig, PageCacheConfig
from models.sim import Simulator
from pipeline.registry import FileRouter


def oltp_read_write(rng, tables: int, rows: int, range_size: int = 100) -> Transaction:
    t = f"sbtest{int(rng.integers(1, tables + 1))}"
    key = lambda: int(rng.integers(1, rows + 1))      # noqa: E731
    ops = [Op("point_select", t, key()) for _ in range(10)]
    for variant in ("", "sum", "order", "distinct"):
        ops.append(Op("range_select", t, key(), range_size, variant=variant))
    ops.append(Op("update_index", t, key()))
    ops.append(Op("update_non_index", t, key()))
    k = key()
    ops += [Op("delete", t, k), Op("insert", t, k)]
    return Transaction(tuple(ops))


def run(time_s: float, threads: int, tables: int, table_size: int, device: str = "ssd") -> dict:
    sim = Simulator()
    dev = (RAM(sim, "sda", RAMConfig(capacity_bytes=16 * 2**30)) if device == "ram"
           else SSD(sim, "sda", SSDConfig()))
    q = BlockQueue(sim, dev)
    cache = PageCache(sim, PageCacheConfig(memory_bytes="16g"))
    fs = Filesystem(sim, FsConfig(type="ext4", nobarrier=True), q, cache, name="sda")
    defs = [TableDef(f"sbtest{i + 1}", table_size, 180, ("k",)) for i in range(tables)]
    probe = InnoDBServerConfig()
    data_pages = 0
    from models.engine.innodb.server.layout import TableLayout
    for i, d in enumerate(defs):
        data_pages += TableLayout(i + 1, d).n_pages
    pool = max(8 * 2**20, data_pages * PAGE_SIZE // 4)
    cfg = InnoDBServerConfig(innodb_buffer_pool_size=str(pool), innodb_log_file_size="256M",
                             innodb_flush_log_at_trx_commit=1)
    srv = make_innodb_server(sim, cfg, CPUConfig(cores=16), fs, fs, FileRouter(),
                             fs_open_file(fs, probe.log_files_cached))
    srv.create_tables(defs)
    srv.preload()
    srv.start()
    end = int(time_s * 1e9)
    done = [0]

    def client(i):
        rng = np.random.default_rng([7, i])
        while sim.now_ns < end:
            yield from srv.run(i, oltp_read_write(rng, tables, table_size))
            done[0] += 1

    for i in range(threads):
        sim.spawn(client(i), f"client{i}")
    c0 = time.process_time()
    w0 = time.perf_counter()
    sim.run(until_ns=end)
    cpu_s = time.process_time() - c0
    wall_s = time.perf_counter() - w0
    srv.stop()
    st = srv.status()
    return {"device": device, "time_s": time_s, "threads": threads, "tables": tables, "table_size": table_size,
            "pool_pages": srv.pool.capacity, "data_pages": data_pages,
            "tps": done[0] / time_s, "page_accesses": st["Innodb_buffer_pool_read_requests"],
            "page_reads": st["Innodb_buffer_pool_reads"],
            "pages_flushed": st["Innodb_buffer_pool_pages_flushed"],
            "cpu_s": round(cpu_s, 2), "wall_s": round(wall_s, 2),
            "page_accesses_per_cpu_s": round(st["Innodb_buffer_pool_read_requests"] / cpu_s),
            "sim_events": sim.events_processed,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--table-size", type=int, default=1_000_000)
    ap.add_argument("--device", choices=("ssd", "ram"), default="ssd")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        out = run(a.time, a.threads, a.tables, a.table_size, a.device)
        prof.disable()
        print(json.dumps(out))
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        pstats.Stats(prof).sort_stats("cumtime").print_stats(45)
        return
    print(json.dumps(run(a.time, a.threads, a.tables, a.table_size, a.device)))


if __name__ == "__main__":
    main()
