"""The background flushing thread: the 5.6 page cleaner, the 5.1 / 5.5 / XtraDB master
thread's flushing (``buf0flu.cc``, ``srv0srv.c``). One loop for every algorithm; what
to flush each loop is the policy's (``flushing/``, one module per algorithm, picked by
``flushing.policy_for(cfg)``).

Each loop: sleep until a second (the policy's ``sleep_ns``) after the last loop began
(unless the policy asked to ``skip_sleep`` and its batch wrote something); note whether
the server was active (the LSN moved); the policy's LRU tail batch, if any; its
flush-list batch, if any (a batch already running - a user thread's preflush - is
given up, or waited for and asked again when the batch says ``retry``); the policy is
told what was written. Every ten loops of a second the policy's 10-second batches
(the master thread's; none for the 5.6 page cleaner), and every
``checkpoint_every_s`` loops of a second a checkpoint (``LogCheckpointer.checkpoint``).

The per-second series lives in ``server.series``; this thread keeps none.
Deliberately not modelled: several page cleaner threads (5.7), the master thread's
other duties (purge; its insert buffer merge is ``server/ibuf.py``'s own thread).
"""
from __future__ import annotations

from .flushing import LSN_MAX, SECOND_NS, policy_for

__all__ = ["LSN_MAX", "BackgroundFlusher"]

TEN_SECOND_LOOPS = 10   # srv_master_thread's 1-second loops per 10-second part


class BackgroundFlusher:
    """``cfg``: the server config; ``flusher``, ``pool``, ``ckpt`` (``LogCheckpointer``)."""

    def __init__(self, sim, cfg, pool, flusher, ckpt) -> None:
        self.sim = sim
        self.cfg = cfg
        self.pool = pool
        self.flusher = flusher
        self.ckpt = ckpt
        self.policy = policy_for(cfg)(cfg, pool, flusher, ckpt)
        self._running = False
        self.flushed_background = 0
        self.flushed_ten_second = 0     # of those, by the master thread's 10-second part
        self.loops = 0

    def start(self) -> None:
        if not self._running:
            self._running = True
            self.policy.start()
            self.sim.spawn(self._loop(), self.policy.thread)

    def stop(self) -> None:
        self._running = False

    def _flush_list(self, batch):
        """Generator: the policy's flush-list batch; returns pages written."""
        flusher = self.flusher
        while True:
            n = yield from flusher.flush_list_batch(batch.pages, batch.lsn_limit)
            if n is not None or not batch.retry:
                return n or 0
            yield from flusher.wait_list_batch()

    def _loop(self):
        sim, flusher, policy = self.sim, self.flusher, self.policy
        last_lsn = self.ckpt.redo.lsn
        second = 0
        tenths = 0                              # loops count in tenths of a second
        skip = False
        next_loop = sim.now_ns + SECOND_NS
        while self._running:
            if not skip:
                if sim.now_ns < next_loop:      # page_cleaner_sleep_if_needed
                    yield next_loop - sim.now_ns
                if not self._running:
                    return
                next_loop = sim.now_ns + SECOND_NS
            self.loops += 1
            lsn = self.ckpt.redo.lsn
            active = lsn != last_lsn
            last_lsn = lsn
            n = 0
            depth = policy.lru_depth(active)
            if depth:
                n += yield from flusher.lru_tail(depth)
            batch = policy.plan(active)
            next_loop -= SECOND_NS - policy.sleep_ns
            m = 0
            if batch is not None and batch.pages:
                m = yield from self._flush_list(batch)
            policy.done(m)
            n += m
            skip = policy.skip_sleep and m > 0
            self.flushed_background += n
            tenths += policy.sleep_ns * 10 // SECOND_NS
            if tenths >= 10:
                tenths -= 10
                second += 1
                if second % TEN_SECOND_LOOPS == 0:
                    for batch in policy.ten_second_batches():
                        m = yield from self._flush_list(batch)
                        self.flushed_background += m
                        self.flushed_ten_second += m
                if second % self.ckpt.checkpoint_every_s == 0:
                    yield from self.ckpt.checkpoint()
