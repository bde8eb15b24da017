"""The server variables of the InnoDB server that writes (``InnoDBServer``), under their
MySQL names, on top of the commit path's (``CommitConfig``: redo log, binary log,
commit protocol, the latched sections' cycles).

Sizes are strings as in my.cnf (``innodb_buffer_pool_size: 2G``). ``version`` selects
the algorithms that differ between releases:

- ``5.1``: the built-in InnoDB: the master thread flushes 100 pages a second
  (``innodb_io_capacity`` did not exist; PCT_IO(100) = 100) when dirty pages exceed
  ``innodb_max_dirty_pages_pct``; no adaptive flushing.
- ``5.5``: the master thread flushes ``innodb_io_capacity`` pages a second above
  ``innodb_max_dirty_pages_pct``, else - with ``innodb_adaptive_flushing`` - the
  pages the redo generation rate asks for (``buf_flush_get_desired_flush_rate``).
- ``5.6``: the page cleaner thread: LRU tail by ``innodb_lru_scan_depth``, then the
  flush list by ``max(af_get_pct_for_dirty, af_get_pct_for_lsn)`` of
  ``innodb_io_capacity``, capped at ``innodb_io_capacity_max``. Unset, that is 5.6's
  own default: twice ``innodb_io_capacity``, at least 2000 (``innobase_init``).
- ``percona_5.1``: Percona XtraDB 5.1 (on the InnoDB plugin: the 5.5 generation's
  master thread, ``innodb_io_capacity``): with ``innodb_adaptive_flushing`` the
  plugin's flushing (it takes priority), else ``innodb_adaptive_checkpoint`` =
  ``none`` | ``reflex`` | ``estimate`` | ``keep_average``.
- ``percona_5.5``: Percona Server 5.5: ``innodb_adaptive_flushing_method`` =
  ``native`` (5.5's) | ``estimate`` | ``keep_average`` when ``innodb_adaptive_flushing``
  is on (Percona's own default is ``estimate``; the key's default is MySQL's ``native``).
- Both Percona versions name the neighbour rule ``innodb_flush_neighbor_pages`` =
  ``area`` (the 64-page area, the default) | ``cont`` (contiguous pages) | ``none``
  in place of 5.6's ``innodb_flush_neighbors`` 2 | 1 | 0.

CPU per operation (cycles of the ``cpu`` model; estimates, not calibrated against a
published throughput): ``stmt_cycles`` (50,000 ~ 18 us at 2.8 GHz: packet receive and
reply, parse, open and lock the table, the optimiser - sysbench's BEGIN and COMMIT
are statements too), ``page_access_cycles`` (600: ``buf_page_get`` - page hash lookup,
block latch, binary search of the page directory), ``row_read_cycles`` (1,500 per row a
range reads: record to MySQL row format, the handler call), ``sort_row_cycles`` (800 per
row of a filesort / DISTINCT), ``row_update_cycles`` (8,000: the in-place update and its
redo), ``row_insert_cycles`` (10,000), ``row_delete_cycles`` (8,000),
``lock_rec_cycles`` of ``CommitConfig`` per row lock.

``innodb_autoextend_increment`` (MB, 1..1000): what ibdata1 grows by when full; unset, the
version's default (8 in 5.1 / 5.5, 64 in 5.6). The .ibd files grow by MySQL's fixed rule
(``autoextend.py``).

``innodb_change_buffering`` (none / inserts / deletes / changes / purges / all; 5.1 and
Percona 5.1: none / inserts) and ``innodb_change_buffer_max_size`` (5.6, % of the pool,
0..50): the change buffer (``ibuf.py``); unset, the version's default (5.1 ``inserts``,
5.5 / 5.6 ``all``). Percona's ``innodb_ibuf_accel_rate`` (100..999999 %, default 100)
scales the master thread's background merge (XtraDB's ``PCT_IBUF_IO``).

The redo log's combined size, ``innodb_log_files_in_group`` x ``innodb_log_file_size``
(in whole 16K pages, as InnoDB counts it), must be below the version's limit or MySQL
refuses to start (``innobase_start_or_create_for_mysql``): 4G on 5.1 and 5.5 ("combined
size of log files must be < 4 GB"), 512G on 5.6 ("< 512 GB": ``log_block_convert_lsn_to_no``
numbers 1G blocks of 512 bytes). Percona Server 5.1 (XtraDB 1.0.6-10 on) and 5.5 lift the
4 GB limit on 64-bit builds to 2^63 - 1 bytes (their manuals' ``innodb_log_file_size``);
there the files must still fit their filesystem (checked as they are created).

``innodb_flush_method`` (the redo log's side: ``redo.py``): ``O_DIRECT`` / ``ALL_O_DIRECT``
/ ``O_DIRECT_NO_FSYNC`` open the data files O_DIRECT (``os_file_create``).
``ALL_O_DIRECT`` is Percona Server's (refused on the other versions, as MySQL refuses
a value it does not know: "Unrecognized value ... for innodb_flush_method"). With
``O_DIRECT_NO_FSYNC`` (MySQL 5.6.7 on; refused on the other versions) ``fil_flush`` of a
tablespace - ibdata1 too - returns without an fsync (5.6 ``fil_buffering_disabled``): no
fsync after a flush batch, a single-page flush, the doublewrite copies, a checkpoint's
``fil_flush_file_spaces`` or a file extension (5.6 has none after an extension either;
later 5.7 / 8.0 releases added one). ``nosync`` (5.1-5.6 ``SRV_UNIX_NOSYNC``) is
narrower: a commit or prepare at ``innodb_flush_log_at_trx_commit=1`` writes the log
without flushing it (``trx_commit_off_kernel``: ``log_write_up_to(lsn, ..., FALSE)``;
the master thread's once-a-second flush still fsyncs - ``redo.py``), and a checkpoint
neither syncs the data files (``log_checkpoint`` skips ``fil_flush_file_spaces``) nor
the log file after the checkpoint info (``log_io_complete``); every other ``fil_flush``
- after flush batches, doublewrite copies, single-page flushes, file extensions -
fsyncs as with ``fsync`` (``fil_flush`` itself does not look at the method).

``undo_ring_pages`` (not a MySQL variable): the undo pages of ibdata1 the transactions
write round-robin - the undo that purge has not freed yet; 512 pages (8 MB) stands for
a purge that keeps up.
"""
from __future__ import annotations

from dataclasses import dataclass

from ....checks import at_least
from ....units import parse_size
from ..commit_base import CommitConfig
from ..tablespace import PAGE_SIZE

VERSIONS = ("5.1", "5.5", "5.6", "percona_5.1", "percona_5.5")
# the MySQL generation whose buffer pool, doublewrite and log margins a version runs
GENERATION = {"5.1": "5.1", "5.5": "5.5", "5.6": "5.6", "percona_5.1": "5.5",
              "percona_5.5": "5.5"}
ADAPTIVE_CHECKPOINT = ("none", "reflex", "estimate", "keep_average")     # XtraDB 5.1
ADAPTIVE_FLUSHING_METHODS = ("native", "estimate", "keep_average")     # Percona 5.5
FLUSH_NEIGHBOR_PAGES = {"none": 0, "cont": 1, "area": 2}               # Percona
CHANGE_BUFFERING = ("none", "inserts", "deletes", "changes", "purges", "all")
CHANGE_BUFFERING_51 = ("none", "inserts")        # the InnoDB Plugin 1.0 / 5.1
DATA_FLUSH_METHODS_DIRECT = ("O_DIRECT", "O_DIRECT_NO_FSYNC", "ALL_O_DIRECT")
FLUSH_METHODS_56 = ("O_DIRECT_NO_FSYNC",)      # innodb_flush_method values new in 5.6
# (bytes the combined redo log must stay below, as the message writes it), per version
LOG_GROUP_LIMIT = {"5.1": (4 << 30, "4G"), "5.5": (4 << 30, "4G"), "5.6": (512 << 30, "512G"),
                   "percona_5.1": (2**63 - 1, "2^63 - 1 bytes"),
                   "percona_5.5": (2**63 - 1, "2^63 - 1 bytes")}
SERVER_CYCLE_KEYS = ("stmt_cycles", "page_access_cycles", "row_read_cycles",
                     "sort_row_cycles", "row_update_cycles", "row_insert_cycles",
                     "row_delete_cycles")


@dataclass(frozen=True)
class InnoDBServerConfig(CommitConfig):
    """``CommitConfig`` plus the buffer pool, flushing, doublewrite, files and
    admission variables (MySQL names; module docstring for ``version``)."""

    version: str = "5.6"
    commit_protocol: str = "mysql56_binlog_group_commit"
    innodb_buffer_pool_size: str = "128M"
    innodb_buffer_pool_instances: int | None = None   # None (5.6: or 0): the version's default
    innodb_old_blocks_pct: int = 37
    innodb_old_blocks_time: int = 1000
    innodb_io_capacity: int = 200
    innodb_io_capacity_max: int | None = None         # None: max(2 x io_capacity, 2000)
    innodb_max_dirty_pages_pct: float = 75.0
    innodb_adaptive_flushing: bool = True
    innodb_adaptive_flushing_lwm: float = 10.0
    innodb_flushing_avg_loops: int = 30
    innodb_flush_neighbors: int = 1
    innodb_adaptive_checkpoint: str = "none"          # percona_5.1 only
    innodb_adaptive_flushing_method: str = "native"   # percona_5.5 only
    innodb_flush_neighbor_pages: str = "area"         # percona_* only
    innodb_ibuf_accel_rate: int = 100                 # percona_* only: % (100..999999)
    innodb_lru_scan_depth: int = 1024
    innodb_doublewrite: bool = True
    innodb_read_io_threads: int = 4
    innodb_write_io_threads: int = 4
    innodb_file_per_table: bool = True
    innodb_data_file_path: str = "ibdata1:12M:autoextend"
    innodb_autoextend_increment: int | None = None    # MB; None: the version's default
    innodb_change_buffering: str | None = None        # None: the version's default
    innodb_change_buffer_max_size: int = 25           # % of the pool; 5.6 only
    innodb_thread_concurrency: int = 0
    undo_ring_pages: int = 512
    # CPU per operation, cycles (module docstring)
    stmt_cycles: int = 50_000
    page_access_cycles: int = 600
    row_read_cycles: int = 1_500
    sort_row_cycles: int = 800
    row_update_cycles: int = 8_000
    row_insert_cycles: int = 10_000
    row_delete_cycles: int = 8_000

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.version not in VERSIONS:
            raise ValueError(f"version: must be one of {', '.join(VERSIONS)}, got {self.version!r}")
        self._check_log_group()
        if self.innodb_flush_method in FLUSH_METHODS_56 and self.version != "5.6":
            raise ValueError(f"innodb_flush_method: {self.innodb_flush_method} is a MySQL 5.6.7+ "
                             f"value, not of version {self.version!r}")
        if self.innodb_flush_method == "ALL_O_DIRECT" and not self.version.startswith("percona"):
            raise ValueError("innodb_flush_method: ALL_O_DIRECT is a Percona Server value "
                             f"(version percona_5.1 or percona_5.5), not of version {self.version!r}")
        if self.pool_bytes < 5 * 2**20:
            raise ValueError("innodb_buffer_pool_size: must be at least 5M, got "
                             f"{self.innodb_buffer_pool_size!r}")
        if self.innodb_buffer_pool_instances is not None:
            low = 0 if self.generation == "5.6" else 1      # 5.6: 0 is its default (8)
            if not low <= self.innodb_buffer_pool_instances <= 64:
                raise ValueError(f"innodb_buffer_pool_instances: must be in {low}..64 on "
                                 f"{self.version}, got {self.innodb_buffer_pool_instances}")
        if not 5 <= self.innodb_old_blocks_pct <= 95:
            raise ValueError(f"innodb_old_blocks_pct: must be in 5..95, got {self.innodb_old_blocks_pct}")
        at_least(self, 0, "innodb_old_blocks_time", "innodb_thread_concurrency",
                 *SERVER_CYCLE_KEYS)
        at_least(self, 100, "innodb_io_capacity")
        if self.io_capacity_max < self.innodb_io_capacity:
            # MySQL warns and lowers innodb_io_capacity to it; a sweep would silently
            # run another value than it names, so here it is an error
            raise ValueError(f"innodb_io_capacity_max: must be >= innodb_io_capacity "
                             f"({self.innodb_io_capacity}), got {self.innodb_io_capacity_max}")
        if not 0 <= self.innodb_max_dirty_pages_pct <= 99:
            raise ValueError("innodb_max_dirty_pages_pct: must be in 0..99, got "
                             f"{self.innodb_max_dirty_pages_pct}")
        if not 0 <= self.innodb_adaptive_flushing_lwm <= 70:
            raise ValueError("innodb_adaptive_flushing_lwm: must be in 0..70, got "
                             f"{self.innodb_adaptive_flushing_lwm}")
        if not 1 <= self.innodb_flushing_avg_loops <= 1000:
            raise ValueError("innodb_flushing_avg_loops: must be in 1..1000, got "
                             f"{self.innodb_flushing_avg_loops}")
        if self.innodb_flush_neighbors not in (0, 1, 2):
            raise ValueError(f"innodb_flush_neighbors: must be 0, 1 or 2, got {self.innodb_flush_neighbors!r}")
        self._check_percona()
        self._check_change_buffer()
        at_least(self, 100, "innodb_lru_scan_depth")
        for key in ("innodb_read_io_threads", "innodb_write_io_threads"):
            if not 1 <= getattr(self, key) <= 64:
                raise ValueError(f"{key}: must be in 1..64, got {getattr(self, key)}")
        at_least(self, 64, "undo_ring_pages")
        if (self.innodb_autoextend_increment is not None
                and not 1 <= self.innodb_autoextend_increment <= 1000):
            raise ValueError("innodb_autoextend_increment: must be in 1..1000 (MB), got "
                             f"{self.innodb_autoextend_increment}")
        self.data_file()

    def _check_log_group(self) -> None:
        """The redo log's combined size below the version's limit (``LOG_GROUP_LIMIT``),
        under ``innodb_log_files_in_group`` when the file size alone (x 2, the fewest
        files) would be within it, else under ``innodb_log_file_size``."""
        limit, text = LOG_GROUP_LIMIT[self.version]
        n = self.innodb_log_files_in_group
        file_bytes = parse_size(self.innodb_log_file_size, "innodb_log_file_size")
        if not self.version.startswith("percona"):
            file_bytes = file_bytes // PAGE_SIZE * PAGE_SIZE   # srv_log_file_size, in pages
        if n * file_bytes < limit:
            return
        key = "innodb_log_files_in_group" if 2 * file_bytes < limit else "innodb_log_file_size"
        raise ValueError(f"{key}: the log files' combined size (innodb_log_files_in_group x "
                         f"innodb_log_file_size) must be < {text} on {self.version}, got "
                         f"{n} x {self.innodb_log_file_size}")

    def _check_percona(self) -> None:
        """Percona's variables: valid values, and only on the version that has them."""
        for key, allowed, default, version in (
                ("innodb_adaptive_checkpoint", ADAPTIVE_CHECKPOINT, "none", ("percona_5.1",)),
                ("innodb_adaptive_flushing_method", ADAPTIVE_FLUSHING_METHODS, "native",
                 ("percona_5.5",)),
                ("innodb_flush_neighbor_pages", tuple(FLUSH_NEIGHBOR_PAGES), "area",
                 ("percona_5.1", "percona_5.5")),
                ("innodb_ibuf_accel_rate", range(100, 1_000_000), 100,     # %
                 ("percona_5.1", "percona_5.5"))):
            value = getattr(self, key)
            if value not in allowed:
                what = (f"in {allowed.start}..{allowed.stop - 1}" if isinstance(allowed, range)
                        else f"one of {', '.join(allowed)}")
                raise ValueError(f"{key}: must be {what}, got {value!r}")
            if value != default and self.version not in version:
                raise ValueError(f"{key}: a Percona Server variable (version "
                                 f"{' or '.join(version)}), not of version {self.version!r}")
        if self.version.startswith("percona") and self.innodb_flush_neighbors != 1:
            raise ValueError("innodb_flush_neighbors: a MySQL 5.6 variable; Percona Server "
                             "5.1 / 5.5 name it innodb_flush_neighbor_pages (area, cont, none)")

    def _check_change_buffer(self) -> None:
        allowed = CHANGE_BUFFERING_51 if self.version in ("5.1", "percona_5.1") else CHANGE_BUFFERING
        if self.innodb_change_buffering is not None and self.innodb_change_buffering not in allowed:
            raise ValueError(f"innodb_change_buffering: must be one of {', '.join(allowed)} "
                             f"(version {self.version}), got {self.innodb_change_buffering!r}")
        if not 0 <= self.innodb_change_buffer_max_size <= 50:
            raise ValueError("innodb_change_buffer_max_size: must be in 0..50, got "
                             f"{self.innodb_change_buffer_max_size}")
        if self.innodb_change_buffer_max_size != 25 and self.version != "5.6":
            raise ValueError("innodb_change_buffer_max_size: a MySQL 5.6 variable; before "
                             f"5.6 the change buffer is at most half the pool (version {self.version!r})")

    @property
    def change_buffering(self) -> str:
        """``innodb_change_buffering``, or the version's default: ``inserts`` in 5.1 (the
        built-in InnoDB and the Plugin buffer only inserts), ``all`` from 5.5."""
        if self.innodb_change_buffering is not None:
            return self.innodb_change_buffering
        return "inserts" if self.version in ("5.1", "percona_5.1") else "all"

    @property
    def change_buffer_max_pages(self) -> int:
        """The change buffer's maximum size in pages: ``innodb_change_buffer_max_size`` %
        of the pool in 5.6, half the pool before (``IBUF_POOL_SIZE_PER_MAX_SIZE``)."""
        if self.version == "5.6":
            return self.pool_pages * self.innodb_change_buffer_max_size // 100
        return self.pool_pages // 2

    @property
    def generation(self) -> str:
        """The MySQL release (5.1 / 5.5 / 5.6) whose mechanisms ``version`` runs."""
        return GENERATION[self.version]

    @property
    def flush_neighbors(self) -> int:
        """The neighbour rule ``Flusher`` applies: 0 none, 1 contiguous, 2 the area.
        5.6: ``innodb_flush_neighbors``; Percona: ``innodb_flush_neighbor_pages``; 5.1 /
        5.5 have no variable and flush the area (``innodb_flush_neighbors=0`` turns it off)."""
        if self.version.startswith("percona"):
            return FLUSH_NEIGHBOR_PAGES[self.innodb_flush_neighbor_pages]
        if self.version == "5.6" or not self.innodb_flush_neighbors:
            return self.innodb_flush_neighbors
        return 2

    @property
    def io_capacity_max(self) -> int:
        """``innodb_io_capacity_max``, or 5.6's default when unset: twice
        ``innodb_io_capacity``, at least 2000 (``innobase_init``; the 5.6 page cleaner is
        the one algorithm that reads it)."""
        if self.innodb_io_capacity_max is not None:
            return self.innodb_io_capacity_max
        return max(2 * self.innodb_io_capacity, 2000)

    @property
    def buffer_pool_instances(self) -> int:
        """The buffer pool instances the server runs: 1 below a 1 GiB pool whatever
        ``innodb_buffer_pool_instances`` says (``BUF_POOL_SIZE_THRESHOLD``); from 1 GiB
        the variable, unset 5.6's default 8 (``innobase_init``: 0 means 8) and 1 on the
        older versions (5.5's default; 5.1 has one pool). The model divides only the
        5.6 page cleaner's LRU scan by them (``innodb_lru_scan_depth`` per instance)."""
        if self.pool_bytes < 1 << 30:
            return 1
        if self.innodb_buffer_pool_instances:
            return self.innodb_buffer_pool_instances
        return 8 if self.generation == "5.6" else 1

    @property
    def autoextend_increment_mb(self) -> int:
        """``innodb_autoextend_increment``: ibdata1 grows by this many MB (the default
        8 in 5.1 / 5.5, 64 in 5.6; ``autoextend.py``)."""
        if self.innodb_autoextend_increment is not None:
            return self.innodb_autoextend_increment
        return 64 if self.generation == "5.6" else 8

    @property
    def pool_bytes(self) -> int:
        return parse_size(self.innodb_buffer_pool_size, "innodb_buffer_pool_size")

    @property
    def pool_pages(self) -> int:
        return self.pool_bytes // PAGE_SIZE

    @property
    def data_direct(self) -> bool:
        """Data files opened O_DIRECT (``os_file_set_nocache``)."""
        return self.innodb_flush_method in DATA_FLUSH_METHODS_DIRECT

    @property
    def native_aio(self) -> bool:
        """Linux native AIO (``innodb_use_native_aio``, on by default from MySQL 5.5 /
        InnoDB 1.1); the built-in InnoDB and the Plugin 1.0 of 5.1 (and XtraDB 5.1) have
        only InnoDB's simulated AIO."""
        return self.version not in ("5.1", "percona_5.1")

    @property
    def fil_buffering_disabled(self) -> bool:
        """5.6 ``fil_buffering_disabled``: ``O_DIRECT_NO_FSYNC`` - ``fil_flush`` of any
        tablespace (ibdata1 and its doublewrite buffer included) returns without fsync."""
        return self.innodb_flush_method == "O_DIRECT_NO_FSYNC"

    @property
    def data_fsync(self) -> bool:
        """``fil_flush`` after the flusher's and a file extension's data-file writes (not
        with ``O_DIRECT_NO_FSYNC``)."""
        return not self.fil_buffering_disabled

    @property
    def checkpoint_fsync(self) -> bool:
        """A checkpoint's ``fil_flush_file_spaces`` (not with ``nosync``, nor with
        ``O_DIRECT_NO_FSYNC``)."""
        return self.data_fsync and self.innodb_flush_method != "nosync"

    def data_file(self) -> tuple[str, int, bool]:
        """(name, initial bytes, autoextend) of the first ``innodb_data_file_path`` file."""
        spec = self.innodb_data_file_path.split(";")[0]
        parts = spec.split(":")
        try:
            if len(parts) < 2 or not parts[0]:
                raise ValueError
            size = parse_size(parts[1], "innodb_data_file_path")
            auto = len(parts) > 2 and parts[2] == "autoextend"
            if len(parts) > 2 and not auto and not parts[2].startswith("max"):
                raise ValueError
        except ValueError:
            raise ValueError("innodb_data_file_path: expected name:size[:autoextend], got "
                             f"{self.innodb_data_file_path!r}") from None
        if size < 12 * 2**20:
            raise ValueError("innodb_data_file_path: the system tablespace needs at least "
                             f"12M (doublewrite buffer, undo), got {self.innodb_data_file_path!r}")
        return parts[0], size, auto
