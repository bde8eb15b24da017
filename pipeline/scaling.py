"""What ``run.scale`` does to a workload's configuration, for the summary row's
parameter columns: the fields each model shrinks (its docstring says so) at the value
the model uses, so ``workload.table_size`` reads '1g' at run.scale 0.1, not
'10g' - and the engine fields a workload shrinks (``SCALED_ENGINE``: the full scan
shrinks the server's buffer pool with its table). Nothing here changes a simulation: the models apply the scale themselves.

The config hash is taken over the configuration as written (unscaled values and
``run.scale``), which identifies a run whatever the rounding of the effective values;
the unscaled value is in no column (``run.scale`` is, and the sweep's own values are in
its command line and YAML). Sizes the models floor (a table of at least 4 extents, a
buffer pool of at least 64 pages) show the product, not the floor.
``tests/pipeline/test_scaled_columns.py`` checks each entry against the built model.
Not scaled by any model, hence shown as written: ``page_cache.memory_bytes``,
``workload.initial_rows`` (MyISAM), ``workload.key_buffer_size``, fio's ``size``.
"""
from __future__ import annotations

from typing import Any

from models.units import parse_size

def _scaled_count(cfg, scale: float) -> int:         # models/workload/fs_base.py
    return max(1, int(cfg.count * scale))


def _scaled_fsync_file(cfg, scale: float) -> str:    # models/workload/fsync_bench.py
    bs = parse_size(cfg.bs, "bs")
    size = parse_size(cfg.file_size, "file_size") or bs * cfg.count
    return size_text(max(bs, int(size * scale)) // 4096 * 4096 or 4096)


def _float(x: float) -> float:
    return float(f"{x:.9g}")      # 1024 * 0.1 -> 102.4, not 102.40000000000001


def _scaled_size(field: str):
    return lambda cfg, scale: size_text(int(parse_size(getattr(cfg, field), field) * scale))


# workload type -> {field: (config, scale) -> the value the model uses}
SCALED = {
    "full_scan": {"table_size": _scaled_size("table_size"),
                  "innodb_lra_size": lambda cfg, scale: _float(cfg.innodb_lra_size * scale)},
    "fsync_bench": {"count": _scaled_count, "file_size": _scaled_fsync_file},
    "sfr_stall": {"count": _scaled_count},
    "buffered_write": {"count": _scaled_count},
    "mysqlslap": {"number_of_queries": lambda cfg, scale: max(
        cfg.concurrency, int(round(cfg.number_of_queries * scale)))},
    "myisam_insert": {"runtime_s": lambda cfg, scale: _float(cfg.runtime_s * scale)},
    "sysbench": {"time": lambda cfg, scale: _float(cfg.time * scale),   # workload/sysbench/
                 "warmup_time": lambda cfg, scale: _float(cfg.warmup_time * scale),
                 "events": lambda cfg, scale: max(1, int(round(cfg.events * scale)))
                 if cfg.events else 0},
    "tpcc": {"duration": lambda cfg, scale: _float(cfg.duration * scale),  # workload/tpcc/
             "rampup": lambda cfg, scale: _float(cfg.rampup * scale)},
}
SCALED["dbt2"] = SCALED["tpcc"]


def _scaled_pool(value: str, scale: float) -> str:   # models/workload/full_scan.py
    pages = parse_size(value, "innodb_buffer_pool_size") // 16384
    return size_text(max(64, int(pages * scale)) * 16384)


# workload type -> {engine field: (value as written, scale) -> the value the model uses}
SCALED_ENGINE = {"full_scan": {"innodb_buffer_pool_size": _scaled_pool}}


def size_text(n: int) -> str:
    """Bytes as the shortest size string ``parse_size`` reads back exactly, in the
    largest unit that has one: 858993459 -> '819.2m', 2**30 -> '1g', 6709248 -> '6552k'."""
    n = int(n)
    for suffix, unit in (("t", 2**40), ("g", 2**30), ("m", 2**20), ("k", 2**10)):
        if n >= unit:
            for digits in range(1, 8):
                text = f"{n / unit:.{digits}g}{suffix}"
                if parse_size(text, "size") == n:
                    return text
    return str(n)


def effective_parameters(params: dict, workload: Any, scale: float) -> dict:
    """``params`` with the workload fields ``run.scale`` shrinks at their effective
    (scaled) values."""
    rules = SCALED.get(workload.type, {})
    if scale == 1 or not rules:
        return params
    out = dict(params)
    for f, rule in rules.items():
        out[f"workload.{f}"] = rule(workload.config, scale)
    for f, rule in SCALED_ENGINE.get(workload.type, {}).items():
        if f"engine.{f}" in out:
            out[f"engine.{f}"] = rule(out[f"engine.{f}"], scale)
    return out
