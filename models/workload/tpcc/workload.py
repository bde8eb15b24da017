"""A DBT-2 / tpcc-mysql run against the simulated InnoDB server: the database loaded
(``schema``), ``connections`` client connections in a closed loop, ``rampup`` s
unmeasured, then ``duration`` s measured.

Each connection is a simulated thread: draw the next transaction of the mix
(``txns.TxnBuilder``) and ``yield from server.run(thd, trx)``; its response time is
that call (the client's CPU and the network are not modelled). No transaction
starts after the measured interval; the run ends when the last one has finished, and
those that end in the interval are counted (``report``).

``run.scale`` multiplies ``duration`` and ``rampup`` (the database and the rates are
kept), as sysbench's ``time``. The server's interface: ``create_tables``,
``start`` / ``stop``, ``run``, ``status``, ``table_pages``; ``preload`` for
``warm_pool``, ``warm_replay`` for ``warm_pool_turnovers`` (both in ``warm_up``, at
``start``), ``warm_snapshot`` / ``warm_restore`` to reuse a replay in the next run of
the same configuration (``_REPLAYED``).

Deterministic from the run's generator: each connection draws from a child of it.
"""
from __future__ import annotations

import copy

import numpy as np

from ...engine.innodb.tablespace import PAGE_SIZE
from ...sim import Simulator
from ..server_status import MeasuredRun
from . import nurand, report, schema
from .options import TpccConfig
from .txns import TYPES, TpccState, TxnBuilder



# The last warm replay of this process (``Tpcc.warm_up``): its key -> the server's state
# after it (``warm_snapshot``), the orders it placed (``TpccState``) and its counts. A
# sweep over placements (E3) replays the same past in every run: a worker that ran one
# restores it for the next (~25 CPU s, ~85 % of a 12 s all-HDD run, saved; at 100
# warehouses and a 2 GB pool the replay and the snapshot kept hold ~100 MB together,
# tracemalloc). One entry: the next replay replaces it.
_REPLAYED: dict[tuple, tuple] = {}


class Tpcc(MeasuredRun):
    """One run of ``cfg`` against ``server``."""

    def __init__(self, sim: Simulator, cfg: TpccConfig, server,
                 rng: np.random.Generator | None = None, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"scale: must be > 0, got {scale}")
        missing = [m for m in ("create_tables", "run", "status", "table_pages")
                   if not hasattr(server, m)]
        if missing:
            raise ValueError(f"tpcc runs on the InnoDB server (engine=innodb_server_56), not on "
                             f"{type(server).__name__} (no {', '.join(missing)})")
        self.sim, self.cfg, self.server = sim, cfg, server
        rng = rng if rng is not None else np.random.default_rng(0)
        self.duration_ns = int(round(cfg.duration * scale * 1e9))
        self.rampup_ns = int(round(cfg.rampup * scale * 1e9))
        children = rng.spawn(cfg.clients + 1)
        consts = nurand.run_constants(children[-1])
        self.rands = [nurand.TpccRand(g, consts) for g in children[:cfg.clients]]
        self.builder = TxnBuilder(cfg.warehouses, TpccState(cfg.warehouses, cfg.warm_pool))
        server.create_tables(schema.table_defs(cfg.warehouses))
        self.loaded_pages = sum(server.table_pages().values())
        # the run's past (``warm_up``): its own stream, a further child (the
        # connections' are unchanged)
        self._warm_rng, self._consts = rng.spawn(1)[0], consts
        self.preloaded = 0
        self.warm: dict = {}
        self._warmed = False
        self.lat: dict[str, list] = {t: [] for t in TYPES}
        # New-Orders ended in each whole second of the measured interval; those of a
        # part second at its end (and one ending at the deadline itself) count in the
        # last whole second, so a run of 10.02 s does not end in a 0.02 s "dip" (its
        # rate is then over 1.02 s: ``results``)
        self.new_orders_per_s = [0] * max(1, self.duration_ns // 1_000_000_000)
        self.rollbacks = 0
        self.running = 0
        self.t0 = self.measure_ns = self.deadline_ns = 0
        self.finished_ns: int | None = None
        self._before: dict = {}
        self._after: dict = {}

    @property
    def duration_s(self) -> float:
        """``duration`` as the run uses it (after ``run.scale``)."""
        return self.duration_ns / 1e9

    def warm_up(self) -> None:
        """The pool the run starts from, outside simulated time (``start`` calls it; a
        trial build - ``pipeline.spec.prepare`` - does not pay for it): with
        ``warm_pool`` the server's ``preload``, then with ``warm_pool_turnovers`` its
        ``warm_replay`` of this workload's transactions. The districts' orders the
        replay places are the run's (Stock-Level's last 20 orders are then the ones
        whose STOCK rows the replay touched). A replay this process made for the same
        key (``_replay_key``) is restored instead of made again."""
        if self._warmed:
            return
        self._warmed = True
        cfg, server = self.cfg, self.server
        self.preloaded = server.preload() if cfg.warm_pool and hasattr(server, "preload") else 0
        if self.preloaded and cfg.warm_pool_turnovers > 0:
            key = self._replay_key()
            past = _REPLAYED.get(key)
            if past is None:
                wrand = nurand.TpccRand(self._warm_rng, self._consts)
                build = self.builder.build
                self.warm = server.warm_replay((build(wrand)[1] for _ in iter(int, 1)),
                                               cfg.warm_pool_turnovers)
                _REPLAYED.clear()
                _REPLAYED[key] = (server.warm_snapshot(), copy.deepcopy(self.builder.state),
                                  dict(self.warm))
            else:
                snap, state, warm = past
                server.warm_restore(snap)
                self.builder.state = copy.deepcopy(state)
                self.warm = dict(warm)
            self.builder.counts = dict.fromkeys(TYPES, 0)

    def _replay_key(self) -> tuple:
        """Everything the replay's outcome depends on: this workload's options, the
        server's variables, the pool's frames and what was loaded, and the replay's own
        random stream (its generator's state) and NURand constants. The devices and the
        file placement are not in it: the replay does no I/O."""
        server = self.server
        return (repr(self.cfg), repr(server.cfg), server.pool.capacity, self.loaded_pages,
                self.preloaded, repr(self._warm_rng.bit_generator.state), repr(self._consts))

    def start(self) -> None:
        self.warm_up()
        sim = self.sim
        self._begin(self.rampup_ns, self.duration_ns)
        self.running = self.cfg.clients
        for i in range(self.cfg.clients):
            sim.spawn(self._client(i), f"tpcc{i}")

    def _client(self, thd: int):
        sim, server, build, rnd = self.sim, self.server, self.builder.build, self.rands[thd]
        lat, per_s = self.lat, self.new_orders_per_s
        last_s = len(per_s) - 1
        while sim.now_ns < self.deadline_ns:
            kind, trx = build(rnd)
            t0 = sim.now_ns
            yield from server.run(thd, trx)
            now = sim.now_ns
            if self.measure_ns <= now <= self.deadline_ns:
                lat[kind].append(now - t0)
                if kind == "new_order":
                    per_s[min((now - self.measure_ns) // 1_000_000_000, last_s)] += 1
                if trx.rollback:
                    self.rollbacks += 1
        self.running -= 1
        if self.running == 0:
            self._finish()

    def data_bytes(self) -> int:
        """The .ibd files' pages now (loaded plus grown), in bytes."""
        return sum(self.server.table_pages().values()) * PAGE_SIZE

    def results(self) -> dict:
        """DBT-2's report over the measured interval, the database size, and the
        server's status over it (counters as their increase, gauges at the end)."""
        out = report.final_report(self.lat, self.rollbacks, self.duration_ns / 1e9,
                                  self.cfg.percentile)
        per_s = self.new_orders_per_s
        out.update(report.notpm_over_time(per_s, self.duration_ns / 1e9 - (len(per_s) - 1)))
        out["loaded_bytes"] = self.loaded_pages * PAGE_SIZE
        out["data_bytes"] = self.data_bytes()
        out["preloaded_pages"] = self.preloaded
        for k, v in self.warm.items():
            out[f"warm_{k}"] = v
        out.update(self.status_over_run())
        reqs, reads = out.get("Innodb_buffer_pool_read_requests", 0), out.get(
            "Innodb_buffer_pool_reads", 0)
        out["hit_rate"] = 1 - reads / reqs if reqs else 0.0
        return out
