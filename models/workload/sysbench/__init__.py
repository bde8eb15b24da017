"""sysbench 1.0's OLTP tests (``oltp_*``) as a workload on the InnoDB server.

- ``options``: ``SysbenchConfig``, sysbench's option names and defaults.
- ``rand``: ``--rand-type`` distributions (``sb_rand.c``).
- ``oltp``: each test's statements per event as ``ops.Transaction``.
- ``report``: the final and intermediate reports, sysbench's latency histogram.
- ``workload``: ``Sysbench``, the client threads.
"""
from .options import RAND_TYPES, TESTS, SysbenchConfig
from .workload import Sysbench

__all__ = ["RAND_TYPES", "TESTS", "Sysbench", "SysbenchConfig"]
