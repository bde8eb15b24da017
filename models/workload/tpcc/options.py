"""The options of a TPC-C run, by the names DBT-2 and tpcc-mysql give them.

``warehouses`` (DBT-2 ``-w``, tpcc-mysql ``-w``), ``connections`` (DBT-2's database
connections ``-c``; tpcc-mysql ``-c``, which ``threads`` names too: set one of the
two), ``duration`` (s: DBT-2 ``-d``, tpcc-mysql ``-l``; the measured interval),
``rampup`` (s: tpcc-mysql ``-r``, DBT-2's ramp-up: transactions run, nothing is
counted), ``warm_pool`` (not an option of either tool: start with the buffer pool as
``InnoDBServer.preload`` fills it - upper B+tree levels, then leaves in table order -
standing for the pool a previous run left, and the last orders of every district as
New-Orders placed them (NURand items, not the loader's uniform ones: Stock-Level reads
their STOCK rows); off: the pool starts empty, as after a restart, on the database as
loaded). ``warm_pool_turnovers`` (not an option of either tool; with ``warm_pool``): then
replay the workload's own transactions through the pool, outside simulated time, until
its misses reach this many times its frames (``InnoDBServer.warm_replay``): the pool a
long run leaves - the pages the access skew keeps, dirty where the workload changed
them - and the districts' orders as those transactions placed them (the run goes on
from there); 0: the preloaded pool as it is.

Fixed as both tools are run for throughput: keying and think time 0, the mix
45/43/4/4/4. Not modelled: the terminals-per-warehouse binding of DBT-2's driver
(every transaction draws its warehouse), the spec's response-time limits as a
pass/fail (reported, not enforced).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import MAX_SECONDS, above, at_least, at_most


@dataclass(frozen=True)
class TpccConfig:
    warehouses: int = 10
    connections: int = 0        # 0: ``threads`` (or 1)
    threads: int = 0            # tpcc-mysql's name for the connections
    duration: float = 60.0      # s, measured
    rampup: float = 0.0         # s, before the measured interval
    warm_pool: bool = True
    warm_pool_turnovers: float = 0.0   # replay until the pool has turned over this often
    percentile: int = 90        # DBT-2 reports the 90th percentile response time

    def __post_init__(self) -> None:
        at_least(self, 1, "warehouses")
        at_least(self, 0, "connections", "threads", "rampup", "warm_pool_turnovers")
        above(self, 0, "duration", "percentile")
        at_most(self, MAX_SECONDS, "duration", "rampup")
        at_most(self, 100, "percentile")
        if self.connections and self.threads and self.connections != self.threads:
            raise ValueError(f"threads: is another name for connections; got connections="
                             f"{self.connections} and threads={self.threads}")

    @property
    def clients(self) -> int:
        return self.connections or self.threads or 1
