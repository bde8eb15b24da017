"""The one explicit map from a config's ``type`` to a model's config class and builder.

YAML names a type (``type: hdd``) and optionally a preset (``preset: cheetah_15k7``, a
config derived in code from a data sheet, whose fields the entry may override); this
module says which frozen config dataclass
validates it and how the model object is constructed. No module paths or ``_target_``
strings live in YAML: adding a model means adding one line here.

- Devices: ``make(sim, name, cfg, members, rng) -> Device`` where ``members`` are the
  already-built devices named in the config's ``members`` field (RAID), in order.
- Engines: ``make(sim, cfg, cpu_cfg, fs_of) -> engine`` where ``fs_of(file_class)`` is
  the mounted ``models.fs.Filesystem`` that ``placement.<file_class>`` names. The
  engine reports ``stats()`` (metric columns ``<metric_prefix>.<stat>``) and has a
  ``cpu`` (``cpustat.<stat>``).
- Workloads: ``make(sim, cfg, target, rng, scale, extras)`` where ``target`` is what
  the kind runs ``on``: the block queue its ``filename`` names (``queue``), the
  filesystem its ``data`` files are placed on (``fs``), or the engine (``engine``);
  ``extras`` are its pipeline-level keys. It returns an object with ``start()`` and
  ``results() -> dict`` (optionally ``iostat() -> dict`` for its own queue over its
  measured interval, ``detail() -> columns`` for the ``requests`` table).

File classes (``placement`` keys) name the files a workload or an engine creates:
``data`` (a filesystem workload's test files), ``redo_log`` (``ib_logfile*``),
``binlog`` (``mysql-bin.*`` and its index), ``tablespace`` (``*.ibd``), ``system``
(``ibdata1``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from models.workload.fio import FioConfig, FioJob


@dataclass(frozen=True)
class DeviceKind:
    config: type
    make: Callable[..., Any]
    # the config field that names other devices (RAID members), if any
    members_field: str | None = None
    # named starting points (``preset: cheetah_15k7``): functions returning a config
    # derived from a data sheet; the entry's other keys override its fields
    presets: dict = field(default_factory=dict)


ON = ("queue", "fs", "engine")


@dataclass(frozen=True)
class WorkloadKind:
    config: type
    make: Callable[..., Any]
    # pipeline-level keys beside the model's own options, with defaults:
    # ``filename`` is the block device the job runs against (fio's own option name).
    extras: dict = field(default_factory=dict)
    on: str = "queue"                       # what ``make`` gets as its target (ON)
    files: tuple[str, ...] = ()             # file classes it creates (placement keys)
    # extras that are checked by a function ``check(extras) -> extras`` in pipeline.spec
    # (raising ConfigError naming the key), e.g. a trace file that must exist
    check: Callable[[dict], dict] | None = None
    # the files a run reads, by extras key: ``inputs(extras) -> {key: Path}``; each
    # becomes a ``workload.<key>_sha256`` column of the file's content (pipeline.inputs)
    inputs: Callable[[dict], dict] | None = None
    # the raw section rewritten before it is checked (``expand(entry) -> entry``): fio
    # job files and fio option names (pipeline.fio_jobfile); it may name another type
    expand: Callable[[dict], dict] | None = None
    # the prefix of its metric columns (``<prefix>.<metric>``; default: its type), so
    # fio's direct=1 and direct=0 jobs report the same ``fio.*`` columns
    metric_prefix: str = ""


@dataclass(frozen=True)
class EngineKind:
    config: type
    make: Callable[..., Any]
    files: tuple[str, ...]
    metric_prefix: str


def _construct(cls: type, sim, name: str, cfg, members, rng):
    """``cls(sim, name, cfg)``, passing ``members=`` / ``rng=`` when the model takes them."""
    params = inspect.signature(cls).parameters
    kw = {}
    if "members" in params:
        kw["members"] = members
    if "rng" in params:
        kw["rng"] = rng
    return cls(sim, name, cfg, **kw)


def _device(config: type, cls: type, members_field: str | None = None,
            presets: dict | None = None) -> DeviceKind:
    return DeviceKind(config, lambda sim, name, cfg, members, rng:
                      _construct(cls, sim, name, cfg, members, rng), members_field,
                      presets or {})


from models.device.hdd import HDD, HDDConfig, default_15k_sas  # noqa: E402
from models.device.hdd.datasheet import constellation_es3, savvio_10k4  # noqa: E402
from models.device.ssd import SSD, SSDConfig  # noqa: E402
from models.device.ssd import presets as _nvme_presets  # noqa: E402
from models.device.ssd.nvme import NVMe, NVMeConfig  # noqa: E402

DEVICES: dict[str, DeviceKind] = {
    "hdd": _device(HDDConfig, HDD, presets={"cheetah_15k7": default_15k_sas,
                                            "savvio_10k4": savvio_10k4,
                                            "constellation_es3": constellation_es3}),
    "ssd": _device(SSDConfig, SSD,
                   presets={"intel_s4510_960gb": _nvme_presets.intel_s4510_960gb}),
    "nvme": _device(NVMeConfig, NVMe, presets={
        "intel_p4500_1tb": _nvme_presets.intel_p4500_1tb,
        "samsung_970_evo_plus_1tb": _nvme_presets.samsung_970_evo_plus_1tb,
        "intel_optane_p4800x_375gb": _nvme_presets.intel_optane_p4800x_375gb}),
}
def _jobfile_input(extras: dict) -> dict:
    """A fio job's job file, when it has one (its content a parameter of the run)."""
    from .fio_jobfile import resolve

    return {"jobfile": resolve(extras["jobfile"])} if extras.get("jobfile") else {}


def _fio_kind() -> WorkloadKind:
    from . import fio_jobfile, fio_json

    return WorkloadKind(
        FioConfig,
        lambda sim, cfg, queue, rng, scale, extras: fio_json.FioRun(FioJob(sim, cfg, queue, rng),
                                                                    extras),
        extras={"filename": "sda", "jobfile": ""},
        inputs=_jobfile_input,
        expand=fio_jobfile.expand)


def _fio_buffered_kind() -> WorkloadKind:
    """fio with direct=0: the job's files on the filesystem of the device its
    ``filename`` names (``placement.data``), through the page cache."""
    from models.workload.fio.buffered import FioBufferedJob

    from . import fio_jobfile, fio_json

    return WorkloadKind(
        FioConfig,
        lambda sim, cfg, fs, rng, scale, extras: fio_json.FioRun(
            FioBufferedJob(sim, cfg, fs, rng), extras),
        extras={"filename": "sda", "jobfile": ""}, on="fs", files=("data",),
        inputs=_jobfile_input,
        expand=fio_jobfile.expand, metric_prefix="fio")


def _fio_jobs_kind() -> WorkloadKind:
    """A fio job file of several jobs on one block device (pipeline.fio_jobs)."""
    from models.workload.fio.jobs import FioJobs, FioJobsConfig

    from . import fio_json

    return WorkloadKind(
        FioJobsConfig,
        lambda sim, cfg, queue, rng, scale, extras: fio_json.FioRun(
            FioJobs(sim, cfg, queue, rng), extras),
        extras={"filename": "sda", "jobfile": ""},
        inputs=_jobfile_input,
        metric_prefix="fio")


WORKLOADS: dict[str, WorkloadKind] = {"fio": _fio_kind(), "fio_buffered": _fio_buffered_kind(),
                                      "fio_jobs": _fio_jobs_kind()}
ENGINES: dict[str, EngineKind] = {}


def _optional(module: str):
    """Import a model module that may not have landed yet (None if it is absent;
    any other import error is raised)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as ex:
        if ex.name == module:
            return None
        raise


def _make_cloud_volume(sim, name, cfg, members, rng):
    """A cloud volume; behind its instance's shared EBS link when
    ``instance_bandwidth_MBps`` is set (one ``bus.Bus`` per instance name and run,
    its bandwidth the first volume's)."""
    from models.device.bus import Bus, BusConfig
    from models.device.cloud_volume import CloudVolume

    vol = CloudVolume(sim, name, cfg, rng=rng)
    if not cfg.instance_bandwidth_MBps:
        return vol
    if _INSTANCE_LINKS["sim"] is not sim:       # a new run: its own instances
        _INSTANCE_LINKS.update(sim=sim, buses={})
    buses = _INSTANCE_LINKS["buses"]
    if cfg.instance not in buses:
        buses[cfg.instance] = Bus(sim, cfg.instance, BusConfig(cfg.instance_bandwidth_MBps))
    return buses[cfg.instance].attach(vol, name)


# the instances' links of the run being built (devices are built one run at a time)
_INSTANCE_LINKS: dict = {"sim": None, "buses": {}}
_cloud = _optional("models.device.cloud_volume")
if _cloud is not None:
    DEVICES["cloud_volume"] = DeviceKind(_cloud.CloudVolumeConfig, _make_cloud_volume)
_ram = _optional("models.device.ram")
if _ram is not None:
    DEVICES["ram"] = _device(_ram.RAMConfig, _ram.RAM)
_raid = _optional("models.device.raid")
if _raid is not None:
    DEVICES["raid"] = _device(_raid.RAIDConfig, _raid.RAID, members_field="members")


_full_scan = _optional("models.workload.full_scan")
if _full_scan is not None:
    # E1: InnoDB full-table scan, a session of the InnoDB server (its .ibd on
    # placement.tablespace, its reads into the server's buffer pool; the scan's
    # read-ahead presets are conf/innodb_scan/*.yaml, keys of the workload)
    WORKLOADS["full_scan"] = WorkloadKind(
        _full_scan.FullScanConfig,
        lambda sim, cfg, server, rng, scale, extras: _full_scan.FullScan(sim, cfg, server, rng,
                                                                         scale),
        on="engine")


# -- filesystem workloads (on the filesystem their ``data`` files are placed on) -----------
def _fs_workload(module: str, config: str, cls: str) -> None:
    mod = _optional(f"models.workload.{module}")
    if mod is None:
        return
    make_cls = getattr(mod, cls)
    WORKLOADS[module] = WorkloadKind(
        getattr(mod, config),
        lambda sim, cfg, fs, rng, scale, extras: make_cls(sim, cfg, fs, rng, scale),
        on="fs", files=("data",))


_fs_workload("fsync_bench", "FsyncBenchConfig", "FsyncBench")
_fs_workload("sfr_stall", "SfrStallConfig", "SfrStall")
_fs_workload("buffered_write", "BufferedWriteConfig", "BufferedWrite")
_fs_workload("myisam_insert", "MyisamInsertConfig", "MyisamInsert")


# -- trace replay (a block device, from a trace file) -----------------------------------
def _trace() -> None:
    from models.workload.trace import TraceConfig

    from . import trace_job

    WORKLOADS["trace"] = WorkloadKind(
        TraceConfig,
        lambda sim, cfg, queue, rng, scale, extras: trace_job.TraceJob(sim, cfg, queue, extras),
        extras=dict(trace_job.EXTRAS), check=trace_job.check_extras,
        inputs=lambda extras: {"iolog": trace_job.resolve(extras["iolog"])})


_trace()


# -- the InnoDB server (E1, E2, sysbench) and mysqlslap -----------------------------------
class FileRouter:
    """The filesystem calls of an engine whose files live on several filesystems: each
    call goes to the filesystem that holds the file (``File.fs``)."""

    def pwrite(self, f, *args, **kw):
        return f.fs.pwrite(f, *args, **kw)

    def pread(self, f, *args, **kw):
        return f.fs.pread(f, *args, **kw)

    def fsync(self, f, *args, **kw):
        return f.fs.fsync(f, *args, **kw)

    def fdatasync(self, f, *args, **kw):
        return f.fs.fdatasync(f, *args, **kw)

    def sync_file_range(self, f, *args, **kw):
        return f.fs.sync_file_range(f, *args, **kw)


def _make_innodb_server(sim, cfg, cpu_cfg, fs_of):
    """The InnoDB server that writes: ibdata1 on ``placement.system``, the .ibd files on
    ``placement.tablespace``, redo and binary logs as for the commit path. The buffer
    pool must fit in the machine's memory (the page cache's ``memory_bytes``)."""
    from models.engine.innodb import fs_open_file
    from models.engine.innodb.server import make_innodb_server

    sys_fs, ts_fs = fs_of("system"), fs_of("tablespace")
    memory = sys_fs.cache.cfg.memory_pages * 4096
    if cfg.pool_bytes > memory:
        raise ValueError(f"innodb_buffer_pool_size: {cfg.innodb_buffer_pool_size} is larger "
                         f"than the machine's memory (page_cache.memory_bytes, {memory} bytes)")
    open_redo = fs_open_file(fs_of("redo_log"), cfg.log_files_cached)
    open_binlog = fs_open_file(fs_of("binlog"), cfg.log_files_cached)

    def open_file(name: str, size_bytes):
        return (open_redo if name.startswith("ib_logfile") else open_binlog)(name, size_bytes)

    return make_innodb_server(sim, cfg, cpu_cfg, sys_fs, ts_fs, FileRouter(), open_file)


_server = _optional("models.engine.innodb.server")
if _server is not None:
    # the one InnoDB engine every InnoDB workload runs on (mysqlslap, sysbench, the full
    # scan): tables, buffer pool, flushing, redo checkpoints, doublewrite, the commit
    # protocols; its workload calls create_tables() itself. `innodb_server` is the
    # same engine under the name it had while the commit path was an engine of its own.
    _innodb_kind = EngineKind(_server.InnoDBServerConfig, _make_innodb_server,
                              files=("tablespace", "system", "redo_log", "binlog"),
                              metric_prefix="innodb")
    ENGINES["innodb"] = ENGINES["innodb_server"] = _innodb_kind
_slap = _optional("models.workload.mysqlslap")
if _slap is not None:
    WORKLOADS["mysqlslap"] = WorkloadKind(
        _slap.MysqlslapConfig,
        lambda sim, cfg, engine, rng, scale, extras: _slap.Mysqlslap(sim, cfg, engine, rng, scale),
        on="engine")


# -- sysbench's OLTP tests, on the InnoDB server (registered once the server exists) ------
_sysbench = _optional("models.workload.sysbench")
if _sysbench is not None and _optional("models.engine.innodb.server") is not None:
    WORKLOADS["sysbench"] = WorkloadKind(
        _sysbench.SysbenchConfig,
        lambda sim, cfg, server, rng, scale, extras: _sysbench.Sysbench(sim, cfg, server, rng,
                                                                        scale),
        on="engine")

# -- TPC-C on the InnoDB server: ``tpcc`` (tpcc-mysql) and ``dbt2`` are one workload under
# the two tools' names; the type is the columns' prefix (tpcc.notpm, dbt2.notpm)
_tpcc = _optional("models.workload.tpcc")
if _tpcc is not None and _optional("models.engine.innodb.server") is not None:
    for _name in ("tpcc", "dbt2"):
        WORKLOADS[_name] = WorkloadKind(
            _tpcc.TpccConfig,
            lambda sim, cfg, server, rng, scale, extras: _tpcc.Tpcc(sim, cfg, server, rng,
                                                                    scale),
            on="engine")


def file_classes() -> tuple[str, ...]:
    """Every file class some workload or engine places (the valid ``placement`` keys)."""
    out: list[str] = []
    for kind in list(WORKLOADS.values()) + list(ENGINES.values()):
        out += [c for c in kind.files if c not in out]
    return tuple(out)
