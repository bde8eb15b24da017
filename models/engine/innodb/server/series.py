"""The server's per-second time series (the detail table ``engine``): one row at each
whole simulated second while the server runs, what happened during that second.

Columns: ``t_s``; ``trx`` (transactions committed in the second = tps); the checkpoint
age and the points it is judged against (``max_modified_age_async`` /
``_sync``, ``max_checkpoint_age``, bytes of LSN); ``pages_dirty``, ``pages_free``;
pages flushed in the second from the flush list (``flushed_list``), by LRU batches
(``flushed_lru``) and by user threads' single-page flushes (``flushed_single``); of
``flushed_list``, the pages user threads' own batches wrote - 5.1 / 5.5's preflush
past the async point (``flushed_preflush``) and the batches at the sync point
(``flushed_sync``) - the rest is the background thread's (adaptive / io_capacity);
``wait_free`` (``Innodb_buffer_pool_wait_free`` in the second), ``reads`` (pages read),
``sync_waits`` / ``sync_wait_s`` (user threads stopped at the sync point and the time
they began waiting in the second). Per-device iostat of the same seconds is the
``iostat`` detail table (``results.sample_ms``).

``summary()``: burst vs sustained throughput of ``trx`` (``metrics.warmup``; nothing for
a run that ended before its first whole second).
"""
from __future__ import annotations

from ....metrics.warmup import burst_sustained
from ..buffer.flushing import SECOND_NS

COUNTERS = ("trx", "flushed_list", "flushed_lru", "flushed_single", "flushed_preflush",
            "flushed_sync", "wait_free", "reads", "sync_waits", "sync_wait_ns")


class Series:
    """Samples ``server`` (an ``InnoDBServer``) once a simulated second."""

    def __init__(self, sim, server) -> None:
        self.sim = sim
        self.server = server
        self.rows: list[dict] = []
        self._running = False

    def _counters(self) -> dict:
        srv = self.server
        f, pool, ck = srv.flusher, srv.pool, srv.ckpt
        return {"trx": srv.trx_committed, "flushed_list": f.flushed_list,
                "flushed_lru": f.flushed_lru, "flushed_single": f.flushed_single,
                "flushed_preflush": f.flushed_preflush, "flushed_sync": f.flushed_sync,
                "wait_free": pool.wait_free, "reads": pool.reads,
                "sync_waits": ck.sync_waits, "sync_wait_ns": ck.sync_wait_ns}

    def start(self) -> None:
        if not self._running:
            self._running = True
            self.sim.spawn(self._loop(), "series")

    def stop(self) -> None:
        self._running = False

    def _loop(self):
        sim = self.sim
        last = self._counters()
        next_ns = (sim.now_ns // SECOND_NS + 1) * SECOND_NS
        while self._running:
            yield next_ns - sim.now_ns
            next_ns += SECOND_NS
            if not self._running:
                return
            cur = self._counters()
            self.rows.append(self._row(cur, last))
            last = cur

    def _row(self, cur: dict, last: dict) -> dict:
        srv = self.server
        ck, pool = srv.ckpt, srv.pool
        d = {k: cur[k] - last[k] for k in COUNTERS}
        return {"t_s": self.sim.now_ns / 1e9, "trx": d["trx"],
                "checkpoint_age": ck.checkpoint_age(),
                "max_modified_age_async": ck.max_modified_age_async,
                "max_modified_age_sync": ck.max_modified_age_sync,
                "max_checkpoint_age": ck.max_checkpoint_age,
                "pages_dirty": len(pool.flush_list), "pages_free": pool.free,
                "flushed_list": d["flushed_list"], "flushed_lru": d["flushed_lru"],
                "flushed_single": d["flushed_single"],
                "flushed_preflush": d["flushed_preflush"], "flushed_sync": d["flushed_sync"],
                "wait_free": d["wait_free"],
                "reads": d["reads"], "sync_waits": d["sync_waits"],
                "sync_wait_s": d["sync_wait_ns"] / 1e9}

    def summary(self) -> dict:
        """``warmup_s``, ``burst_tps``, ``sustained_tps`` of the ``trx`` column."""
        return burst_sustained([r["trx"] for r in self.rows])
