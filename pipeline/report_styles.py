"""How ``pipeline.report`` draws each experiment (``STYLES``): the chart kind
(``pipeline.plots.bars``, ``lines``, ``cdf``, ``series``), the metric panels, the x or
hue parameter and how a configuration is labelled. An experiment without a style gets
``facets`` of its ``meta.headline`` metrics (``style_for``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


def _ra_label(r: dict) -> str:
    mode = str(r.get("workload.read_ahead", "?"))
    n = r.get("workload.aio_pages_per_submit")
    return mode + (f"\n{n} pages/io_submit" if n not in (None, 1) else "")


def _case_label(r: dict) -> str:
    return str(r.get("run.case") or "?")


def _commit_label(r: dict) -> str:
    proto = {"mysql51_builtin": "5.1 built-in", "innodb_plugin_104": "Plugin 1.0.4",
             "mysql56_binlog_group_commit": "5.6 binlog group commit"}.get(
        r.get("engine.commit_protocol"), str(r.get("engine.commit_protocol", "?")))
    xa = r.get("engine.innodb_support_xa")
    bbu = r.get("device.sda.battery_backed")
    return (proto + (f", xa={int(bool(xa))}" if xa is not None else "")
            + ("" if bbu is None else ", BBU cache" if bbu else ", write-through"))


def covered(col: str, covers: Sequence[str]) -> bool:
    return any(col == c or (c.endswith(".*") and col.startswith(c[:-1])) for c in covers)


_RA_COLS = ("workload.read_ahead", "workload.aio_pages_per_submit",
            "workload.innodb_read_ahead_threshold", "workload.innodb_lra_size",
            "workload.innodb_lra_sleep", "workload.innodb_lra_n_node_recs_before_sleep")


@dataclass(frozen=True)
class Style:
    """How an experiment is drawn."""

    kind: str                                   # bars | lines | cdf | facets | series
    title: str
    metrics: tuple[str, ...] = ()               # panels (reference metrics are added)
    x: str | None = None                        # lines: the x parameter
    hue: str | None = None                      # bars: colour groups by this parameter
    label: Callable[[dict], str] | None = None  # bars: category / lines: series label
    covers: tuple[str, ...] = ()                # parameters ``label`` already shows
    xlabel: str = ""
    log: bool = False
    details: bool = False                       # needs the runs' detail tables
    extra: dict = field(default_factory=dict)


STYLES: dict[str, Style] = {
    "aio_batch": Style(
        "bars", "E1 async I/O (MySQL bug #68659): consecutive O_DIRECT reads on an HDD "
        "RAID 1+0,\nN requests per io_submit() - iostat after merging",
        metrics=("iostat.sda.rMB_s", "iostat.sda.r_s"),
        label=lambda r: f"{r.get('workload.bs')} x {r.get('workload.iodepth_batch_submit')}",
        xlabel="request size x requests per io_submit()",
        covers=("workload.bs", "workload.iodepth_batch_submit", "workload.iodepth",
                "workload.iodepth_batch_complete_min")),
    "lra": Style(
        "bars", "E1 full-table scan in primary-key order: scan time per read-ahead mode",
        metrics=("full_scan.scan_s",), hue="workload.insert_pattern", label=_ra_label,
        covers=_RA_COLS, xlabel="read-ahead mode"),
    "lra_warmup": Style(
        "bars", "E1 full-table scan: physical warm-up vs linear and logical read-ahead",
        metrics=("full_scan.scan_s",), hue="engine.innodb_buffer_pool_size",
        label=_ra_label, covers=_RA_COLS, xlabel="read-ahead mode"),
    "lra_load": Style(
        "bars", "E1 full-table scan beside an OLTP-like load (random 16 KB reads/writes): "
        "scan time per read-ahead mode", metrics=("full_scan.scan_s",),
        hue="workload.background_iops", label=_ra_label, covers=_RA_COLS,
        xlabel="read-ahead mode"),
    "lra_tuning": Style(
        "lines", "E1 logical read-ahead tuning: scan time vs innodb_lra_size",
        metrics=("full_scan.scan_s",), x="workload.innodb_lra_size",
        xlabel="innodb_lra_size (MB)", extra={"logx": True}),
    "group_commit": Style(
        "lines", "E2 group commit: mysqlslap write load, binlog on, "
        "innodb_flush_log_at_trx_commit=1, RAID 1 of 15k disks",
        metrics=("mysqlslap.tps", "mysqlslap.fsyncs_per_trx"), x="workload.concurrency",
        label=_commit_label, covers=("engine.*", "device.sda.battery_backed"),
        xlabel="concurrency (mysqlslap connections)"),
    "sysbench_threads": Style(
        "lines", "sysbench OLTP on InnoDB: transactions/s and 95th-percentile latency "
        "vs client threads", metrics=("sysbench.tps", "sysbench.latency_pct_ms"),
        x="workload.threads", label=lambda r: str(r.get("workload.test")),
        covers=("workload.test",), xlabel="threads (sysbench --threads)",
        extra={"logx": True}),
    "fsync_append_overwrite": Style(
        "bars", "E4 fsync cost: 8 KB writes + fdatasync each, appending vs overwriting "
        "(RAID 1 behind a battery-backed cache)",
        metrics=("fsync_bench.syncs_per_s",), hue="fs.type", label=_case_label,
        covers=("run.case", "workload.*"), xlabel="case"),
    "fsync_barrier": Style(
        "bars", "E4 related: commit per insert on xfs, Intel X25-E - write barriers vs nobarrier",
        metrics=("fsync_bench.syncs_per_s",), log=True,
        label=lambda r: "nobarrier" if r.get("fs.nobarrier") else "barriers (cache flush per fsync)",
        covers=("fs.nobarrier",), xlabel="xfs mount option"),
    "write_stalls": Style(
        "bars", "E6 write() and sync_file_range() stalls: each condition and its remedies",
        metrics=("sfr_stall.sfr_lat_p99_ms", "buffered_write.write_lat_p99_ms"), log=True,
        label=_case_label, covers=("run.case", "workload.*", "fs.*", "block.*", "device.*"),
        xlabel="case"),
    "flushing": Style(
        "series", "E8 InnoDB flushing against the redo log: throughput and checkpoint age "
        "per flushing algorithm", label=lambda r: str(r.get("run.case")).split("/")[-1],
        covers=("run.case", "engine.*", "device.*"), details=True,
        extra={"group": lambda r: {"hdd": "2 x 15k HDD, RAID 0", "ssd": "SATA SSD"}.get(
            str(r.get("run.case")).split("/")[0], "")}),
    # docs/examples/experiment/flushing_tpcc_500w.yaml (run with --config-dir docs/examples)
    "flushing_tpcc_500w": Style(
        "series", "E8's published row at full size: tpcc 500 W, 24 GB pool, 2 x 2000 MB "
        "logs - throughput and checkpoint age", label=lambda r: "MySQL {} {}".format(
            r.get("engine.version"), "adaptive flushing" if r.get(
                "engine.innodb_adaptive_flushing") else "no adaptive flushing"),
        covers=("engine.*", "device.*"), details=True,
        extra={"group": lambda r: "RAID 10 of eight 15k disks, 256 MB battery-backed cache"}),
    "bp_ratio": Style(
        "series", "E8 buffer pool against data: tpcc 10 W (~0.95 GB), where the pages "
        "written leave the pool (LRU list or flush list) per buffer pool size",
        label=lambda r: f"pool {r.get('engine.innodb_buffer_pool_size')}",
        covers=("engine.*",), details=True,
        extra={"group": lambda r: "NVMe data, redo on a 4 x 15k RAID 10", "lru": True}),
    "dbt2_placement": Style(
        "bars", "E3 DBT-2 (100 warehouses, 20 connections, 2 GB pool): InnoDB file "
        "placement on HDD RAID 1 + BBWC, X25-E SSDs and tmpfs", metrics=(
            "dbt2.notpm", "dbt2.notpm_per_usd"), label=_case_label,
        covers=("run.case", "placement.*"), xlabel="placement (run.case)"),
    "dbt2_ssd_history": Style(
        "lines", "E3 what-if: DBT-2 with every file on one X25-E, by the drive's history "
        "(how its LBAs were last written, and how much of it)",
        metrics=("dbt2.notpm", "devstat.sdb.write_amplification"),
        x="device.sdb.precondition_span_fraction",
        label=lambda r: f"{r.get('device.sdb.precondition')} fill",
        covers=("device.sdb.precondition",),
        xlabel="share of the 64 GB ever written (precondition_span_fraction)",
        extra={"levels": {"dbt2.notpm": ("E3.notpm.all_ssd",
                                         "published all SSD (drive history not given)")}}),
    "disk_validation": Style(
        "cdf", "Real-disk validation: measured vs simulated service-time CDFs "
        "(DiskSim 4.0 validation traces, closed loop)", label=_case_label,
        covers=("run.case", "device.*", "workload.*"), details=True),
}


def style_for(experiment: str) -> Style:
    """The experiment's style; without one, panels of its ``meta.headline`` metrics
    faceted by the parameters that vary (``pipeline.plots.facets``)."""
    if experiment in STYLES:
        return STYLES[experiment]
    from .best import headline

    return Style("facets", f"experiment {experiment}", metrics=tuple(headline(experiment)))


def series_style(experiment: str) -> Style:
    """``--series``: the per-second ``engine`` tables of any experiment on the InnoDB
    server (runs with ``results.details=true``) drawn as E8's are - throughput, pages
    flushed (with the LRU list's share), checkpoint age - one line per run, named as
    the experiment's own style names its runs."""
    style = style_for(experiment)
    if style.kind == "series":
        return style
    label = style.label or (lambda r: str(r.get("run.case") or "run").split("/")[-1])
    return Style("series", f"{experiment}: per simulated second - throughput, pages "
                 "flushed, checkpoint age", label=label, covers=style.covers, details=True,
                 extra={"group": lambda r: "", "lru": True})


def needs_details(experiment: str) -> bool:
    return style_for(experiment).details
