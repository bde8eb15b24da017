"""kyber: token-limited scheduling domains tuned to target latencies
(``block/kyber-iosched.c``, Linux 4.12+; the latency histograms of 5.0+).

Modelled, as the kernel does it:

- Four domains by operation - READ, WRITE, DISCARD, OTHER - each a FIFO of queued
  requests and a pool of tokens, device-wide: a request needs a token of its domain to
  be dispatched and holds it until it completes (``kyber_get_domain_token``,
  ``kyber_finish_request``). The pools start at their maximum depths 256 / 128 / 64 /
  16 (``kyber_depth``).
- Dispatch takes up to 16 / 8 / 1 / 1 requests in a row from one domain
  (``kyber_batch_size``), then moves round-robin to the next domain that has both a
  request and a token; with no token anywhere nothing is dispatched until a
  completion frees one.
- Every completed READ / WRITE / DISCARD adds its total latency (allocation to
  completion) and its I/O latency (dispatch to completion) to a histogram of eight
  buckets, each a quarter of the domain's target wide (``read_lat_nsec`` 2 ms,
  ``write_lat_nsec`` 10 ms, discard 5 s): four "good" buckets up to the target, four
  "bad" ones. A completion arms a 100 ms timer if none is pending; when it fires, a
  domain's percentile is taken once it has 500 samples or its first sample is a
  second old (``calculate_percentile``). If any domain's p90 I/O latency is over
  target the device is congested ("bad"), and every domain with a p99 total latency
  is resized to ``depth * (p99 bucket + 1) / 4`` (clamped to 1..its maximum): good
  domains shrink, bad ones grow; without congestion only the bad ones grow
  (``kyber_timer_fn``). So a flood of writes that makes reads late loses write tokens
  until the reads meet their target.

The timer is evaluated lazily, at the next dispatch or completion after it is due
(at its due time): nothing between those observes the depths, so the result is the
same as a timer event.

Not modelled: ``async_depth`` (async requests may take only 75 % of the scheduler
tags), the per-CPU software queues' own lists (``kcq``; merging uses the scheduler's
merge hashes instead), blk-stat accounting overhead.
"""
from __future__ import annotations

from collections import OrderedDict

from ...device.request import DISCARD, FLUSH, READ, WRITE, IORequest
from ..config import BlockConfig
from ..scheduler import Scheduler

DOMAINS = ("READ", "WRITE", "DISCARD", "OTHER")
_DOMAIN_OF_OP = {READ: 0, WRITE: 1, DISCARD: 2, FLUSH: 3}
KYBER_DEPTH = (256, 128, 64, 16)
KYBER_BATCH_SIZE = (16, 8, 1, 1)
DISCARD_LAT_NSEC = 5_000_000_000
LATENCY_SHIFT = 2
GOOD_BUCKETS = 1 << LATENCY_SHIFT
LATENCY_BUCKETS = 2 << LATENCY_SHIFT
TIMER_NS = 100_000_000            # HZ / 10
PERCENTILE_WINDOW_NS = 1_000_000_000
PERCENTILE_MIN_SAMPLES = 500
TOTAL, IO = 0, 1


class Kyber(Scheduler):
    name = "kyber"
    front_merges = True

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__()
        self.targets = (cfg.read_lat_nsec, cfg.write_lat_nsec, DISCARD_LAT_NSEC)
        self.depth = list(KYBER_DEPTH)
        self.inflight = [0, 0, 0, 0]
        self.rqs: list[OrderedDict[IORequest, None]] = [OrderedDict() for _ in DOMAINS]
        self.cur_domain = 0
        self.batching = 0
        self.buckets = [[[0] * LATENCY_BUCKETS for _ in (TOTAL, IO)] for _ in range(3)]
        self.latency_timeout = [0, 0, 0]
        self.domain_p99 = [-1, -1, -1]
        self.timer_ns: int | None = None
        self.throttled = 0                          # dispatch attempts without a token
        self.resizes: list[tuple[int, str, int]] = []   # (time, domain, new depth)

    # -- queue -----------------------------------------------------------------------
    def _add(self, req: IORequest, now_ns: int) -> None:
        self.rqs[_DOMAIN_OF_OP[req.op]][req] = None

    def _remove(self, req: IORequest) -> None:
        del self.rqs[_DOMAIN_OF_OP[req.op]][req]

    def dispatch(self, now_ns: int) -> IORequest | None:
        """The next request that gets a token, or None (all queued domains throttled)."""
        if not self.count:
            return None
        self._tick(now_ns)
        if self.batching < KYBER_BATCH_SIZE[self.cur_domain]:
            req = self._take(self.cur_domain)
            if req is not None:
                return req
        self.batching = 0
        for _ in DOMAINS:
            self.cur_domain = (self.cur_domain + 1) % len(DOMAINS)
            req = self._take(self.cur_domain)
            if req is not None:
                return req
        return None

    def _take(self, d: int) -> IORequest | None:
        rqs = self.rqs[d]
        if not rqs:
            return None
        if self.inflight[d] >= self.depth[d]:
            self.throttled += 1
            return None
        req = rqs.popitem(last=False)[0]
        self.inflight[d] += 1
        self.batching += 1
        self.count -= 1
        self._unhash(req)
        return req

    # -- completion and the latency feedback -----------------------------------------
    def completed(self, req: IORequest, now_ns: int) -> None:
        """``kyber_finish_request`` + ``kyber_completed_request``."""
        if req.op == FLUSH:          # flushes bypass the scheduler: no token, no sample
            return
        self._tick(now_ns)
        d = _DOMAIN_OF_OP[req.op]
        if not req.nomerge:          # a FUA write bypassed kyber: no token, but sampled
            self.inflight[d] -= 1
        if d == 3:
            return
        target = self.targets[d]
        self._sample(d, TOTAL, target, now_ns - req.queue_ns)
        self._sample(d, IO, target, now_ns - req.dispatch_ns)
        if self.timer_ns is None:
            self.timer_ns = now_ns + TIMER_NS

    def _sample(self, d: int, kind: int, target: int, latency_ns: int) -> None:
        if latency_ns > 0:
            bucket = min((latency_ns - 1) // max(target >> LATENCY_SHIFT, 1), LATENCY_BUCKETS - 1)
        else:
            bucket = 0
        self.buckets[d][kind][bucket] += 1

    def _tick(self, now_ns: int) -> None:
        while self.timer_ns is not None and self.timer_ns <= now_ns:
            t, self.timer_ns = self.timer_ns, None
            self._timer(t)

    def _percentile(self, d: int, kind: int, percentile: int, t: int) -> int:
        buckets = self.buckets[d][kind]
        samples = sum(buckets)
        if not samples:
            return -1
        if not self.latency_timeout[d]:
            self.latency_timeout[d] = t + PERCENTILE_WINDOW_NS
        if samples < PERCENTILE_MIN_SAMPLES and self.latency_timeout[d] > t:
            return -1
        self.latency_timeout[d] = 0
        rank = -(-samples * percentile // 100)
        bucket = 0
        while bucket < LATENCY_BUCKETS - 1 and buckets[bucket] < rank:
            rank -= buckets[bucket]
            bucket += 1
        buckets[:] = [0] * LATENCY_BUCKETS
        return bucket

    def _timer(self, t: int) -> None:
        bad = False
        for d in range(3):
            if self._percentile(d, IO, 90, t) >= GOOD_BUCKETS:
                bad = True
        for d in range(3):
            p99 = self._percentile(d, TOTAL, 99, t)
            if bad:
                if p99 < 0:
                    p99 = self.domain_p99[d]
                self.domain_p99[d] = -1
            elif p99 >= 0:
                self.domain_p99[d] = p99
            if p99 < 0:
                continue
            if bad or p99 >= GOOD_BUCKETS:
                depth = (self.depth[d] * (p99 + 1)) >> LATENCY_SHIFT
                depth = max(1, min(depth, KYBER_DEPTH[d]))
                if depth != self.depth[d]:
                    self.depth[d] = depth
                    self.resizes.append((t, DOMAINS[d], depth))

    def stats(self) -> dict:
        return {"kyber_read_depth": self.depth[0], "kyber_write_depth": self.depth[1],
                "kyber_throttled": self.throttled, "kyber_resizes": len(self.resizes)}
