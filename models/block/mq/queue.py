"""blk-mq: the multi-queue block layer between callers and one device
(``block/blk-mq.c``, ``blk-mq-tag.c``, ``blk-mq-sched.c`` of Linux 4.x-6.x).

Modelled:

- **Software and hardware queues**: a bio is submitted on the CPU of its thread
  (``issuer % nr_cpus``, the ``blk_mq_ctx``); each CPU's software queue maps to a
  hardware context (``hctx``) - CPU ``c`` to ``c % nr_hw_queues``, as
  ``blk_mq_map_queues`` spreads them. ``nr_hw_queues`` is the device's: an NVMe
  drive's ``nr_queues`` (at most one per CPU), one for a SATA / SAS device.
- **Tags**: each hctx has ``nr_requests`` tags (sysfs ``nr_requests`` is per hctx on
  blk-mq). A request takes one when it is allocated and frees it at completion; a
  submitter whose hctx has none left sleeps (``blk_mq_get_tag`` -> ``io_schedule``)
  and its bios wait FIFO per hctx. ``nr_requests: null`` is the kernel's default:
  the hctx's share of the device's command slots with ``none`` (the driver tags),
  twice ``min(that, 128)`` with a scheduler (the scheduler tags,
  ``blk_mq_init_sched``). So the tags bound the commands in flight at the device to
  ``nr_hw_queues x nr_requests`` with ``none``.
- **Driver tags**: a request is issued while the device accepts one more command
  (``Device.can_accept``: an NVMe drive's ``nr_queues x queue_depth`` slots, a
  disk's NCQ depth) - one pool, not one per hctx.
- **Splitting, plugging and merging**: as the legacy queue (``..base``, whose
  methods this class reuses): bios are split to ``max_sectors_kb``; an
  ``io_submit`` of N (``plug=True``) merges within its plug list and is inserted
  sorted by sector (``blk_mq_flush_plug_list``); a bio merges into a queued request,
  back or front, of the scheduler (``blk_mq_sched_bio_merge``) or, with ``none``, of
  the software queues.
- **Schedulers** (``queue/scheduler``, one instance per request queue as in Linux):
  ``none`` (arrival order), ``mq-deadline``, ``kyber``, ``bfq`` - modules beside this
  one. A scheduler may hold a request back (kyber without a token): dispatch stops
  until a completion.
- **FLUSH and FUA writes** bypass the scheduler (``blk_insert_flush``, the hardware
  context's dispatch list) and are issued first (``models/block/fua.py``); with
  ``flush_merging`` one FLUSH per hardware context's flush queue (``hctx->fq``) is at
  the device at a time, the ones asked meanwhile served by the next
  (``BlockQueue._next_dispatch``).
- **No congestion**: blk-mq never marks the queue congested (only the legacy
  request allocator did, ``blk_set_congested``), so background writeback does not
  back off from it (``congested()`` is always False): it sleeps on a tag like any
  submitter.
- **iostat**: counted here, as ``/proc/diskstats``.
- **Host CPU per I/O** (``cpu.io_submit_cycles`` / ``cpu.io_complete_cycles``, off by
  default): a command is submitted and completed on the core of its thread
  (``issuer % nr_cpus``; the hctx's interrupt vector is affine to the CPUs it
  serves). Its completion reaches the caller after the core has spent both costs
  on it; one core runs one such handler at a time (``io_core_free_ns``), so
  completions of threads on one core queue behind each other while threads on
  different cores do not - the point of per-core queues.

Deliberately not modelled: polling (``io_poll``), per-hctx driver tag pools and
shared tag sets, ``queue_rq`` returning busy (requeue), the run-queue work item's
latency (dispatch happens in the submitter's or the completion's context, at once),
``nr_requests`` of the scheduler separately per direction, I/O priorities,
write-back throttling (``wbt_lat_usec``), timeouts; the submission cost is paid
after the device has the command (the device sees it at once, the caller's
completion is later by both costs); the per-I/O cost does not take cores from the
engine's run queue (``models/engine/cpu.py``), it is accounted per core on its own.
"""
from __future__ import annotations

from collections import deque
from typing import Sequence

from ...device.base import Device
from ...device.request import FLUSH, IORequest
from ...metrics.iostat import IostatCounters
from ...sim import Event, Simulator
from .. import fua
from ..base import BlockQueue
from ..requests import _Call
from ..config import BlockConfig
from ..scheduler import Scheduler
from .bfq import BFQ
from .kyber import Kyber
from .mq_deadline import MQDeadline
from .none import NoneScheduler

MQ_SCHEDULER_CLASSES = {"none": NoneScheduler, "mq-deadline": MQDeadline, "kyber": Kyber,
                        "bfq": BFQ}
BLKDEV_DEFAULT_RQ = 128


def make_mq_scheduler(cfg: BlockConfig) -> Scheduler:
    return MQ_SCHEDULER_CLASSES[cfg.scheduler](cfg)


def hw_queues(device: Device, nr_cpus: int) -> int:
    """Hardware contexts of ``device``: its I/O queue pairs (NVMe ``nr_queues``), at
    most one per CPU; 1 for a single-queue (SATA / SAS / RAID) device."""
    cfg = getattr(device, "cfg", None)
    n = getattr(cfg, "nr_queues", 1) if device.kind == "nvme" else 1
    return max(1, min(int(n), nr_cpus))


def rotational(device: Device) -> bool:
    """``queue/rotational``: a disk, or an array of disks."""
    members = getattr(device, "members", None)
    if device.kind == "raid" and members:
        return all(rotational(m) for m in members)
    return device.kind == "hdd"


def default_nr_requests(scheduler: str, device: Device, nr_hw: int) -> int:
    """The kernel's ``nr_requests`` per hctx for ``scheduler`` on ``device``: the tag
    set's depth (an NVMe queue's entries less the one a full ring leaves empty; a
    single-queue device's command slots) with ``none``, twice ``min(depth, 128)``
    with a scheduler."""
    if device.kind == "nvme":
        depth = max(1, int(device.cfg.queue_depth) - 1)
    else:
        depth = max(1, device.queue_depth // nr_hw)
    return depth if scheduler == "none" else 2 * min(depth, BLKDEV_DEFAULT_RQ)


class MQQueue(BlockQueue):
    """The blk-mq request queue of one block device (``/sys/block/<name>/mq/``)."""

    kind = "mq"

    def __init__(self, sim: Simulator, device: Device, cfg: BlockConfig, name: str | None = None,
                 nr_cpus: int = 1, io_submit_ns: int = 0, io_complete_ns: int = 0) -> None:
        if cfg.scheduler not in MQ_SCHEDULER_CLASSES:
            raise ValueError(f"scheduler: {cfg.scheduler!r} is not a blk-mq scheduler "
                             f"({', '.join(MQ_SCHEDULER_CLASSES)})")
        if nr_cpus < 1:
            raise ValueError(f"nr_cpus: must be >= 1, got {nr_cpus}")
        self.sim = sim
        self.device = device
        self.cfg = cfg
        self.name = name or device.name
        self.sched = make_mq_scheduler(cfg)
        self._issue_directly = cfg.scheduler == "none"
        self._sched_done = getattr(self.sched, "completed", None)
        if hasattr(self.sched, "rotational"):
            self.sched.rotational = rotational(device)
        self._wake_at: int | None = None
        hw_kb = device.max_hw_sectors_kb
        max_kb = min(cfg.max_sectors_kb, hw_kb) if hw_kb else cfg.max_sectors_kb
        self.max_bytes = max_kb * 1024
        self.nr_cpus = nr_cpus
        self.nr_hw_queues = hw_queues(device, nr_cpus)
        self.nr_requests = (cfg.nr_requests if cfg.nr_requests is not None
                            else default_nr_requests(cfg.scheduler, device, self.nr_hw_queues))
        self.allocated = 0                              # over all hctxs (iostat, tests)
        self.hctx_allocated = [0] * self.nr_hw_queues
        self.hctx_waiting: list[deque[_Call]] = [deque() for _ in range(self.nr_hw_queues)]
        self.sync_lists = False                         # the legacy request lists' rule
        self.rl_count = [0, 0]                          # (unused here: one tag pool)
        self.rl_full = [False, False]
        self._batch: dict = {}                          # no batchers: tags are tags
        self.hctx_dispatched = [0] * self.nr_hw_queues
        self.dispatch_list: deque[IORequest] = deque()
        self.flush_merging = bool(cfg.flush_merging)
        self._flushing: set[int] = set()
        self.counters = IostatCounters()
        self.blocked_calls = 0
        self.write_through = device.write_cache_mode == "write through"
        self.fua = fua.queue_has_fua(device, cfg)
        self.emulate_fua = not (self.fua or self.write_through)
        if io_submit_ns < 0 or io_complete_ns < 0:
            raise ValueError("io_submit_ns / io_complete_ns: must be >= 0")
        self.io_cost_ns = int(io_submit_ns) + int(io_complete_ns)
        self.io_core_free_ns = [0] * nr_cpus      # per core: its I/O handler is free from
        self.io_core_busy_ns = [0] * nr_cpus
        device.on_complete = self._complete

    def hctx_of(self, bio: IORequest) -> int:
        """The hardware context of the CPU the submitting thread runs on."""
        return self._hctx(bio.issuer)

    def _hctx(self, issuer: int) -> int:
        return (issuer % self.nr_cpus) % self.nr_hw_queues

    def requests_held(self, issuer: int = 0, op: int = 1, sync: bool = True) -> int:
        return self.hctx_allocated[self._hctx(issuer)]

    def congested(self) -> bool:
        return False

    # -- submission ------------------------------------------------------------------
    def submit(self, bios: IORequest | Sequence[IORequest], plug: bool = False) -> Event | None:
        """Submit bios; returns None if all were queued, else an Event to wait on."""
        now = self.sim.now_ns
        if self.emulate_fua and (type(bios) is not IORequest or bios.fua):
            bios = fua.emulated(self, bios)
        if type(bios) is IORequest:
            bio = bios
            if bio.op == FLUSH and self.write_through:
                return self._flush_not_sent(bio, now)
            if (self._issue_directly and bio.op != FLUSH and bio.size_bytes <= self.max_bytes
                    and not self.sched.count and not self.dispatch_list and self.device.can_accept()):
                # blk_mq_try_issue_directly: with no scheduler and nothing queued (so
                # nothing to merge with) the request goes to the device at once
                h = self.hctx_of(bio)
                if not self.hctx_waiting[h] and self.hctx_allocated[h] < self.nr_requests:
                    bio.submit_ns = now
                    req = self._new_request(bio)
                    req.tag = h
                    self.hctx_allocated[h] += 1
                    self.hctx_dispatched[h] += 1
                    self.device.submit(req)
                    return None
            bios = (bio,)
        return self._submit_bios(bios, plug, now)

    def _waiters(self, bio: IORequest) -> deque:
        return self.hctx_waiting[self.hctx_of(bio)]

    def _place(self, bio: IORequest, plug_list: list[IORequest] | None,
               may_allocate: bool = True) -> bool:
        """Merge or allocate a request for ``bio``; False if it needs a tag and its
        hctx has none left (or ``may_allocate`` is False)."""
        if bio.op != FLUSH:
            if bio.nomerge:
                pass
            elif plug_list is not None and self._plug_merge(bio, plug_list):
                return True
            elif self._elevator_merge(bio):
                return True
        elif self.flush_merging and self._join_flush(bio):
            return True
        h = self.hctx_of(bio)
        if not may_allocate or self.hctx_allocated[h] >= self.nr_requests:
            return False
        req = self._new_request(bio)
        req.tag = h
        self.hctx_allocated[h] += 1
        if bio.op == FLUSH:
            self.dispatch_list.append(req)
        elif bio.nomerge:
            self._bypass(req)
        elif plug_list is not None:
            plug_list.append(req)
        else:
            self.sched.add(req, self.sim.now_ns)
        return True

    def _freed(self, req: IORequest) -> None:
        """The request's tag goes back to its hctx (at completion, or when a merge
        absorbs the request)."""
        super()._freed(req)
        self.hctx_allocated[req.tag] -= 1

    def _flush_queue(self, r: IORequest) -> int:
        """blk-mq's flush queue is its hardware context's (``hctx->fq``)."""
        return self._hctx(r.issuer)

    def _wakes(self, freed: IORequest) -> bool:
        """Any freed tag wakes its hctx's sleepers (``blk_mq_put_tag``'s sbitmap
        wake-up)."""
        return True

    # -- dispatch and completion -----------------------------------------------------
    def _run_queue(self) -> None:
        dev, sched, lst, now = self.device, self.sched, self.dispatch_list, self.sim.now_ns
        while dev.can_accept():
            req = self._next_dispatch() if lst else None
            if req is None:
                if not sched.count:
                    break
                req = sched.dispatch(now)
                if req is None:          # held back by the scheduler (kyber tokens, bfq idling)
                    self._wake_later()
                    break
            self.hctx_dispatched[req.tag] += 1
            dev.submit(req)

    def _complete(self, req: IORequest) -> None:
        now = self.sim.now_ns
        self.counters.done(req.op, req.size_bytes, req.queue_ns, now)
        self._freed(req)
        if self._flushing:              # flush merging: a FLUSH at the device
            self._flush_done(req)
        h = req.tag
        if self._sched_done is not None:
            self._sched_done(req, now)
        cost = self.io_cost_ns
        flush_seq = not cost and req.nomerge and not req.fua
        if flush_seq:       # an emulated FUA's write: its post-flush takes the tag
            self._end_bios(req, now)
        if self.hctx_waiting[h]:
            self._admit_waiters(self.hctx_waiting[h])
        if self.dispatch_list or self.sched.count:
            self._run_queue()
        if flush_seq:
            return
        if cost:
            core = req.issuer % self.nr_cpus
            done = max(now, self.io_core_free_ns[core]) + cost
            self.io_core_free_ns[core] = done
            self.io_core_busy_ns[core] += cost
            self.sim.at(done, self._deliver, req)
        else:
            self._deliver(req)

    def _deliver(self, req: IORequest) -> None:
        now = self.sim.now_ns
        for bio in req.parts:           # _end_bios, inline: the hot path
            bio.done_ns = now
            bio.cache_hit = req.cache_hit
            if bio.on_done is not None:
                bio.on_done(bio)

    def stats(self) -> dict:
        """Per-queue counters (the ``mqstat.<dev>.*`` columns)."""
        out = {"nr_hw_queues": self.nr_hw_queues, "nr_requests": self.nr_requests,
               "blocked_calls": self.blocked_calls,
               "busiest_hctx_dispatched": max(self.hctx_dispatched),
               "io_cpu_busy_s": sum(self.io_core_busy_ns) / 1e9,
               "io_cpu_busiest_core_s": max(self.io_core_busy_ns) / 1e9}
        if hasattr(self.sched, "stats"):
            out.update(self.sched.stats())
        return out
