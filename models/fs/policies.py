"""The registry of filesystem policies (``FsConfig.type`` -> policy class)."""
from __future__ import annotations

from .ext3 import Ext3
from .ext4 import Ext4
from .policy import FsPolicy
from .xfs import Xfs

POLICIES: dict[str, type[FsPolicy]] = {"ext3": Ext3, "ext4": Ext4, "xfs": Xfs}


def make_policy(cfg) -> FsPolicy:
    if cfg.type == "zfs":
        from .zfs import Zfs
        return Zfs(cfg)
    return POLICIES[cfg.type](cfg)
