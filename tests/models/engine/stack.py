"""Build a small commit-path stack for tests: fake device -> BlockQueue -> FakeFS ->
CPU + commit path -> mysqlslap."""
from __future__ import annotations

from models.block import BlockQueue
from models.engine.cpu import CPU, CPUConfig
from models.engine.innodb import CommitConfig, make_commit_path
from models.sim import Simulator
from models.workload.mysqlslap import Mysqlslap, MysqlslapConfig
from tests.models.engine.fakefs import FakeFS
from tests.models.fakes import FixedDevice


def build(service_ns=100_000, barrier=False, cpu=None, queue_depth=1, device=None,
          **engine_kw):
    sim = Simulator()
    dev = device(sim) if device is not None else FixedDevice(sim, service_ns=service_ns,
                                                             queue_depth=queue_depth)
    q = BlockQueue(sim, dev)
    fs = FakeFS(sim, q, barrier=barrier)
    c = CPU(sim, cpu or CPUConfig())
    eng = make_commit_path(sim, CommitConfig(**engine_kw), c, fs, fs.create)
    return sim, dev, q, fs, c, eng


def run_slap(concurrency, queries, load_type="write", iterations=1, **kw):
    sim, dev, q, fs, c, eng = build(**kw)
    slap = Mysqlslap(sim, MysqlslapConfig(concurrency=concurrency, number_of_queries=queries,
                                          iterations=iterations, load_type=load_type), eng)
    slap.start()
    sim.run()
    return slap.results(), eng, sim, fs, q
