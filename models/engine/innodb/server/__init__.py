"""The InnoDB server that writes (``InnoDBServer``) and its configuration
(``InnoDBServerConfig``); ``make_innodb_server`` builds one on a CPU and filesystems."""
from __future__ import annotations

from ...cpu import CPU
from .config import InnoDBServerConfig
from .server import InnoDBServer


def make_innodb_server(sim, cfg: InnoDBServerConfig, cpu_cfg, fs_system, fs_tablespace,
                       fs_router, open_file) -> InnoDBServer:
    """The server of ``cfg`` on ``cpu_cfg`` cores: ``open_file(name, size)`` creates the
    redo and binary logs, ``fs_router`` carries their calls (``CommitPath``'s ``fs``);
    ibdata1 on ``fs_system``, the .ibd files on ``fs_tablespace``."""
    from .. import make_commit_path

    cpu = CPU(sim, cpu_cfg)
    cp = make_commit_path(sim, cfg, cpu, fs_router, open_file)
    return InnoDBServer(sim, cfg, cpu, cp, fs_system, fs_tablespace)


__all__ = ["InnoDBServer", "InnoDBServerConfig", "make_innodb_server"]
