"""InnoDB and the MySQL server around it.

Commit path (experiment E2): ``redo`` (log buffer, log files, group flush),
``binlog`` (the binary log), ``latches`` (the shared InnoDB latches every statement,
prepare and commit passes: ``kernel_mutex``, ``dict_sys->mutex``, ``rseg->mutex``,
``index->lock`` and the right-most leaf page), ``commit_base`` (the steps of a
commit) and one module per commit protocol:

- ``commit_mysql51_builtin``: MySQL 5.1 built-in InnoDB, everything under
  ``prepare_commit_mutex``;
- ``commit_innodb_plugin_104``: InnoDB Plugin 1.0.4, fsyncs outside the mutex;
- ``commit_mysql56_binlog_group_commit``: MySQL 5.6 flush / sync / commit stages.

``make_commit_path(sim, cfg, cpu, fs, open_file)`` builds the one ``cfg.commit_protocol``
names; ``fs_open_file(fs)`` is the ``open_file`` for a ``models.fs.Filesystem``. The
server around them (tables, buffer pool, flushing) is ``server``.

``check_room`` is how the server's files (redo logs here, ibdata1 and the .ibd files in
``server.files``) are refused before they are created when their filesystem has no room
for them: a ``ValueError`` naming the key to change, instead of the allocator's
"filesystem full" after the file's page arrays were already sized.
"""
from __future__ import annotations

import numpy as np

from ...fs.config import PAGE_BYTES
from .binlog import Binlog, BinlogConfig
from .commit_base import PROTOCOLS, CommitConfig, CommitPath, Statement
from .commit_innodb_plugin_104 import InnoDBPlugin104
from .commit_mysql51_builtin import MySQL51Builtin
from .commit_mysql56_binlog_group_commit import MySQL56BinlogGroupCommit
from .redo import RedoConfig, RedoLog

COMMIT_PROTOCOLS: dict[str, type[CommitPath]] = {
    "mysql51_builtin": MySQL51Builtin,
    "innodb_plugin_104": InnoDBPlugin104,
    "mysql56_binlog_group_commit": MySQL56BinlogGroupCommit,
}
assert set(COMMIT_PROTOCOLS) == set(PROTOCOLS)


def make_commit_path(sim, cfg: CommitConfig, cpu, fs, open_file) -> CommitPath:
    """The commit path of ``cfg.commit_protocol`` on filesystem ``fs``;
    ``open_file(name, size_bytes)`` creates the redo logs, binlogs and binlog index."""
    return COMMIT_PROTOCOLS[cfg.commit_protocol](sim, cfg, cpu, fs, open_file)


def fs_room_bytes(fs) -> int | None:
    """Bytes the filesystem ``fs`` can still give files: its data blocks the allocator
    has not handed out (``models.fs.layout``: freed blocks are not reused); None for an
    object without that allocator."""
    layout = getattr(fs, "layout", None)
    if layout is None:
        return None
    return max(0, layout.capacity_blocks - layout.next_free) * PAGE_BYTES


def size_text(nbytes: int) -> str:
    """``nbytes`` as my.cnf writes a size: ``300G``, ``279.1G``, ``12M``, ``512``."""
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):.1f}".removesuffix(".0") + unit
    return str(nbytes)


def check_room(fs, what: str, nbytes: int, key: str, advice: str, reserved: int = 0) -> None:
    """``ValueError("<key>: <what> (<size>) does not fit ...; <advice>")`` unless a file of
    ``nbytes`` fits in what ``fs`` has left, less ``reserved`` bytes promised to a file
    not created yet."""
    room = fs_room_bytes(fs)
    if room is None:
        return
    room = max(0, room - reserved)
    if -(-nbytes // PAGE_BYTES) * PAGE_BYTES > room:
        raise ValueError(f"{key}: {what} ({size_text(nbytes)}) does not fit on the filesystem "
                         f"of {fs.name}: {size_text(room)} left for files; {advice}")


def fs_open_file(fs, log_files_cached: bool = True):
    """``open_file(name, size_bytes)`` on a ``models.fs.Filesystem``.

    Redo log files (a size is given) are preallocated and written: InnoDB fills them
    with zeros when it creates them (``os_file_set_size``). With
    ``log_files_cached`` their pages are also in the page cache, the state of a
    server whose log files were created or read since boot; without it every 512-byte
    log write to a page not yet cached reads the page first (read-modify-write).
    Binary logs and their index start empty and grow by appends. A redo log file
    the filesystem has no room for is a ``ValueError`` on ``innodb_log_file_size``."""

    def open_file(name: str, size_bytes: int | None):
        if not size_bytes:
            return fs.create(name, 0)
        check_room(fs, name, size_bytes, "innodb_log_file_size",
                   "make innodb_log_file_size or innodb_log_files_in_group smaller, or put "
                   "the redo log on a larger device (placement.redo_log)")
        f = fs.create(name, size_bytes, preallocate="zero_fill")
        if log_files_cached:
            fs.mark_cached(f, np.arange(-(-size_bytes // 4096)))
        return f

    return open_file


__all__ = ["check_room", "fs_open_file", "fs_room_bytes", "size_text", "Binlog", "BinlogConfig",
           "COMMIT_PROTOCOLS", "CommitConfig", "CommitPath",
           "InnoDBPlugin104", "MySQL51Builtin", "MySQL56BinlogGroupCommit", "RedoConfig",
           "RedoLog", "Statement", "make_commit_path"]
