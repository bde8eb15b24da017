"""workload=full_scan: an InnoDB full-table scan (mysqldump, ``SELECT ... INTO
OUTFILE``) of one table by one session of the InnoDB server, optionally beside an
OLTP-like background load on the same device (experiment E1).

The run: build the table by simulating its insert history (``table_*`` options,
``models.engine.innodb.table``), create its .ibd on the server's tablespace filesystem
(``placement.tablespace``; read with ``engine.innodb_flush_method``, O_DIRECT in E1) with
the server's buffer pool cold (``engine.innodb_buffer_pool_size``,
``innodb_old_blocks_pct`` / ``_time``, ``innodb_read_io_threads``: server variables), and
scan the clustered index in key order with the session's read-ahead (``read_ahead`` and
its knobs, ``models.engine.innodb.read_ahead``) issuing its reads into that pool
(``buffer.aio_reads``). The background load, if ``background_iops > 0``, is an open loop
of random 16 KB O_DIRECT reads and writes (``background_write_pct`` % writes) with
exponential gaps, uniform over ``background_span`` bytes from ``background_offset`` of
the block device that holds the tablespace; it stops when the scan ends, and so does
the server.

``run.scale`` shrinks ``table_size``, the server's buffer pool (as ``SET GLOBAL
innodb_buffer_pool_size`` before the scan would) and ``innodb_lra_size`` together; what it
changes in the physics: the file spans fewer cylinders (shorter seeks between leaves
that are far apart in the file) and the drive's 16 MB cache and read-ahead cover a
larger share of it.

Keys that were the workload's while the scan had a buffer pool of its own -
``innodb_buffer_pool_size``, ``innodb_old_blocks_pct``, ``innodb_old_blocks_time``,
``innodb_read_io_threads`` (server variables: ``engine.<name>``) and ``file_offset`` (the
.ibd is a file: ``placement.tablespace``) - are refused with a one-line error naming
the new key.

Reports: ``scan_s``, ``rows_per_s``, ``MB_s_read``, ``pages_read_<kind>``,
``bp_hit_rate``, the read-ahead counters, the table's fragmentation figures
(``table_*``), background latency (``bg_read_*_ms``) and, via ``iostat()``, iostat of
the device over the scan.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..block import BlockQueue
from ..checks import at_least
from ..device.request import READ, WRITE, IORequest
from ..engine.innodb.buffer.aio_reads import TablespaceReads
from ..engine.innodb.read_ahead import ReadAheadConfig
from ..engine.innodb.scan import FullTableScan, ScanConfig
from ..engine.innodb.table import TableConfig, build_table
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size

BG_IO_BYTES = 16384
# keys of the scan's former private buffer pool -> where they are now
MOVED = {"innodb_buffer_pool_size": "engine.innodb_buffer_pool_size",
         "innodb_old_blocks_pct": "engine.innodb_old_blocks_pct",
         "innodb_old_blocks_time": "engine.innodb_old_blocks_time",
         "innodb_read_io_threads": "engine.innodb_read_io_threads",
         "file_offset": "placement.tablespace (the .ibd is a file on the filesystem)"}
TABLE_NAME = "t"


@dataclass(frozen=True)
class FullScanConfig:
    """Flat options (``workload.<name>`` columns); grouped into the engine's configs by
    the properties below. Table: see ``TableConfig``; the session's read-ahead:
    ``ReadAheadConfig``; CPU: ``ScanConfig``. The ``MOVED`` keys: None, or an error."""

    # the table and its history
    table_size: str = TableConfig.table_size
    row_bytes: int = TableConfig.row_bytes
    pk_bytes: int = TableConfig.pk_bytes
    insert_pattern: str = TableConfig.insert_pattern
    loaded_share: float = TableConfig.loaded_share
    rows_per_user: float = TableConfig.rows_per_user
    session_rows: float = TableConfig.session_rows
    hot_users: float = TableConfig.hot_users
    old_user_share: float = TableConfig.old_user_share
    secondary_indexes: int = TableConfig.secondary_indexes
    secondary_key_bytes: int = TableConfig.secondary_key_bytes
    secondary_pattern: str = TableConfig.secondary_pattern
    # moved to the engine / placement (MOVED)
    file_offset: str | None = None
    innodb_buffer_pool_size: str | None = None
    innodb_old_blocks_pct: int | None = None
    innodb_old_blocks_time: int | None = None
    innodb_read_io_threads: int | None = None
    # read-ahead
    read_ahead: str = ReadAheadConfig.read_ahead
    innodb_read_ahead_threshold: int = ReadAheadConfig.innodb_read_ahead_threshold
    innodb_lra_size: int = ReadAheadConfig.innodb_lra_size
    innodb_lra_sleep: int = ReadAheadConfig.innodb_lra_sleep
    innodb_lra_n_node_recs_before_sleep: int = ReadAheadConfig.innodb_lra_n_node_recs_before_sleep
    aio_pages_per_submit: int = ReadAheadConfig.aio_pages_per_submit
    warmup_oversize: str = ReadAheadConfig.warmup_oversize
    # scanning thread CPU
    cpu_ns_per_row: int = ScanConfig.cpu_ns_per_row
    cpu_ns_per_page: int = ScanConfig.cpu_ns_per_page
    # background load
    background_iops: float = 0.0
    background_write_pct: float = 30.0
    background_span: str = "100g"
    background_offset: str = "0"

    def __post_init__(self) -> None:
        for key, new in MOVED.items():
            if getattr(self, key) is not None:
                raise ValueError(f"{key}: no longer a key of the scan: set {new}")
        for part in (TableConfig, ReadAheadConfig, ScanConfig):
            self._part(part)      # each part validates its own keys
        at_least(self, 0, "background_iops")
        if not 0 <= self.background_write_pct <= 100:
            raise ValueError(f"background_write_pct: must be in 0..100, got {self.background_write_pct}")
        if parse_size(self.background_span, "background_span") < BG_IO_BYTES:
            raise ValueError(f"background_span: must be at least 16k, got {self.background_span!r}")
        parse_size(self.background_offset, "background_offset")

    def _part(self, cls):
        names = {f.name for f in fields(cls)}
        return cls(**{k: getattr(self, k) for k in names})

    @property
    def table(self) -> TableConfig:
        return self._part(TableConfig)

    @property
    def read_ahead_cfg(self) -> ReadAheadConfig:
        return self._part(ReadAheadConfig)

    @property
    def scan(self) -> ScanConfig:
        return self._part(ScanConfig)


class _Background:
    """Open-loop random 16 KB reads and writes on the scan's block device."""

    def __init__(self, sim: Simulator, cfg: FullScanConfig, queue: BlockQueue,
                 rng: np.random.Generator) -> None:
        self.sim = sim
        self.queue = queue
        self.rng = rng
        self.gap_ns = 1e9 / cfg.background_iops
        self.write_p = cfg.background_write_pct / 100.0
        self.offset = parse_size(cfg.background_offset, "background_offset")
        span = parse_size(cfg.background_span, "background_span")
        span = min(span, queue.device.capacity_bytes - self.offset)
        self.blocks = span // BG_IO_BYTES
        if self.blocks < 1:
            raise ValueError("background_offset: leaves no room on the device for the background load")
        self.stopped = False
        self.lat = {READ: LatencyRecorder(), WRITE: LatencyRecorder()}
        self._buf = np.empty(0)
        self._i = 0

    def _draw(self):
        if self._i >= len(self._buf):
            n = 4096
            self._buf = np.stack([self.rng.exponential(self.gap_ns, n),
                                  self.rng.random(n), self.rng.integers(0, self.blocks, n)], 1)
            self._i = 0
        row = self._buf[self._i]
        self._i += 1
        return row

    def start(self) -> None:
        self.sim.after(int(self._draw()[0]), self._arrive)

    def _arrive(self, _arg=None) -> None:
        if self.stopped:
            return
        gap, u, block = self._draw()
        op = WRITE if u < self.write_p else READ
        self.queue.submit(IORequest(op, self.offset + int(block) * BG_IO_BYTES, BG_IO_BYTES,
                                    self._done, True, False, 1))
        self.sim.after(int(gap), self._arrive)

    def _done(self, bio: IORequest) -> None:
        self.lat[bio.op].add(bio.done_ns - bio.submit_ns)

    def results(self) -> dict:
        out = {}
        for op, name in ((READ, "read"), (WRITE, "write")):
            s = self.lat[op].summary(prefix=f"bg_{name}")
            out.update({k: v for k, v in s.items()
                        if k.endswith(("_count", "_mean_ms", "_p50_ms", "_p99_ms"))})
        return out


class FullScan:
    """The workload object the pipeline runs on ``server`` (an ``InnoDBServer``):
    ``start()``, ``results()``, ``iostat()``."""

    def __init__(self, sim: Simulator, cfg: FullScanConfig, server,
                 rng: np.random.Generator, scale: float = 1.0) -> None:
        if not hasattr(server, "create_tablespace"):
            raise ValueError(f"full_scan runs on the InnoDB server (engine=innodb_server_56), "
                             f"not on {type(server).__name__}")
        self.sim = sim
        self.cfg = cfg
        self.server = server
        self.scale = scale
        table_rng, bg_rng = rng.spawn(2)
        self.layout = build_table(cfg.table, table_rng, scale)
        queue = server.files.fs_tablespace.queue
        if self.layout.file_bytes > queue.device.capacity_bytes:
            raise ValueError(f"table_size: the .ibd file ({self.layout.file_bytes} bytes) "
                             f"does not fit on {queue.device.name!r}")
        self.queue = queue
        if scale != 1:
            server.pool.resize(max(64, int(server.cfg.pool_pages * scale)))
        space = server.create_tablespace(TABLE_NAME, self.layout.n_pages)
        self.bp = TablespaceReads(sim, server.pool, server.files, space, self.layout.page_kind,
                                  server.cfg.innodb_read_io_threads)
        self.scan = FullTableScan(sim, cfg.scan, cfg.read_ahead_cfg, self.layout, self.bp, scale)
        self.background = (_Background(sim, cfg, queue, bg_rng)
                           if cfg.background_iops > 0 else None)
        self._iostat_from: tuple | None = None
        self._iostat: dict | None = None

    def start(self) -> None:
        self.server.start()
        self._iostat_from = self.queue.snapshot()
        proc = self.scan.start()
        proc.add_callback(self._scan_done)
        if self.background is not None:
            self.background.start()

    def _scan_done(self, _value=None) -> None:
        self._iostat = self.queue.iostat(self._iostat_from)
        if self.background is not None:
            self.background.stopped = True
        self.server.stop()
        self.sim.stop()          # the server's threads would tick on

    def results(self) -> dict:
        out = self.scan.results()
        for k, v in self.layout.fragmentation().items():
            out[f"table_{k}"] = v
        if self.background is not None:
            out.update(self.background.results())
        return out

    def iostat(self) -> dict:
        if self._iostat is None:
            return self.queue.iostat(self._iostat_from)
        return self._iostat
