"""Build the simulated stack of one run from its ``RunSpec``, run it, collect metrics.

The stack, bottom up: devices (members before the arrays that use them); one Linux
block queue (``models.block.make_queue``: the legacy ``BlockQueue`` or blk-mq's
``MQQueue``, by ``block.scheduler`` as the ``kernel`` resolved it) on every top-level
device - a device that is no RAID member, i.e. what the host sees as ``/dev/<name>`` -
with the ``block`` settings or the device's own ``queue`` overrides; a filesystem
(``models.fs.Filesystem``, the ``fs`` section or ``device.<name>.fs``) on every
device that ``placement`` puts a file of the run on, all sharing one page cache
(``page_cache``); the engine (``engine``, on ``cpu``) with its files on those
filesystems; the workload on what its kind runs on - the queue its ``filename``
names, the filesystem of its ``data`` files, or the engine.

Randomness: one ``numpy.random.SeedSequence`` per run from ``run.seed``; every
component gets its own child stream keyed by its config path (``device.hdd0``,
``workload``), so adding a device does not change the numbers another one draws.

Metric columns of the summary row:

- ``iostat.<dev>.<column>``: ``iostat -x`` of each block device over the workload's
  measured interval (``r_s``, ``rMB_s``, ``await_ms``, ``util_pct``, ...), and
  ``MB_read`` / ``MB_wrtn`` (``iostat -m``'s totals) over the whole run;
- ``storage.cost_usd``: the ``price_usd`` of the devices the run's files are on (RAID
  members included; ``storage_cost_usd``), and ``<workload type>.notpm_per_usd`` for a
  workload that reports ``notpm``;
- ``<workload metric prefix>.<metric>``: what the workload reports (``fio.MB_s``, ``fio.iops``;
  the prefix is the workload type unless its kind names another: every fio kind says
  ``fio``);
- ``mqstat.<dev>.<counter>``: a blk-mq queue's (hardware queues, ``nr_requests`` per
  hctx, submitters that slept for a tag, per-core I/O CPU, kyber's domain depths);
- ``devstat.<dev>.<counter>``: device-internal counters (busy time, cache hits);
- ``fsstat.<dev>.<counter>``: each mounted filesystem's counters (journal commits,
  flushes, read-modify-write reads, pages written, ...) and
  ``fsstat.page_cache.<counter>`` the shared page cache's (dirty pages, throttling);
- ``<engine metric prefix>.<stat>``: the engine's counters (``innodb.Innodb_buffer_pool_reads``,
  ``innodb.commit.redo.fsyncs``, ``innodb.commit.prepare_commit_mutex.wait_s``, ...);
- ``cpustat.<stat>``: the engine's CPU (``util_pct``, ``busy_s``, ``wakeups``).

Metric columns never start with a config section name (``run``, ``device``, ``block``,
``fs``, ``page_cache``, ``placement``, ``engine``, ``cpu``, ``workload``), so
``pipeline.query`` tells parameters from metrics by the first dotted segment alone.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from models.block import make_queue
from models.fs import Filesystem, PageCache
from models.sim import Simulator

from . import registry, runwatch
from .errors import from_value_error
from .spec import RunSpec


@dataclass
class Stack:
    sim: Simulator
    devices: dict
    queues: dict
    workload: Any
    filesystems: dict = field(default_factory=dict)   # device name -> Filesystem
    page_cache: Any = None
    engine: Any = None


@dataclass
class RunResult:
    summary: dict                       # metric columns
    # table name -> list of row dicts, or dict of equal-length columns
    details: dict = field(default_factory=dict)
    sim_ns: int = 0
    events: int = 0
    # files written beside the summary (name -> bytes): the workload's ``files()``,
    # e.g. fio's JSON output (pipeline.fio_json)
    files: dict = field(default_factory=dict)


def component_rng(seed: int, path: str) -> np.random.Generator:
    """The child stream of component ``path`` (stable across runs and machines)."""
    key = zlib.crc32(path.encode())
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(key,)))


def _host_costs(cpu) -> dict:
    """What a blk-mq queue needs of the host CPUs: how many (the software queues) and
    the per-I/O submission / completion cost on a core (``cpu.io_*_cycles``)."""
    if cpu is None:
        return {"nr_cpus": 1}
    return {"nr_cpus": cpu.cores, "io_submit_ns": int(round(cpu.io_submit_cycles / cpu.ghz)),
            "io_complete_ns": int(round(cpu.io_complete_cycles / cpu.ghz))}


def build(spec: RunSpec) -> Stack:
    """Construct every model object; a model's ``ValueError`` becomes a ``ConfigError``
    naming the component it came from."""
    sim = Simulator()
    devices: dict = {}
    links: dict = {}                   # device.<name>.bus: the shared links of the run
    for d in spec.devices:
        kind = registry.DEVICES[d.type]
        members = [devices[m] for m in d.members]
        try:
            devices[d.name] = kind.make(sim, d.name, d.config, members,
                                        component_rng(spec.seed, f"device.{d.name}"))
        except ValueError as ex:
            raise from_value_error(f"device.{d.name}", ex) from None
        if d.bus is not None:
            from models.device.bus import Bus

            link = links.get(d.bus[0]) or links.setdefault(d.bus[0], Bus(sim, d.bus[0], d.bus[1]))
            devices[d.name] = link.attach(devices[d.name], d.name)
    queues = {}
    for d in spec.devices:
        if d.queue is None:
            continue
        try:
            queues[d.name] = make_queue(sim, devices[d.name], d.queue, name=d.name,
                                        **_host_costs(spec.cpu))
        except ValueError as ex:
            raise from_value_error(f"device.{d.name}.queue", ex) from None
    filesystems: dict = {}
    cache = None
    if spec.mounts:
        try:
            cache = PageCache(sim, spec.page_cache)
        except ValueError as ex:
            raise from_value_error("page_cache", ex) from None
        for m in spec.mounts:
            try:
                filesystems[m.device] = Filesystem(sim, m.config, queues[m.device], cache,
                                                   name=m.device)
            except ValueError as ex:
                raise from_value_error(f"device.{m.device}.fs" if m.overridden else "fs",
                                       ex) from None

    def fs_of(file_class: str):
        return filesystems[spec.placement[file_class]]

    engine = None
    if spec.engine is not None:
        try:
            engine = registry.ENGINES[spec.engine.type].make(sim, spec.engine.config, spec.cpu,
                                                             fs_of)
        except ValueError as ex:
            raise from_value_error("engine", ex) from None

    wl = spec.workload
    kind = registry.WORKLOADS[wl.type]
    if kind.on == "engine":
        target = engine
    elif kind.on == "fs":
        target = fs_of(kind.files[0])
    else:
        target = queues[str(wl.extras.get("filename", spec.top_level[0])).removeprefix("/dev/")]
    try:
        workload = kind.make(sim, wl.config, target, component_rng(spec.seed, "workload"),
                             spec.run.scale, wl.extras)
    except ValueError as ex:
        raise from_value_error(_workload_error_owner(spec, ex), ex) from None
    return Stack(sim, devices, queues, workload, filesystems, cache, engine)


def _workload_error_owner(spec: RunSpec, ex: ValueError) -> str:
    """``workload``, or ``engine`` when the key of ``ex`` is a server variable the
    workload only met through the engine (``create_tables`` checks the tablespace), or
    nothing when it is a top-level ``placement.<class>`` key (the server's table files
    do not fit the device that class is placed on)."""
    key = from_value_error("", ex).key.split(".")[0]
    if key == "placement":
        return ""
    if spec.engine is not None and is_dataclass(spec.engine.config):
        engine_keys = {f.name for f in fields(spec.engine.config)}
        wl_cfg = spec.workload.config
        wl_keys = ({f.name for f in fields(wl_cfg)}
                   if is_dataclass(wl_cfg) else set())
        if key in engine_keys and key not in wl_keys:
            return "engine"
    return "workload"


class _Sampler:
    """Detail table ``iostat``: every block queue's iostat row every ``interval_ns``."""

    def __init__(self, stack: Stack, interval_ns: int) -> None:
        self.stack = stack
        self.interval_ns = interval_ns
        self.rows: list[dict] = []
        self.last = {n: q.snapshot() for n, q in stack.queues.items()}
        self.last_ns = stack.sim.now_ns
        stack.sim.after(interval_ns, self.tick)

    def tick(self, _arg=None, final: bool = False) -> None:
        sim = self.stack.sim
        if sim.now_ns <= self.last_ns:
            return
        self.last_ns = sim.now_ns
        for name, q in self.stack.queues.items():
            snap = q.snapshot()
            row = {"t_s": sim.now_ns / 1e9, "device": name}
            row.update(q.iostat(self.last[name]))
            self.last[name] = snap
            self.rows.append(row)
        if sim.pending and not final:  # stop once the model has nothing left to do
            sim.after(self.interval_ns, self.tick)


def storage_cost_usd(spec: RunSpec) -> float | None:
    """The list price of the devices the run's files are on (``placement``, or the
    workload's ``filename``), a RAID's members included (``price_usd`` of each device
    config); None when a run names no device."""
    used = set(spec.placement.values())
    target = spec.workload.extras.get("filename")
    if target:
        used.add(str(target).removeprefix("/dev/"))
    if not used:
        return None
    by_name = {d.name: d for d in spec.devices}
    total, todo, seen = 0.0, list(used), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        d = by_name[name]
        total += float(getattr(d.config, "price_usd", 0.0))
        todo.extend(d.members)
    return total


def simulate(spec: RunSpec) -> RunResult:
    """Build and run one configuration; returns the metric columns and detail tables.
    Inside ``pipeline.runwatch.reporting`` the run reports the share of its simulated
    time done (read from another thread; the run is the same with or without it)."""
    stack = build(spec)
    sim = stack.sim
    before = {n: q.snapshot() for n, q in stack.queues.items()}
    sampler = (_Sampler(stack, max(1, int(spec.results.sample_ms * 1e6)))
               if spec.results.details else None)
    stack.workload.start()
    until = int(spec.run.duration_s * 1e9) if spec.run.duration_s > 0 else None
    with runwatch.watch(sim, until, stack.workload):
        sim.run(until_ns=until)

    metrics: dict = {}
    wl_metrics = stack.workload.results()
    if sampler is not None:
        sampler.tick(final=True)   # the last, partial interval
    wl_queue = str(spec.workload.extras.get("filename", "")).removeprefix("/dev/")
    for name, q in stack.queues.items():
        if name == wl_queue and hasattr(stack.workload, "iostat"):
            row = stack.workload.iostat()
        else:
            row = q.iostat(before[name])
        for col, v in row.items():
            metrics[f"iostat.{name}.{col}"] = v
        if "wMB_s" in row and name != wl_queue:   # iostat -m's totals: MB_read, MB_wrtn
            secs = (sim.now_ns - before[name][0]) / 1e9
            metrics[f"iostat.{name}.MB_read"] = row["rMB_s"] * secs
            metrics[f"iostat.{name}.MB_wrtn"] = row["wMB_s"] * secs
    prefix = registry.WORKLOADS[spec.workload.type].metric_prefix or spec.workload.type
    for k, v in wl_metrics.items():
        metrics[f"{prefix}.{k}"] = v
    for name, q in stack.queues.items():
        if hasattr(q, "stats"):          # blk-mq queues: hctxs, tags, scheduler state
            for k, v in q.stats().items():
                metrics[f"mqstat.{name}.{k}"] = v
    for name, dev in stack.devices.items():
        for k, v in dev.stats().items():
            metrics[f"devstat.{name}.{k}"] = v
    for name, fs in stack.filesystems.items():
        for k, v in fs.stats().items():
            metrics[f"fsstat.{name}.{k}"] = v
    if stack.page_cache is not None:
        for k, v in stack.page_cache.stats().items():
            metrics[f"fsstat.page_cache.{k}"] = v
    if stack.engine is not None:
        prefix = registry.ENGINES[spec.engine.type].metric_prefix
        for k, v in stack.engine.stats().items():
            metrics[f"{prefix}.{k}"] = v
        cpu = getattr(stack.engine, "cpu", None)
        if cpu is not None:
            for k, v in cpu.stats(sim.now_ns).items():
                metrics[f"cpustat.{k}"] = v

    cost = storage_cost_usd(spec)
    if cost is not None:
        metrics["storage.cost_usd"] = cost
        notpm = wl_metrics.get("notpm")
        if notpm is not None:
            metrics[f"{spec.workload.type}.notpm_per_usd"] = notpm / cost if cost else 0.0

    details: dict = {}
    if sampler is not None and sampler.rows:
        details["iostat"] = sampler.rows
    if spec.results.details and hasattr(stack.workload, "detail"):
        details["requests"] = stack.workload.detail()   # columns (numpy arrays)
    if spec.results.details and hasattr(stack.engine, "timeseries"):
        details["engine"] = stack.engine.timeseries()   # one row per simulated second
    files = stack.workload.files() if hasattr(stack.workload, "files") else {}
    return RunResult(metrics, details, sim.now_ns, sim.events_processed, files)
