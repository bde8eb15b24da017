"""One connection inserting single rows into a MyISAM table with random secondary keys
(E5): every index change goes through the OS page cache, so the filesystem, the
page cache's writeback and the block layer's queue decide the insert rate.

The table (EXPERIMENTS.md E5): ``id INT AUTO_INCREMENT PRIMARY KEY``, ``b1..b3 INT``
uniformly random, each with an index, and a 40-byte ``c``; ``key_buffer_size`` of key
cache; the index file is ``<filename>.MYI``, the rows ``<filename>.MYD``.

Modelled, per ``INSERT`` (MySQL ``mi_write`` and the statement around it):

- ``statement_cpu_us`` of server CPU (parse, open / lock the table, build the row,
  search the trees in the key cache);
- key-cache misses: while the index is larger than ``key_buffer_size``, a leaf is
  missing with probability ``1 - key_buffer_size / index size`` (uniformly random
  leaves; internal blocks stay cached) and is read with ``pread`` of one key block
  from the ``.MYI`` - a page-cache hit unless the page cache cannot hold the index;
- the row appended to the ``.MYD`` (``pwrite`` of ``row_bytes``);
- at the end of the statement (no ``delay_key_write``) every key block it changed is
  written with its own ``pwrite`` (``flush_key_blocks``, in file order): the leaf of
  each index, and on a split the new block and the parent (``models/engine/myisam``);
- the table state in the ``.MYI`` header rewritten at unlock (``mi_state_info_write``).

All writes are buffered (MyISAM never uses O_DIRECT and never fsyncs): what reaches
the disk, and when, is the filesystem's business - on ext3 ``data=ordered`` the 5 s
journal commits write the dirty index pages in the order they were first dirtied,
and a write to a page the commit has not yet written out waits for it
(``models/fs/ext3.py``); the page cache's dirty limit throttles the inserter.

``initial_rows``: rows the table holds before the run (its index built, cached and
clean). ``runtime_s`` (x ``run.scale``) of inserting is measured. Results: rows
inserted, rows/s, the index size, statement latency (``stmt_lat_*``: where the
stalls show), key-cache misses and the filesystem counters.

Deliberately not modelled: the query cache, binary log, concurrent connections and
table locks between them, ``bulk_insert_buffer_size`` (single-row INSERTs do not
use it), key-cache eviction writes (blocks are clean after each statement).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import above, at_least
from ..engine.myisam import KeyFile, KeyFileConfig
from ..fs import Filesystem
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size
from .fs_base import FsWorkload


@dataclass(frozen=True)
class MyisamInsertConfig:
    runtime_s: float = 60.0
    initial_rows: int = 0
    key_buffer_size: int | str = "2g"
    statement_cpu_us: float = 50.0
    row_bytes: int = 64                 # dynamic row: header + 4 INT + 1 + 40 bytes, padded
    state_bytes: int = 512              # the .MYI header's table state
    random_indexes: int = 3
    myisam_block_size: int = 1024
    filename: str = "t"

    def __post_init__(self) -> None:
        above(self, 0, "runtime_s")
        at_least(self, 0, "initial_rows")
        parse_size(self.key_buffer_size, "key_buffer_size")
        at_least(self, 0, "statement_cpu_us")
        at_least(self, 1, "row_bytes")
        at_least(self, 1, "state_bytes")
        at_least(self, 0, "random_indexes")
        if self.myisam_block_size not in (1024, 2048, 4096, 8192, 16384):
            raise ValueError("myisam_block_size: must be a power of two from 1024 to 16384, "
                             f"got {self.myisam_block_size!r}")


class MyisamInsert(FsWorkload):
    def __init__(self, sim: Simulator, cfg: MyisamInsertConfig, fs: Filesystem,
                 rng=None, scale: float = 1.0) -> None:
        super().__init__(sim, cfg, fs, rng, scale)
        self.runtime_ns = max(1, int(cfg.runtime_s * scale * 1e9))
        self.key_buffer_bytes = parse_size(cfg.key_buffer_size, "key_buffer_size")
        self.keys = KeyFile(KeyFileConfig(random_indexes=cfg.random_indexes,
                                          block_bytes=cfg.myisam_block_size),
                            cfg.initial_rows, self.rng)
        self.stmt_lat = LatencyRecorder()
        self.inserted = 0
        self.key_misses = 0
        self.process = None

    def start(self) -> None:
        self.process = self.sim.spawn(self._run(), "myisam_insert")

    def _stop(self, _arg=None) -> None:
        if not self.done:
            self.finish()

    def _run(self):
        cfg, fs, sim, keys = self.cfg, self.fs, self.sim, self.keys
        block = cfg.myisam_block_size
        # the table as it stands: written long ago, on disk; the index and the last
        # page of the rows in the page cache, clean
        myi = fs.create(cfg.filename + ".MYI", keys.size_bytes, "zero_fill")
        myd_size = cfg.initial_rows * cfg.row_bytes
        myd = fs.create(cfg.filename + ".MYD", myd_size, "zero_fill")
        fs.mark_cached(myi, np.arange(myi.npages))
        if myd.npages:
            fs.mark_cached(myd, np.arange(myd.npages - 1, myd.npages))
        sim.after(self.runtime_ns, self._stop)
        cpu_ns = int(cfg.statement_cpu_us * 1000)
        rnd = self.rng.random
        u, ui = rnd(4096), 0
        while not self.done:
            t0 = sim.now_ns
            if cpu_ns:
                yield cpu_ns
            index = keys.size_bytes
            if index > self.key_buffer_bytes:
                miss_p = 1.0 - self.key_buffer_bytes / index
                for _ in range(keys.cfg.random_indexes):
                    if ui == u.size:
                        u, ui = rnd(4096), 0
                    ui += 1
                    if u[ui - 1] < miss_p:
                        self.key_misses += 1
                        b = int(u[ui - 1] / miss_p * (keys.blocks - 1))
                        yield fs.pread(myi, keys.offset(b), block)
            calls = [(myd, myd_size, cfg.row_bytes)]
            myd_size += cfg.row_bytes
            calls += [(myi, keys.offset(b), block) for b in keys.insert()]
            calls.append((myi, 0, cfg.state_bytes))
            yield fs.pwrites(calls)
            self.inserted += 1
            self.stmt_lat.add(sim.now_ns - t0)

    def results(self) -> dict:
        base = super().results()
        secs = base["runtime_s"]
        out = {"rows": self.inserted, "rows_per_s": self.inserted / secs if secs > 0 else 0.0,
               "rows_total": self.keys.rows, "index_bytes": self.keys.size_bytes,
               "key_splits": self.keys.splits, "key_cache_misses": self.key_misses,
               "runtime_s": secs, "finished": base["finished"]}
        out.update(self.stmt_lat.summary("stmt_lat", slow_ms=100.0))
        out.update(self.fs_results())
        return out
