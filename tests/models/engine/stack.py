"""Build a small commit-path stack for tests: fake device -> BlockQueue -> FakeFS ->
CPU + commit path (``build``), or the InnoDB server around that commit path with its
data files on the same FakeFS -> mysqlslap (``run_slap``)."""
from __future__ import annotations

from models.block import BlockQueue
from models.engine.cpu import CPU, CPUConfig
from models.engine.innodb import CommitConfig, make_commit_path
from models.engine.innodb.server import InnoDBServer, InnoDBServerConfig
from models.sim import Simulator
from models.workload.mysqlslap import Mysqlslap, MysqlslapConfig
from tests.models.engine.fakefs import FakeFS
from tests.models.fakes import FixedDevice


def build(service_ns=100_000, barrier=False, cpu=None, queue_depth=1, device=None,
          config=CommitConfig, **engine_kw):
    sim = Simulator()
    dev = device(sim) if device is not None else FixedDevice(sim, service_ns=service_ns,
                                                             queue_depth=queue_depth)
    q = BlockQueue(sim, dev)
    fs = FakeFS(sim, q, barrier=barrier)
    c = CPU(sim, cpu or CPUConfig())
    eng = make_commit_path(sim, config(**engine_kw), c, fs, fs.create)
    return sim, dev, q, fs, c, eng


def build_server(**kw):
    """``build`` with the InnoDB server around the commit path (``InnoDBServerConfig``
    keys in ``kw``); returns (sim, dev, q, fs, server)."""
    sim, dev, q, fs, c, eng = build(config=InnoDBServerConfig, **kw)
    return sim, dev, q, fs, InnoDBServer(sim, eng.cfg, c, eng, fs, fs)


def run_slap(concurrency, queries, iterations=1, slap_kw=None, **kw):
    """mysqlslap on ``build_server(**kw)``; returns (results, commit path, sim, fs, q)."""
    sim, dev, q, fs, srv = build_server(**kw)
    slap = Mysqlslap(sim, MysqlslapConfig(concurrency=concurrency, number_of_queries=queries,
                                          iterations=iterations, **(slap_kw or {})), srv)
    slap.start()
    sim.run()
    return slap.results(), srv.commit_path, sim, fs, q
