"""InnoDB and the MySQL server around it.

Commit path (experiment E2): ``redo`` (log buffer, log files, group flush),
``binlog`` (the binary log), ``commit_base`` (statement execution and the steps of a
commit) and one module per commit protocol:

- ``commit_mysql51_builtin``: MySQL 5.1 built-in InnoDB, everything under
  ``prepare_commit_mutex``;
- ``commit_innodb_plugin_104``: InnoDB Plugin 1.0.4, fsyncs outside the mutex;
- ``commit_mysql56_binlog_group_commit``: MySQL 5.6 flush / sync / commit stages.

``make_commit_path(sim, cfg, cpu, fs, open_file)`` builds the one ``cfg.commit_protocol``
names.
"""
from __future__ import annotations

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


__all__ = ["Binlog", "BinlogConfig", "COMMIT_PROTOCOLS", "CommitConfig", "CommitPath",
           "InnoDBPlugin104", "MySQL51Builtin", "MySQL56BinlogGroupCommit", "RedoConfig",
           "RedoLog", "Statement", "make_commit_path"]
