"""workload=full_scan: an InnoDB full-table scan (mysqldump, ``SELECT ... INTO
OUTFILE``) of one table read through the buffer pool with O_DIRECT, optionally beside
an OLTP-like background load on the same device (experiment E1).

The run: build the table by simulating its insert history (``table_*`` options,
``models.engine.innodb.table``), place its .ibd file at ``file_offset`` on the block
device, start with a cold buffer pool (``innodb_*`` options), and scan the clustered
index in key order with the chosen read-ahead (``read_ahead`` and its knobs,
``models.engine.innodb.read_ahead``). The background load, if
``background_iops > 0``, is an open loop of random 16 KB O_DIRECT reads and writes
(``background_write_pct`` % writes) with exponential gaps, uniform over
``background_span`` bytes from ``background_offset``; it stops when the scan ends.

``run.scale`` shrinks ``table_size``, ``innodb_buffer_pool_size`` and
``innodb_lra_size`` together; what it changes in the physics: the file spans fewer
cylinders (shorter seeks between leaves that are far apart in the file) and the
drive's 16 MB cache and read-ahead cover a larger share of it.

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
from ..engine.innodb.buffer_pool import BufferPool, BufferPoolConfig
from ..engine.innodb.read_ahead import ReadAheadConfig
from ..engine.innodb.scan import FullTableScan, ScanConfig
from ..engine.innodb.table import TableConfig, build_table
from ..metrics.latency import LatencyRecorder
from ..sim import Simulator
from ..units import parse_size

BG_IO_BYTES = 16384


@dataclass(frozen=True)
class FullScanConfig:
    """Flat options (``workload.<name>`` columns); grouped into the engine's configs by
    the properties below. Table: see ``TableConfig``; buffer pool: ``BufferPoolConfig``;
    read-ahead: ``ReadAheadConfig``; CPU: ``ScanConfig``."""

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
    file_offset: str = "0"
    # buffer pool
    innodb_buffer_pool_size: str = BufferPoolConfig.innodb_buffer_pool_size
    innodb_old_blocks_pct: int = BufferPoolConfig.innodb_old_blocks_pct
    innodb_old_blocks_time: int = BufferPoolConfig.innodb_old_blocks_time
    innodb_read_io_threads: int = BufferPoolConfig.innodb_read_io_threads
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
        for part in (TableConfig, BufferPoolConfig, ReadAheadConfig, ScanConfig):
            self._part(part)      # each part validates its own keys
        if parse_size(self.file_offset, "file_offset") % 4096:
            raise ValueError(f"file_offset: must be a multiple of 4k, got {self.file_offset!r}")
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
    def buffer_pool(self) -> BufferPoolConfig:
        return self._part(BufferPoolConfig)

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
    """The workload object the pipeline runs: ``start()``, ``results()``, ``iostat()``."""

    def __init__(self, sim: Simulator, cfg: FullScanConfig, queue: BlockQueue,
                 rng: np.random.Generator, scale: float = 1.0) -> None:
        self.sim = sim
        self.cfg = cfg
        self.queue = queue
        self.scale = scale
        table_rng, bg_rng = rng.spawn(2)
        self.layout = build_table(cfg.table, table_rng, scale)
        offset = parse_size(cfg.file_offset, "file_offset")
        if offset + self.layout.file_bytes > queue.device.capacity_bytes:
            raise ValueError(f"table_size: the .ibd file ({self.layout.file_bytes} bytes at "
                             f"{offset}) does not fit on {queue.device.name!r}")
        self.bp = BufferPool(sim, cfg.buffer_pool, queue, offset, self.layout.page_kind, scale)
        self.scan = FullTableScan(sim, cfg.scan, cfg.read_ahead_cfg, self.layout, self.bp, scale)
        self.background = (_Background(sim, cfg, queue, bg_rng)
                           if cfg.background_iops > 0 else None)
        self._iostat_from: tuple | None = None
        self._iostat: dict | None = None

    def start(self) -> None:
        self._iostat_from = self.queue.snapshot()
        proc = self.scan.start()
        proc.add_callback(self._scan_done)
        if self.background is not None:
            self.background.start()

    def _scan_done(self, _value=None) -> None:
        self._iostat = self.queue.iostat(self._iostat_from)
        if self.background is not None:
            self.background.stopped = True

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
