"""Result-column naming shared by the query, plot and reference modules: a column is a
parameter of the run when its first dotted part is a config section (``device.sda.
rpm``, ``cpu.wakeup_us``, ``page_cache.memory_bytes``); anything else (``iostat.*``,
``mysqlslap.*``, ``innodb.*``, ...) is a metric or run metadata."""
from __future__ import annotations

# the config sections pipeline.spec flattens into the summary row
PARAM_SECTIONS = ("run", "kernel", "device", "block", "fs", "page_cache", "placement", "engine",
                  "cpu", "workload")


def is_param(col: str) -> bool:
    return "." in col and col.split(".", 1)[0] in PARAM_SECTIONS
