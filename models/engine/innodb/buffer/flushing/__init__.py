"""Background flushing policies, one module per algorithm; ``policy_for(cfg)`` picks the
one a server config runs (``version`` and the variables that select an algorithm):

| version | variables | policy |
|---|---|---|
| 5.1 | - | ``mysql51.MySQL51`` (100 pages a second above the dirty limit) |
| 5.5 | ``innodb_adaptive_flushing`` | ``mysql55.MySQL55`` (``native``, or ``none`` if off) |
| 5.6 | ``innodb_adaptive_flushing``, ``_lwm``, ``innodb_io_capacity_max`` | ``mysql56.PageCleaner56`` |
| percona_5.1 | ``innodb_adaptive_flushing=ON`` (takes priority) | ``MySQL55`` (the plugin's) |
| percona_5.1 | off, ``innodb_adaptive_checkpoint`` = none / reflex / estimate / keep_average | ``MySQL55`` (none), ``reflex.Reflex``, ``estimate.Estimate``, ``keep_average.KeepAverage`` |
| percona_5.5 | ``innodb_adaptive_flushing=ON``, ``innodb_adaptive_flushing_method`` = native / estimate / keep_average | ``MySQL55``, ``Estimate``, ``KeepAverage`` (off: ``none``) |
"""
from __future__ import annotations

from .base import LSN_MAX, SECOND_NS, Batch, FlushPolicy
from .estimate import Estimate
from .keep_average import KeepAverage
from .mysql51 import MySQL51
from .mysql55 import MySQL55
from .mysql56 import PageCleaner56
from .reflex import Reflex

PERCONA = {"none": MySQL55, "native": MySQL55, "reflex": Reflex, "estimate": Estimate,
           "keep_average": KeepAverage}


def policy_for(cfg) -> type[FlushPolicy]:
    """The policy class of ``cfg`` (an ``InnoDBServerConfig``), per the module table."""
    if cfg.version == "5.6":
        return PageCleaner56
    if cfg.version == "5.1":
        return MySQL51
    if cfg.version == "percona_5.1":
        return PERCONA["native" if cfg.innodb_adaptive_flushing
                       else cfg.innodb_adaptive_checkpoint]
    if cfg.version == "percona_5.5":
        return PERCONA[cfg.innodb_adaptive_flushing_method if cfg.innodb_adaptive_flushing
                       else "none"]
    return MySQL55


__all__ = ["LSN_MAX", "SECOND_NS", "Batch", "Estimate", "FlushPolicy", "KeepAverage",
           "MySQL51", "MySQL55", "PageCleaner56", "Reflex", "policy_for"]
