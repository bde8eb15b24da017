"""A full-table scan in primary-key order (``SELECT * FROM t`` as mysqldump or an
online schema change runs it) by one server thread, through the server's buffer pool
(``buffer.aio_reads.TablespaceReads``: the tablespace's reads into it).

Modelled: the thread descends from the root to the first leaf (reading the root and
non-leaf pages on the way), then moves leaf to leaf along FIL_PAGE_NEXT - never
through the level-1 pages again. For each leaf it asks the buffer pool for the page
(a synchronous 16 KB read on a miss, a wait if read-ahead is already reading it),
lets the read-ahead policies react (first access: linear; after a miss: random;
before a leaf: logical), then spends ``cpu_ns_per_row`` per row and
``cpu_ns_per_page`` per page (latching the page, restoring the cursor) on the CPU,
and touches the page once more (the cursor restored between MySQL's row batches,
``buf_page_optimistic_get``: this is what makes scanned pages young when
``innodb_old_blocks_time`` is 0).
A physical warm-up runs before the first row and counts in the scan time.

Results: scan seconds, rows/s, MB/s read from disk, pages read per page kind (which
shows that logical read-ahead reads only clustered leaves and a warm-up reads
everything), buffer-pool hit rate, the policies' counters.

Deliberately not modelled: sending rows to the client (mysqldump's own CPU and the
network are assumed to keep up), the adaptive hash index, MVCC (no old row
versions), page checksum CPU in the I/O threads.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import at_least
from ...sim import Simulator
from .buffer.aio_reads import TablespaceReads
from .read_ahead import ReadAhead, ReadAheadConfig, make_read_ahead
from .read_ahead.base import ScanContext
from .table import KIND_NAMES, TableLayout
from .tablespace import PAGE_SIZE


@dataclass(frozen=True)
class ScanConfig:
    """CPU of the scanning thread.

    - ``cpu_ns_per_row``: ``row_search_for_mysql`` + conversion to the MySQL row
      format + the handler call, per row.
    - ``cpu_ns_per_page``: per leaf: latching, cursor restore, moving to the next page.
    """

    cpu_ns_per_row: int = 1000
    cpu_ns_per_page: int = 5000

    def __post_init__(self) -> None:
        at_least(self, 0, "cpu_ns_per_row", "cpu_ns_per_page")


class FullTableScan:
    """One scan of ``layout``'s clustered index through ``bp``."""

    def __init__(self, sim: Simulator, cfg: ScanConfig, ra_cfg: ReadAheadConfig,
                 layout: TableLayout, bp: TablespaceReads, scale: float = 1.0) -> None:
        self.sim = sim
        self.cfg = cfg
        self.layout = layout
        self.bp = bp
        self.ctx = ScanContext(sim, bp, layout, ra_cfg, scale)
        self.policies = make_read_ahead(self.ctx)
        self.start_ns = 0
        self.scan_start_ns = 0
        self.end_ns: int | None = None
        self.rows_done = 0
        self.process = None

    def start(self):
        self.process = self.sim.spawn(self.run(), "full_scan")
        return self.process

    def run(self):
        sim, bp, cfg = self.sim, self.bp, self.cfg
        self.start_ns = sim.now_ns
        for pol in self.policies:
            yield from pol.before_scan()
        self.scan_start_ns = sim.now_ns
        for page in self.layout.upper_path:
            ev = bp.fetch(page)
            if ev is not None:
                yield ev
            bp.access(page)
        leaf_hooks = [p for p in self.policies if type(p).before_leaf is not ReadAhead.before_leaf]
        miss_hooks = [p for p in self.policies if type(p).after_miss is not ReadAhead.after_miss]
        first_hooks = [p for p in self.policies
                       if type(p).on_first_access is not ReadAhead.on_first_access]
        leaves = self.layout.leaves.tolist()
        rows = self.layout.leaf_rows.tolist()
        per_row, per_page = cfg.cpu_ns_per_row, cfg.cpu_ns_per_page
        for i, page in enumerate(leaves):
            for pol in leaf_hooks:
                gen = pol.before_leaf(i)
                if gen is not None:
                    yield from gen
            sync_before = bp.sync_reads
            ev = bp.fetch(page)
            if ev is not None:
                yield ev
                if bp.sync_reads > sync_before:
                    for pol in miss_hooks:
                        wait = pol.after_miss(page)
                        if wait is not None:
                            yield wait
            if bp.access(page):
                for pol in first_hooks:
                    wait = pol.on_first_access(page)
                    if wait is not None:
                        yield wait
            yield per_page + rows[i] * per_row
            # the persistent cursor is restored on the page between row batches
            # (buf_page_optimistic_get): a second access
            bp.access(page)
            self.rows_done += rows[i]
        self.end_ns = sim.now_ns

    @property
    def done(self) -> bool:
        return self.end_ns is not None

    def results(self) -> dict:
        end = self.end_ns if self.end_ns is not None else self.sim.now_ns
        secs = (end - self.start_ns) / 1e9
        bp = self.bp
        out = {
            "scan_s": secs,
            "scan_complete": int(self.end_ns is not None),
            "rows": self.rows_done,
            "rows_per_s": self.rows_done / secs if secs > 0 else 0.0,
            "leaf_pages": len(self.layout.leaves),
            "MB_read": bp.bytes_read / 2**20,
            "MB_s_read": bp.bytes_read / 2**20 / secs if secs > 0 else 0.0,
            "pages_read": int(bp.pages_read_by_kind.sum()),
        }
        for k, name in enumerate(KIND_NAMES):
            out[f"pages_read_{name}"] = int(bp.pages_read_by_kind[k])
        out.update(bp.stats())
        for pol in self.policies:
            out.update(pol.stats())
        out["table_MB"] = self.layout.n_pages * PAGE_SIZE / 2**20
        return out

