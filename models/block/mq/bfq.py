"""bfq (simplified): budget-based proportional share among processes
(``block/bfq-iosched.c``, Linux 4.12+).

Modelled: every submitting thread (``IORequest.issuer``) has its own queue of sync
requests (reads, O_DIRECT and fsync-driven writes); async (writeback) writes share
one queue. One queue is *in service* at a time and is served in sector order
(continuing after the last dispatched request, wrapping to the oldest) until it has
received its budget - ``max_budget_sectors`` (sysfs ``max_budget``, 16384 sectors =
8 MB) - or ``timeout_sync_ms`` (125 ms) has passed since it started, or it has
nothing queued and nothing to wait for. Idling (``slice_idle_ms``, 8 ms, on a
rotational device; bfq does not idle for equal-weight queues on a non-rotational
one): a sync queue that empties keeps the device while its requests are in flight
and for ``slice_idle_ms`` after the last completes, so a process that reads, thinks
briefly and reads again is not preempted between its reads (``bfq_arm_slice_timer``);
a request from it ends the idling, the idle time running out expires the queue.
Then the busy queue with the smallest virtual start time goes next, and the expired
queue's virtual time advances by the service it received: with equal weights every
process gets the same share of bytes, whatever its request size or queue depth (a
start-time fair queueing reading of bfq's B-WF2Q+). A queue that was empty restarts
at the smallest virtual time among the busy ones, so an absent process earns no
credit. Requests of different queues are never merged.

Deliberately not modelled: weights and ``ioprio`` / cgroups (every queue weighs the
same), budget feedback and the auto-tuned ``max_budget`` (0) from the peak rate,
weight raising of interactive and soft-real-time queues (``low_latency``), the FIFO
expiry within a queue (``fifo_expire_sync`` / ``_async``), back-seek rules, queue
merging of cooperating processes, the async charge factor, injection of other
queues' I/O while idling, idling on non-rotational devices to protect a weight,
think-time and seekiness detection (every sync queue may idle).
"""
from __future__ import annotations

from ...device.request import FLUSH, IORequest
from ..cfq import ASYNC, CFQ
from ..config import BlockConfig
from ..scheduler import Scheduler


class BFQ(CFQ):
    """bfq began as a fork of cfq: the same per-process queues (``_qkey``, merging
    within a queue, sector order inside one); the service discipline differs."""

    name = "bfq"
    front_merges = True
    idle_timer = None       # its idling is its own (dispatch / completed), not cfq's timer

    def __init__(self, cfg: BlockConfig) -> None:
        super().__init__(cfg)
        self.max_budget_bytes = cfg.max_budget_sectors * 512
        self.timeout_ns = int(cfg.timeout_sync_ms * 1e6)
        self.vstart: dict[tuple, int] = {}     # virtual start time (bytes of service)
        self.served_bytes = 0
        self.active_until_ns = 0
        self.expirations = 0
        self.slice_idle_ns = int(cfg.slice_idle_ms * 1e6)
        self.rotational = True          # the queue sets it from its device
        self.inflight: dict[tuple, int] = {}
        self.idle_until_ns: int | None = None
        self.wake_ns: int | None = None   # when the queue must look again (idle end)
        self.idle_waits = 0
        self.last_key: int | None = None   # sort key of the last dispatched

    def _add(self, req: IORequest, now_ns: int) -> None:
        key = self._qkey(req)
        if not len(self.queues.get(key, ())) and key != self.active:
            # (re)activated: no credit for the time it was idle
            self.vstart[key] = max(self.vstart.get(key, 0), self._vtime())
        self._enqueue(req, key)

    def _vtime(self) -> int:
        busy = [self.vstart[k] for k, q in self.queues.items() if len(q)]
        if self.active is not None:
            busy.append(self.vstart[self.active])
        return min(busy) if busy else 0

    def _may_idle(self, key: tuple, now_ns: int) -> bool:
        return (self.rotational and self.slice_idle_ns > 0 and key != ASYNC
                and self.served_bytes < self.max_budget_bytes and now_ns < self.active_until_ns)

    def dispatch(self, now_ns: int) -> IORequest | None:
        """The next request, or None while the in-service queue idles."""
        if not self.count:
            return None
        act = self.active
        if act is not None and not len(self.queues[act]) and self._may_idle(act, now_ns):
            if self.inflight.get(act, 0):
                return None                       # wait for its requests to complete
            if self.idle_until_ns is not None and now_ns < self.idle_until_ns:
                return None                       # idling: its process may come back
        return Scheduler.dispatch(self, now_ns)

    def completed(self, req: IORequest, now_ns: int) -> None:
        if req.op == FLUSH or req.nomerge:    # flushes and FUA writes bypass bfq
            return
        key = self._qkey(req)
        self.inflight[key] -= 1
        if (key == self.active and not self.inflight[key] and not len(self.queues[key])
                and self._may_idle(key, now_ns)):
            self.idle_until_ns = self.wake_ns = now_ns + self.slice_idle_ns
            self.idle_waits += 1

    def _select(self, now_ns: int) -> tuple:
        act = self.active
        self.idle_until_ns = None
        if (act is not None and len(self.queues[act]) and self.served_bytes < self.max_budget_bytes
                and now_ns < self.active_until_ns):
            return act
        if act is not None:            # expire: charge the service it received
            self.vstart[act] += self.served_bytes
            self.expirations += 1
        busy = [k for k, q in self.queues.items() if len(q)]
        key = min(busy, key=lambda k: self.vstart[k])   # ties: the queue seen first
        self.active = key
        self.served_bytes = 0
        self.active_until_ns = now_ns + self.timeout_ns
        self.last_key = None
        return key

    rehash = Scheduler.rehash          # the sector order keeps a request's first start

    def _pop(self, now_ns: int) -> IORequest:
        key = self._select(now_ns)
        q = self.queues[key]
        req = q.next_after(self.last_key) or q.oldest()
        self.last_key = q.remove(req)
        self.served_bytes += req.size_bytes
        key = self._qkey(req)
        self.inflight[key] = self.inflight.get(key, 0) + 1
        return req
