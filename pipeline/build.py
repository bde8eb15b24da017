"""Build the simulated stack of one run from its ``RunSpec``, run it, collect metrics.

The stack: devices (members before the arrays that use them), one Linux block queue
(``models.block.BlockQueue``) on every top-level device - a device that is no RAID
member, i.e. what the host sees as ``/dev/<name>`` - with the ``block`` settings or
the device's own ``queue`` overrides, and the workload on the queue its ``filename``
names.

Randomness: one ``numpy.random.SeedSequence`` per run from ``run.seed``; every
component gets its own child stream keyed by its config path (``device.hdd0``,
``workload``), so adding a device does not change the numbers another one draws.

Metric columns of the summary row:

- ``iostat.<dev>.<column>``: ``iostat -x`` of each block device over the workload's
  measured interval (``r_s``, ``rMB_s``, ``await_ms``, ``util_pct``, ...);
- ``<workload type>.<metric>``: what the workload reports (``fio.MB_s``, ``fio.iops``);
- ``devstat.<dev>.<counter>``: device-internal counters (busy time, cache hits).

Metric columns never start with a config section name (``run``, ``device``, ``block``,
``workload``, ...), so ``pipeline.query`` tells parameters from metrics by the first
dotted segment alone.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.block import BlockQueue
from models.sim import Simulator

from . import registry
from .errors import from_value_error
from .spec import RunSpec


@dataclass
class Stack:
    sim: Simulator
    devices: dict
    queues: dict
    workload: Any


@dataclass
class RunResult:
    summary: dict                       # metric columns
    # table name -> list of row dicts, or dict of equal-length columns
    details: dict = field(default_factory=dict)
    sim_ns: int = 0
    events: int = 0


def component_rng(seed: int, path: str) -> np.random.Generator:
    """The child stream of component ``path`` (stable across runs and machines)."""
    key = zlib.crc32(path.encode())
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(key,)))


def build(spec: RunSpec) -> Stack:
    """Construct every model object; a model's ``ValueError`` becomes a ``ConfigError``
    naming the component it came from."""
    sim = Simulator()
    devices: dict = {}
    for d in spec.devices:
        kind = registry.DEVICES[d.type]
        members = [devices[m] for m in d.members]
        try:
            devices[d.name] = kind.make(sim, d.name, d.config, members,
                                        component_rng(spec.seed, f"device.{d.name}"))
        except ValueError as ex:
            raise from_value_error(f"device.{d.name}", ex) from None
    queues = {}
    for d in spec.devices:
        if d.queue is None:
            continue
        try:
            queues[d.name] = BlockQueue(sim, devices[d.name], d.queue, name=d.name)
        except ValueError as ex:
            raise from_value_error(f"device.{d.name}.queue", ex) from None
    wl = spec.workload
    target = str(wl.extras.get("filename", spec.top_level[0])).removeprefix("/dev/")
    try:
        workload = registry.WORKLOADS[wl.type].make(
            sim, wl.config, queues[target], component_rng(spec.seed, "workload"),
            spec.run.scale)
    except ValueError as ex:
        raise from_value_error("workload", ex) from None
    return Stack(sim, devices, queues, workload)


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


def simulate(spec: RunSpec) -> RunResult:
    """Build and run one configuration; returns the metric columns and detail tables."""
    stack = build(spec)
    sim = stack.sim
    before = {n: q.snapshot() for n, q in stack.queues.items()}
    sampler = (_Sampler(stack, max(1, int(spec.results.sample_ms * 1e6)))
               if spec.results.details else None)
    stack.workload.start()
    until = int(spec.run.duration_s * 1e9) if spec.run.duration_s > 0 else None
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
    for k, v in wl_metrics.items():
        metrics[f"{spec.workload.type}.{k}"] = v
    for name, dev in stack.devices.items():
        for k, v in dev.stats().items():
            metrics[f"devstat.{name}.{k}"] = v

    details: dict = {}
    if sampler is not None and sampler.rows:
        details["iostat"] = sampler.rows
    if spec.results.details and hasattr(stack.workload, "detail"):
        details["requests"] = stack.workload.detail()   # columns (numpy arrays)
    return RunResult(metrics, details, sim.now_ns, sim.events_processed)
