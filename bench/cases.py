"""The cases ``bench.bench_sim`` times: fio straight on a block device, and whole
experiment runs composed from ``conf/`` exactly as ``pipeline.run`` composes them.

Each case returns a ``Measure``: host I/Os (requests completed by the block queues the
host sees; for fio on a RAID that is the array's queue, not its members), simulated
events, CPU seconds (``time.process_time``: the machines are shared, wall time is not
a measure of the simulator) and the process's peak RSS during the case (VmHWM, reset
before the case where Linux allows it). Every case runs with the cyclic garbage
collector paused, as ``pipeline.worker`` runs every simulation (``gc_paused``).
"""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
import pipeline
from pipeline.job import peak_rss_bytes, reset_peak_rss
from pipeline.worker import gc_paused

# the checkout whose models/ and conf/ run (bench/ may be run against another one)
ROOT = Path(pipeline.__file__).resolve().parents[1]
RAID10_DRIVES = 12


@dataclass
class Measure:
    host_ios: int
    events: int
    cpu_s: float
    peak_rss_bytes: int
    note: str = ""

    @property
    def ios_per_cpu_s(self) -> float:
        return self.host_ios / self.cpu_s if self.cpu_s > 0 else 0.0

    @property
    def events_per_io(self) -> float:
        return self.events / self.host_ios if self.host_ios else 0.0


def make_hdd(sim):
    return HDD(sim, "sda", default_15k_sas())


def make_ssd(sim):
    from models.device.ssd import SSD, SSDConfig
    return SSD(sim, "sda", SSDConfig())


def make_raid10(sim):
    """12 x the 15k drive in RAID 1+0 behind the default controller (conf/device/raid10.yaml)."""
    from models.device.raid import RAID, RAIDConfig
    members = [HDD(sim, f"hdd{i}", default_15k_sas()) for i in range(RAID10_DRIVES)]
    return RAID(sim, "sda", RAIDConfig(level=10), members)


def make_nvme(sim):
    """The datacenter NVMe preset (conf/device/nvme_datacenter.yaml)."""
    from models.device.ssd.nvme import NVMe
    from models.device.ssd.presets import intel_p4500_1tb
    return NVMe(sim, "sda", intel_p4500_1tb(), rng=np.random.default_rng(1))


FIO_DEVICES = {"hdd": make_hdd, "ssd": make_ssd, "raid10": make_raid10}
# fio randread 4 KB, unless the case names its own job
FIO_CASES = {**{dev: (make, {}) for dev, make in FIO_DEVICES.items()},
             # the page mix a flushing InnoDB server puts on flash: 16 KB, 70 % reads;
             # the writes outrun the programs, so the write buffer and the channels'
             # calendars stay deep (the flash kernels' costly case)
             "nvme_rw": (make_nvme, {"rw": "randrw", "bs": "16k", "rwmixread": 70})}


def fio_run(make_device, n_ios: int, seed: int = 1, **options) -> Measure:
    """fio randread 4 KB iodepth=32 over 8 GB through noop (``options`` override the
    ``FioConfig``); ``n_ios`` I/Os."""
    sim = Simulator()
    dev = make_device(sim)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="noop", nr_requests=128))
    cfg = FioConfig(**{"rw": "randread", "bs": "4k", "iodepth": 32, "size": "8g",
                       "runtime_s": 1e6, "number_ios": n_ios, **options})
    job = FioJob(sim, cfg, blk, np.random.default_rng(seed))
    reset_peak_rss()
    with gc_paused():
        c0 = time.process_time()
        job.start()
        sim.run()
        cpu = time.process_time() - c0
    return Measure(sum(blk.counters.ios), sim.events_processed, cpu, peak_rss_bytes())


def fio_case(device: str, n_ios: int, repeat: int = 3) -> Measure:
    """Best of ``repeat`` timed runs after a short warm-up (numba compile / cache load)."""
    make, options = FIO_CASES[device]
    fio_run(make, 2_000, **options)
    runs = [fio_run(make, n_ios, **options) for _ in range(repeat)]
    return min(runs, key=lambda m: m.cpu_s)


def commit() -> str:
    """``git describe --always --dirty`` of the checkout the bench runs from."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def compose_spec(experiment: str, overrides: list[str]):
    """A validated RunSpec of ``experiment`` with ``overrides`` (as pipeline.run builds it)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.schema import register
    from pipeline.spec import prepare
    from pipeline.version import code_version

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", *overrides,
                                           "results.details=false"])
    GlobalHydra.instance().clear()
    return prepare(cfg, experiment, code_version())


def simulate_timed(spec):
    """``pipeline.build.simulate(spec)`` with the garbage collector paused, as a worker
    runs it: (the result, CPU seconds of it, build included)."""
    from pipeline.build import simulate

    with gc_paused():
        c0 = time.process_time()
        r = simulate(spec)
        return r, time.process_time() - c0


def experiment_case(experiment: str, overrides: list[str]) -> Measure:
    """One run of ``experiment``: build the stack, start the workload, run the simulator
    (``pipeline.build.simulate`` without the metric collection afterwards)."""
    from pipeline.build import build

    spec = compose_spec(experiment, overrides)
    reset_peak_rss()
    with gc_paused():
        c0 = time.process_time()
        stack = build(spec)
        stack.workload.start()
        until = int(spec.run.duration_s * 1e9) if spec.run.duration_s > 0 else None
        stack.sim.run(until_ns=until)
        cpu = time.process_time() - c0
    ios = sum(sum(q.counters.ios) for q in stack.queues.values())
    return Measure(ios, stack.sim.events_processed, cpu, peak_rss_bytes(),
                   note=f"run.scale={spec.run.scale:g}")


def bare_case(n_ios: int, repeat: int = 3) -> Measure:
    from .bare_hdd import bare_hdd_run

    bare_hdd_run(make_hdd(Simulator()), 2_000)   # compile / cache load
    best = None
    for _ in range(repeat):
        dev = make_hdd(Simulator())
        reset_peak_rss()
        c0 = time.process_time()
        bare_hdd_run(dev, n_ios)
        m = Measure(n_ios, 0, time.process_time() - c0, peak_rss_bytes())
        best = m if best is None or m.cpu_s < best.cpu_s else best
    return best
