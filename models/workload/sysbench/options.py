"""sysbench 1.0's options for its OLTP tests, with sysbench's names and defaults.

The general options (``sysbench --help``): ``threads``, ``time`` (s), ``events``,
``rate`` (transactions/s, 0 = as fast as the threads go), ``report_interval`` (s, 0 =
no intermediate reports), ``percentile``; the random-number options of ``sb_rand.c``
(``rand_type`` and its parameters); and the options of ``oltp_common.lua`` (tables,
table size, statements per transaction, ``skip_trx``, ``auto_inc``). Defaults are
sysbench 1.0.20's: ``rand_type=special`` with ``rand_spec_iter=12``,
``rand_spec_pct=1``, ``rand_spec_res=75``; ``rand_pareto_h=0.2``. ``zipfian``
(``rand_zipfian_exp``, default 0.8) and ``warmup_time`` come from sysbench 1.1 (its
master branch); sysbench 1.0 has neither.

Not modelled: ``secondary`` / ``create_secondary`` (the table always has its primary
key and the secondary index ``k_1``), ``reconnect``, ``forced_shutdown``,
``report_checkpoints``, ``histogram`` printing, the ``prepare`` / ``cleanup`` commands
(the server starts with the tables loaded, ``Sysbench.tables()``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import MAX_SECONDS, above, at_least, at_most
from .oltp import groups_of, plan

TESTS = ("oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only",
         "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete")
RAND_TYPES = ("uniform", "gaussian", "special", "pareto", "zipfian")
INT_MAX = 2**31 - 1          # sbtest.id is a signed INT


@dataclass(frozen=True)
class SysbenchConfig:
    """One ``sysbench <test> run`` (times in seconds, as sysbench's options)."""
    test: str = "oltp_read_write"
    # general options
    threads: int = 1
    time: float = 10.0               # --time: no event starts after it (0: no limit)
    events: int = 0                  # --events: total transactions (0: no limit)
    rate: float = 0.0                # --rate: Poisson arrivals per s (0: closed loop)
    report_interval: float = 0.0     # --report-interval: detail rows every N s (0: off)
    percentile: int = 95             # --percentile (0: disabled)
    warmup_time: float = 0.0         # --warmup-time (1.1): run this long before measuring
    # random numbers (sb_rand.c)
    rand_type: str = "special"
    rand_spec_iter: int = 12
    rand_spec_pct: float = 1.0
    rand_spec_res: float = 75.0
    rand_pareto_h: float = 0.2
    rand_zipfian_exp: float = 0.8
    # oltp_common.lua
    tables: int = 1
    table_size: int = 10_000
    range_size: int = 100
    point_selects: int = 10
    simple_ranges: int = 1
    sum_ranges: int = 1
    order_ranges: int = 1
    distinct_ranges: int = 1
    index_updates: int = 1
    non_index_updates: int = 1
    delete_inserts: int = 1
    range_selects: bool = True
    skip_trx: bool = False
    auto_inc: bool = True

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ValueError(f"test: must be one of {', '.join(TESTS)}, got {self.test!r}")
        if self.rand_type not in RAND_TYPES:
            raise ValueError(f"rand_type: must be one of {', '.join(RAND_TYPES)}, "
                             f"got {self.rand_type!r}")
        at_least(self, 1, "threads", "tables", "table_size", "range_size", "rand_spec_iter")
        at_most(self, INT_MAX, "table_size")
        at_least(self, 0, "time", "events", "rate", "report_interval", "warmup_time",
                 "percentile", "rand_spec_pct", "rand_spec_res", "rand_zipfian_exp",
                 "point_selects", "simple_ranges", "sum_ranges", "order_ranges",
                 "distinct_ranges", "index_updates", "non_index_updates", "delete_inserts")
        at_most(self, MAX_SECONDS, "time", "report_interval", "warmup_time")
        at_most(self, 100, "percentile", "rand_spec_pct")
        if not self.rand_spec_res < 100:      # sb_rand.c divides by 100 - rand_spec_res
            raise ValueError(f"rand_spec_res: must be < 100, got {self.rand_spec_res}")
        above(self, 0, "rand_pareto_h")
        if not self.rand_pareto_h < 1:
            raise ValueError(f"rand_pareto_h: must be < 1, got {self.rand_pareto_h}")
        if self.time == 0 and self.events == 0:
            raise ValueError("time: time=0 and events=0 would run forever; set one of them")
        if self.range_size > self.table_size:
            raise ValueError(f"range_size: must be <= table_size ({self.table_size}), "
                             f"got {self.range_size}")
        if not plan(self):                    # a mix with no statement is no test
            key = groups_of(self.test, self.range_selects)[0]
            raise ValueError(f"{key}: {self.test} issues no statement with "
                             + ", ".join(f"{g}={getattr(self, g)}"
                                         for g in groups_of(self.test, self.range_selects)))
