"""TPC-C as DBT-2 and tpcc-mysql run it, as a workload on the InnoDB server.

- ``schema``: the nine tables sized from the warehouse count, their integer keys.
- ``nurand``: TPC-C's NURand and uniform choices.
- ``txns``: the five transactions as ``ops.Transaction``, the 45/43/4/4/4 mix.
- ``report``: NOTPM, per-type response times, rollbacks.
- ``options``: ``TpccConfig``; ``workload``: ``Tpcc``, the client connections.
"""
from .options import TpccConfig
from .workload import Tpcc

__all__ = ["Tpcc", "TpccConfig"]
