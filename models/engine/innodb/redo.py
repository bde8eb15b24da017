"""The InnoDB redo log: log buffer, log blocks, circular log files, group flushing.

Modelled after ``log0log.c`` of MySQL 5.1 / InnoDB Plugin 1.0 (the same logic is in
5.5 and 5.6):

- **LSN and log blocks.** The log is a stream of ``innodb_log_block_size`` blocks (512
  bytes; Percona Server's ``innodb_log_block_size`` allows 4096). Each block has a
  12-byte header and a 4-byte trailer; mini-transactions append their records into
  the payload (``log_write_low``), and the LSN counts stream bytes, headers included,
  so a full block moves the LSN past its trailer and the next block's header.
- **Log buffer** (``innodb_log_buffer_size``): appends (``mtr_commit`` ->
  ``mtr_log_reserve_and_write``) take ``log_sys->mutex``, an InnoDB mutex: a waiter
  spins ``innodb_sync_spin_loops`` rounds of up to ``innodb_spin_wait_delay`` delay
  units before it sleeps (``mutex_spin_wait``), and a release prefers a spinning
  waiter (``models.sim.SpinMutex``). The caller says how long the mutex is held
  (``append(nbytes, cycles)``: the copy into the buffer, the dirty-page bookkeeping
  and - in 5.1 - the release of the mini-transaction's page latches). Once
  the unwritten part exceeds half the buffer, the appending thread writes it out
  (``log_check_margins`` -> ``log_flush_margin``, a write without fsync).
- **Log files.** ``innodb_log_files_in_group`` files of ``innodb_log_file_size`` each,
  a header of 4 blocks each (``LOG_FILE_HDR_SIZE``), written circularly; a write that
  crosses a file end is split (``log_group_write_buf``). Every write covers whole
  blocks, from the block holding the first unwritten byte to the end of the current
  block: the last, partly filled block is rewritten by the next write.
- **Group flush** (``log_write_up_to(lsn, wait, flush_to_disk)``): under
  ``log_sys->mutex``: done if the LSN is already flushed (or written, for a write-only
  call). If a write+flush is in progress (``n_pending_writes``) and it will cover the
  LSN (``current_flush_lsn >= lsn``), wait for it and return; if it will not, wait for
  it and start over. Otherwise become the writer: note ``write_lsn`` =
  ``current_flush_lsn`` = the current end of the log, write the whole unwritten buffer
  to the files *while holding* ``log_sys->mutex``, release it, fsync the log files
  that were written (``fil_flush``), then mark the flush complete and wake every
  waiter. One fsync therefore covers every commit that appended its records before
  the write started - group commit emerges from threads arriving while a flush runs.
- **innodb_flush_log_at_trx_commit** (what ``commit_flush(lsn)`` does): 1 = write and
  fsync at commit (write only with ``innodb_flush_method=nosync``); 2 = write at
  commit, fsync once a second; 0 = nothing at commit.
  The master thread calls ``log_buffer_flush_to_disk`` every
  ``innodb_flush_log_at_timeout`` seconds (1 s in 5.1/5.5) whatever the setting.
- **innodb_flush_method** (``os_file_create``, ``log_write_up_to`` of 5.1-5.6): what
  the log files are opened with, and whether ``fil_flush`` follows a write.
  ``fsync`` / ``O_DIRECT``: log files buffered (O_DIRECT applies to data files only),
  fsync'ed. ``O_DSYNC``: log files opened ``O_SYNC`` (InnoDB maps O_DSYNC to O_SYNC,
  "the datasync options seemed to corrupt files in 2001"), so every log write -
  the once-a-second and ``innodb_flush_log_at_trx_commit=2`` writes too - returns
  only once the filesystem's ``O_SYNC`` step is done (``models.fs``: the data on the
  device, a journal commit if the inode changed, the cache flush); ``log_write_up_to``
  then marks the log flushed and never calls ``fil_flush``. As the write is made
  holding ``log_sys->mutex``, no thread can append while the device takes it: group
  commit has nothing to group. Data files are not affected (still fsync'ed).
  ``littlesync`` (accepted by 5.1-5.6, "for internal testing") is ``fsync`` for the
  log. ``nosync``: a commit or prepare at ``innodb_flush_log_at_trx_commit=1``
  writes the log without flushing it, as ``=2`` does (``trx_commit_off_kernel``,
  ``trx_prepare_off_kernel``: ``log_write_up_to(lsn, ..., FALSE)``); the master
  thread's once-a-second ``log_buffer_flush_to_disk`` still fsyncs, and the
  checkpoint side is ``log_checkpoint.py``'s.
  ``ALL_O_DIRECT`` (Percona Server): log files opened O_DIRECT too, fsync still called.
  ``O_DIRECT_NO_FSYNC`` (MySQL 5.6.7+): the log as with ``O_DIRECT`` - opened buffered
  (``os_file_create`` sets O_DIRECT on data files only), ``fil_flush`` after the write
  (``fil_buffering_disabled`` spares only tablespaces, not the log space): the redo
  log is fsync'ed; only data-file fsyncs go (``server.config``).

Checkpoints and the checkpoint-age limits are ``log_checkpoint.py`` (with the buffer
pool that writes). Deliberately not modelled: multiple log groups / log archiving, LSN
wrap-around of the 64-bit counter, block checksums.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...checks import at_least
from ...fs.config import O_SYNC
from ...sim import Event, Mutex, Simulator, SpinMutex
from ...units import parse_size

LOG_BLOCK_HDR_SIZE = 12
LOG_BLOCK_TRL_SIZE = 4
LOG_FILE_HDR_BLOCKS = 4          # LOG_FILE_HDR_SIZE = 4 * OS_FILE_LOG_BLOCK_SIZE
LOG_BUF_WRITE_MARGIN = 4 * 512   # 4 * OS_FILE_LOG_BLOCK_SIZE
FLUSH_METHODS = ("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC",
                 "ALL_O_DIRECT")


@dataclass(frozen=True)
class RedoConfig:
    """The InnoDB redo-log variables, under their MySQL names (sizes as in my.cnf)."""

    innodb_flush_log_at_trx_commit: int = 1
    innodb_log_file_size: str = "512M"
    innodb_log_files_in_group: int = 2
    innodb_log_buffer_size: str = "1M"
    innodb_log_block_size: int = 512
    innodb_flush_method: str = "O_DIRECT"
    innodb_flush_log_at_timeout: int = 1
    innodb_sync_spin_loops: int = 20
    innodb_spin_wait_delay: int = 6

    def __post_init__(self) -> None:
        if self.innodb_flush_log_at_trx_commit not in (0, 1, 2):
            raise ValueError("innodb_flush_log_at_trx_commit: must be 0, 1 or 2, got "
                             f"{self.innodb_flush_log_at_trx_commit!r}")
        if self.innodb_log_block_size not in (512, 4096):
            raise ValueError("innodb_log_block_size: must be 512 or 4096, got "
                             f"{self.innodb_log_block_size!r}")
        at_least(self, 2, "innodb_log_files_in_group")
        if self.innodb_log_files_in_group > 100:    # the sysvar's range, 5.1 to 5.6
            raise ValueError("innodb_log_files_in_group: must be in 2..100, got "
                             f"{self.innodb_log_files_in_group}")
        bs = self.innodb_log_block_size
        size = parse_size(self.innodb_log_file_size, "innodb_log_file_size")
        if size % bs or size < (LOG_FILE_HDR_BLOCKS + 16) * bs:
            raise ValueError(f"innodb_log_file_size: must be a multiple of "
                             f"innodb_log_block_size ({bs}) and at least "
                             f"{(LOG_FILE_HDR_BLOCKS + 16) * bs} bytes, got {self.innodb_log_file_size!r}")
        buf = parse_size(self.innodb_log_buffer_size, "innodb_log_buffer_size")
        if buf < 16 * bs:
            raise ValueError(f"innodb_log_buffer_size: must be at least 16 log blocks "
                             f"({16 * bs} bytes), got {self.innodb_log_buffer_size!r}")
        if self.innodb_flush_method not in FLUSH_METHODS:
            raise ValueError(f"innodb_flush_method: must be one of {', '.join(FLUSH_METHODS)}, "
                             f"got {self.innodb_flush_method!r}")
        at_least(self, 0, "innodb_sync_spin_loops", "innodb_spin_wait_delay")
        if self.innodb_flush_log_at_timeout < 1:
            raise ValueError("innodb_flush_log_at_timeout: must be >= 1 (seconds), got "
                             f"{self.innodb_flush_log_at_timeout}")

    @property
    def log_file_size_bytes(self) -> int:
        return parse_size(self.innodb_log_file_size, "innodb_log_file_size")

    @property
    def log_buffer_size_bytes(self) -> int:
        return parse_size(self.innodb_log_buffer_size, "innodb_log_buffer_size")


def lsn_advance(lsn: int, nbytes: int, block_size: int) -> int:
    """The LSN after appending ``nbytes`` of log records at ``lsn`` (``log_write_low``):
    payload fills each block between its header and trailer; a block that becomes full
    moves the LSN to the first payload byte of the next block."""
    payload_end = block_size - LOG_BLOCK_TRL_SIZE
    while nbytes > 0:
        off = lsn % block_size
        if off < LOG_BLOCK_HDR_SIZE:
            lsn += LOG_BLOCK_HDR_SIZE - off
            off = LOG_BLOCK_HDR_SIZE
        take = min(payload_end - off, nbytes)
        lsn += take
        nbytes -= take
        if lsn % block_size == payload_end:
            lsn += LOG_BLOCK_TRL_SIZE + LOG_BLOCK_HDR_SIZE
    return lsn


class RedoLog:
    """One log group on a filesystem.

    ``fs`` offers ``pwrite(f, offset, size, direct=..., sync=...) -> Event`` (``sync``:
    ``models.fs.O_SYNC`` or 0) and ``fsync(f) -> Event``;
    ``files`` are the open ``ib_logfile*`` handles (``innodb_log_files_in_group`` of
    them, each ``innodb_log_file_size`` long). ``cpu`` (a ``models.engine.cpu.CPU``)
    pays the wake-ups of threads that sleep on ``log_sys->mutex`` or on a running
    flush. The kernel side of write()/fsync() (syscall CPU, copies, I/O, the wake-up
    at I/O completion) is the filesystem's: its Events fire when the call returns.

    Threads call ``yield from redo.append(nbytes, cycles)`` (returns the end LSN of their
    records) and ``yield from redo.write_up_to(lsn, flush)``.
    """

    START_LSN = 8192  # LOG_START_LSN

    def __init__(self, sim: Simulator, cfg: RedoConfig, fs: Any, files: list, cpu) -> None:
        if len(files) != cfg.innodb_log_files_in_group:
            raise ValueError(f"innodb_log_files_in_group: {cfg.innodb_log_files_in_group} "
                             f"files configured, {len(files)} given")
        self.sim = sim
        self.cfg = cfg
        self.fs = fs
        self.files = list(files)
        self.cpu = cpu
        bs = self.block = cfg.innodb_log_block_size
        self.file_hdr = LOG_FILE_HDR_BLOCKS * bs
        self.file_data = cfg.log_file_size_bytes - self.file_hdr
        self.capacity = self.file_data * len(files)
        self.buf_bytes = cfg.log_buffer_size_bytes
        # os_file_create(OS_LOG_FILE): the open flags of the log files
        self.direct = cfg.innodb_flush_method == "ALL_O_DIRECT"
        self.open_sync = O_SYNC if cfg.innodb_flush_method == "O_DSYNC" else 0
        # mutex_spin_wait: rounds x mean ut_delay (delay/2 units of 50 PAUSEs)
        self.spin_ns = cpu.ns(cfg.innodb_sync_spin_loops * cfg.innodb_spin_wait_delay / 2
                              * 50 * cpu.cfg.pause_cycles)
        self.mutex = SpinMutex(sim, "log_sys->mutex", self.spin_ns)
        # log_sys fields (lsn = next byte to be appended)
        self.lsn = self.START_LSN + LOG_BLOCK_HDR_SIZE
        self.written_lsn = self.lsn          # written_to_all_lsn
        self.flushed_lsn = self.lsn          # flushed_to_disk_lsn
        self.write_lsn = self.lsn            # end of the write in progress / last write
        self.current_flush_lsn = self.lsn
        self.base_lsn = self.START_LSN       # stats' "lsn" counts the log from here
        self.n_pending_writes = 0
        self.no_flush_event = Event(sim)     # os_event: set when no write+flush runs
        self.event_mutex = Mutex(sim, "no_flush_event->os_mutex")
        self.no_flush_event.succeed()
        self._dirty_files: set[int] = set()
        self._master = None
        # statistics
        self.appends = 0
        self.bytes_appended = 0
        self.writes = 0               # log_write_up_to writes (each may be split)
        self.file_writes = 0          # pwrite() calls
        self.bytes_written = 0
        self.fsyncs = 0               # fsync() calls on log files
        self.flushes = 0              # write+flush operations (one fil_flush each; with
                                      # O_DSYNC the O_SYNC write is the flush)
        self.flush_requests = 0       # write_up_to(flush=True) calls from transactions
        self.flush_waits = 0          # ... that waited for another thread's flush
        self.margin_writes = 0
        self.log_waits = 0            # Innodb_log_waits: appends that found the buffer full

    def warm_start(self, lsn: int) -> None:
        """Before the run, outside simulated time: the log as a run that wrote it up to
        ``lsn`` leaves it - written and flushed there, the next write at its file
        position (a warm replay's, ``server.warmup``); the stats count the log from
        here."""
        if self.appends or self.writes:
            raise ValueError("warm_start: the log has been written")
        if lsn < self.lsn:
            raise ValueError(f"warm_start: LSN {lsn} is behind the log's {self.lsn}")
        self.base_lsn += lsn - self.lsn
        self.lsn = self.written_lsn = self.flushed_lsn = lsn
        self.write_lsn = self.current_flush_lsn = lsn

    # -- appending (mtr_commit -> log_write_low) -------------------------------------
    def append(self, nbytes: int, cycles: float = 0):
        """Append ``nbytes`` of log records holding ``log_sys->mutex`` for ``cycles``;
        returns their end LSN."""
        yield from self.cpu.lock(self.mutex, self.spin_ns)
        # log_reserve_and_open: no room for the records in the log buffer - flush it
        # and retry (Innodb_log_waits)
        while (self.lsn - self._area_start(self.written_lsn) + LOG_BUF_WRITE_MARGIN
               + 5 * nbytes // 4 > self.buf_bytes and self.lsn > self.written_lsn):
            self.mutex.release()
            self.log_waits += 1
            yield from self.write_up_to(self.lsn, True, from_trx=False)
            yield from self.cpu.lock(self.mutex, self.spin_ns)
        if cycles:
            yield from self.cpu.run(cycles)
        self.lsn = lsn_advance(self.lsn, nbytes, self.block)
        end = self.lsn
        self.appends += 1
        self.bytes_appended += nbytes
        over = end - self._area_start(self.written_lsn) > self.buf_bytes // 2
        self.mutex.release()
        if over and self.n_pending_writes == 0:
            # log_free_check -> log_check_margins -> log_flush_margin: write, no fsync
            self.margin_writes += 1
            yield from self.write_up_to(end, False, from_trx=False)
        return end

    # -- log_write_up_to ---------------------------------------------------------------
    def write_up_to(self, lsn: int, flush: bool, from_trx: bool = True):
        """Make the log durable (``flush``) or written up to ``lsn``; returns True when
        this thread did the write itself, False when another thread's write covered it."""
        cpu = self.cpu
        if flush and from_trx:
            self.flush_requests += 1
        waited = False
        while True:
            yield from cpu.lock(self.mutex, self.spin_ns)
            if (self.flushed_lsn if flush else self.written_lsn) >= lsn:
                self.mutex.release()
                if waited and flush and from_trx:
                    self.flush_waits += 1
                return False
            if self.n_pending_writes > 0:
                ev = self.no_flush_event
                covers = (self.current_flush_lsn if flush else self.write_lsn) >= lsn
                self.mutex.release()
                waited = True
                yield from cpu.wait_broadcast(ev, self.event_mutex)
                if covers:                      # do_waits: the running flush covers us
                    if flush and from_trx:
                        self.flush_waits += 1
                    return False
                continue                        # wait, then try to start a new write
            if not flush and self.lsn <= self.written_lsn:
                self.mutex.release()
                return False
            yield from self._write_and_flush(flush)
            return True

    def _write_and_flush(self, flush: bool):
        """The writer's part of ``log_write_up_to``; entered holding ``log_sys->mutex``."""
        self.n_pending_writes = 1
        self.no_flush_event = Event(self.sim)   # os_event_reset
        start = self._area_start(self.written_lsn)
        end = -(-self.lsn // self.block) * self.block
        self.write_lsn = self.lsn
        if flush:
            self.current_flush_lsn = self.lsn
        self.writes += 1
        for f_idx, off, size in self._file_extents(start, end):
            self.file_writes += 1
            self.bytes_written += size
            self._dirty_files.add(f_idx)
            yield self.fs.pwrite(self.files[f_idx], off, size, direct=self.direct,
                                 sync=self.open_sync)
        self.written_lsn = self.write_lsn
        self.mutex.release()
        if self.open_sync:
            # the O_SYNC writes returned once durable: flushed, no fil_flush
            if flush:
                self.flushes += 1
            self.flushed_lsn = self.write_lsn
            self._dirty_files.clear()
        elif flush:
            self.flushes += 1
            dirty, self._dirty_files = sorted(self._dirty_files), set()
            for f_idx in dirty:                     # fil_flush(group->space_id)
                self.fsyncs += 1
                yield self.fs.fsync(self.files[f_idx])
            self.flushed_lsn = self.write_lsn
        yield from self.cpu.lock(self.mutex, self.spin_ns)
        self.n_pending_writes = 0
        ev = self.no_flush_event
        self.mutex.release()
        ev.succeed()                                # log_flush_do_unlocks

    def _area_start(self, lsn: int) -> int:
        return lsn - lsn % self.block

    def _file_extents(self, start_lsn: int, end_lsn: int):
        """(file index, offset, size) pieces of the stream range [start, end)."""
        pos = start_lsn - (self.START_LSN)
        n = end_lsn - start_lsn
        while n > 0:
            ring = pos % self.capacity
            f_idx, in_file = divmod(ring, self.file_data)
            take = min(n, self.file_data - in_file)
            yield f_idx, self.file_hdr + in_file, take
            pos += take
            n -= take

    # -- commit-time policy and the master thread --------------------------------------
    def commit_flush(self, lsn: int):
        """What a commit (or prepare) does with the log per innodb_flush_log_at_trx_commit
        (``trx_commit_off_kernel`` / ``trx_prepare_off_kernel``)."""
        mode = self.cfg.innodb_flush_log_at_trx_commit
        if mode == 1:
            yield from self.write_up_to(lsn, self.cfg.innodb_flush_method != "nosync")
        elif mode == 2:
            yield from self.write_up_to(lsn, False)

    def start_master(self) -> None:
        """Start the master thread's once-a-``innodb_flush_log_at_timeout`` flush."""
        if self._master is None:
            self._running = True
            self._master = self.sim.spawn(self._master_loop(), "srv_master_thread")

    def stop_master(self) -> None:
        self._running = False

    def _master_loop(self):
        period = self.cfg.innodb_flush_log_at_timeout * 1_000_000_000
        while True:
            yield period
            if not self._running:
                return
            # log_buffer_flush_to_disk(): log_write_up_to(log_sys->lsn, ALL_GROUPS, TRUE)
            yield from self.write_up_to(self.lsn, True, from_trx=False)

    def stats(self) -> dict:
        return {
            "lsn": self.lsn - self.base_lsn, "appends": self.appends,
            "bytes_appended": self.bytes_appended, "writes": self.writes,
            "file_writes": self.file_writes, "bytes_written": self.bytes_written,
            "fsyncs": self.fsyncs, "flushes": self.flushes,
            "flush_requests": self.flush_requests, "flush_waits": self.flush_waits,
            "group_size_avg": self.flush_requests / self.flushes if self.flushes else 0.0,
            "margin_writes": self.margin_writes, "log_waits": self.log_waits,
            "mutex_contended": self.mutex.contended,
            "mutex_wait_s": self.mutex.wait_ns_total / 1e9,
        }
