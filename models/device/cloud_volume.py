"""A cloud block volume (Amazon EBS style): a storage service across the network, seen
by the instance as one block device, with per-volume IOPS and throughput caps, the
provider's I/O size accounting, and burst credits.

Modelled, per command in arrival order (integer ns):

- Accounting: an I/O counts as ``ceil(size / io_unit_bytes)`` operations (EBS: I/O
  size is capped at 256 KiB for SSD volumes and 1,024 KiB for HDD volumes; larger
  I/Os are split); an I/O that starts where an earlier one ended and still fits in
  that one's unit is merged into it (EBS merges physically sequential small I/Os up
  to the maximum I/O size) and costs no further operation. The ends of the last
  ``merge_streams`` runs are followed, so interleaved sequential streams (fio's
  ``numjobs`` with ``offset_increment``, each job its own region) merge as one stream
  does. Merging concerns
  the operation count only.
- Caps: the volume admits operations at most at its IOPS cap and bytes at most at
  its throughput cap (each a virtual-time spacing; I/Os are admitted in arrival
  order, each when both allow it). Every I/O's bytes count against the throughput
  cap, a merged one's included; only counted operations against the IOPS cap; a
  FLUSH has neither. ``instance_bandwidth_MBps`` puts the volume behind a link
  shared with the instance's other volumes (``bus.Bus``, attached by the pipeline's
  builder).
- Burst credits (``burst_on``): a token bucket of ``burst_credits_max`` credits
  (I/O credits for ``iops``, MiB for ``throughput``), starting at
  ``burst_credits_initial`` and refilled at the baseline rate. While credits remain
  the volume runs at the burst rate and each admitted operation (``iops``: counted
  operations) or MiB (``throughput``: every I/O's bytes) spends one; once the bucket
  is empty an I/O waits for the credits it needs, so the volume runs at exactly the
  baseline. A volume at burst load therefore bursts for initial / (burst -
  baseline) seconds, then falls to baseline. Credits are spent at an I/O's
  admission, which may lie ahead of now; ``burst_balance()`` counts them as spent
  from its arrival (no refill before the admission), so it never goes below 0.
- Latency: each admitted I/O completes after a round trip drawn from a lognormal
  distribution (``latency_median_us``, ``latency_sigma`` of its logarithm), seeded by
  the run's rng. I/Os are served concurrently up to ``queue_depth``.
- Durability: the service acknowledges writes once replicated; FLUSH completes after
  one round trip and ``volatile_bytes()`` is 0.

``volume_type`` picks the provider's rules for the values left at 0 (each cited in
``_RULES``' comments): baseline IOPS by size, burst, credits, throughput, unit.
``custom`` takes every value as given.

Deliberately not modelled: the instance's own IOPS cap and its burst allowance,
first-touch latency of volumes restored from snapshots, latency that grows with the
queue behind the caps beyond the queueing itself, the 99 % / 99.9 % performance
consistency targets (the caps are met exactly).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import above, at_least
from ..sim import Simulator
from .base import Device
from .request import FLUSH, IORequest

GIB = 2**30
MIB = 2**20
VOLUME_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "custom")
BURST_ON = ("none", "iops", "throughput")


@dataclass(frozen=True)
class CloudVolumeConfig:
    """One volume. Values left at 0 follow ``volume_type``'s rules (module docstring):

    - ``capacity_bytes`` (size strings: ``500g``); ``volume_type``.
    - ``iops``: provisioned IOPS (io1, io2, gp3 above its 3,000), the baseline of
      gp2 (3 per GiB) or the IOPS cap; ``throughput_MiBps``: the throughput cap
      (the baseline of st1).
    - ``burst_on``: ``none``, ``iops`` (gp2) or ``throughput`` (st1); ``burst_iops``,
      ``burst_throughput_MiBps``: the burst rate; ``burst_credits_initial``,
      ``burst_credits_max``: the bucket (I/O credits, or MiB for throughput);
      ``burst_credits_initial`` < 0 = a full bucket.
    - ``io_unit_bytes``: the largest I/O counted as one operation;
      ``merge_streams``: sequential runs followed for merging (assumed: AWS does not
      say how many streams its merging follows).
    - ``latency_median_us``, ``latency_sigma``: the round trip's lognormal.
    - ``queue_depth``: I/Os in flight at once (the NVMe device the instance sees).
    - ``instance_bandwidth_MBps``: the instance's EBS bandwidth (10^6 bytes/s) shared
      by every volume naming the same ``instance``; 0 = none.
    """

    capacity_bytes: int = 500 * GIB
    volume_type: str = "gp2"
    iops: int = 0
    throughput_MiBps: float = 0.0
    burst_on: str = ""
    burst_iops: int = 0
    burst_throughput_MiBps: float = 0.0
    burst_credits_initial: float = -1.0
    burst_credits_max: float = 0.0
    io_unit_bytes: int = 0
    merge_streams: int = 32
    latency_median_us: float = 0.0
    latency_sigma: float = 0.25
    queue_depth: int = 64
    instance_bandwidth_MBps: float = 0.0
    instance: str = "i-0"
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        if not self.price_usd >= 0:
            raise ValueError(f"price_usd: must be >= 0, got {self.price_usd}")
        if self.volume_type not in VOLUME_TYPES:
            raise ValueError(f"volume_type: must be one of {VOLUME_TYPES}, got {self.volume_type!r}")
        if self.burst_on not in BURST_ON + ("",):
            raise ValueError(f"burst_on: must be one of {BURST_ON}, got {self.burst_on!r}")
        above(self, 0, "capacity_bytes")
        at_least(self, 0, "iops", "throughput_MiBps", "burst_iops", "burst_throughput_MiBps",
                 "burst_credits_max", "io_unit_bytes", "latency_median_us", "latency_sigma",
                 "instance_bandwidth_MBps")
        at_least(self, 1, "queue_depth", "merge_streams")
        if self.volume_type in ("io1", "io2") and not self.iops:
            raise ValueError(f"iops: a {self.volume_type} volume needs its provisioned IOPS")
        gib = self.capacity_bytes / GIB
        lo, hi = {"gp2": (1, 16384), "gp3": (1, 16384), "io1": (4, 16384),
                  "io2": (4, 65536), "st1": (125, 16384)}.get(self.volume_type, (0, math.inf))
        if not lo <= gib <= hi:
            raise ValueError(f"capacity_bytes: a {self.volume_type} volume is {lo} GiB to "
                             f"{hi} GiB, got {gib:g} GiB")
        # provisioned IOPS the provider allows: per GiB and per volume
        per_gib, most = {"gp3": (500, 16_000), "io1": (50, 64_000),
                         "io2": (1000, 256_000)}.get(self.volume_type, (math.inf, math.inf))
        if self.iops > min(per_gib * gib, most):
            raise ValueError(f"iops: a {self.volume_type} volume of {gib:g} GiB allows at most "
                             f"{min(per_gib * gib, most):,.0f}, got {self.iops}")
        if self.volume_type == "gp3" and self.throughput_MiBps > min(1000.0, self.baseline_iops / 4):
            raise ValueError(f"throughput_MiBps: gp3 allows at most 0.25 MiB/s per IOPS and "
                             f"1,000 MiB/s, got {self.throughput_MiBps:g}")
        for key, derived in (("iops", self.baseline_iops),
                             ("throughput_MiBps", self.baseline_MiBps),
                             ("latency_median_us", self.median_us)):
            if not derived > 0:
                raise ValueError(f"{key}: must be > 0 for volume_type {self.volume_type!r}")
        if self.burst_kind != "none" and not self.burst_rate > self.baseline_rate:
            raise ValueError("burst_iops: the burst rate must exceed the baseline"
                             if self.burst_kind == "iops" else
                             "burst_throughput_MiBps: the burst rate must exceed the baseline")

    # -- the provider's rules for the values left at 0 ---------------------------------
    @property
    def _gib(self) -> float:
        return self.capacity_bytes / GIB

    @property
    def baseline_iops(self) -> float:
        """IOPS cap, or the baseline that burst credits lift (gp2)."""
        if self.iops:
            return float(self.iops)
        t = self.volume_type
        if t == "gp2":
            # AWS EBS volume types, gp2: 3 IOPS per GiB, at least 100, at most 16,000
            return float(min(16_000, max(100, 3 * math.ceil(self._gib))))
        if t == "gp3":
            return 3_000.0          # gp3: 3,000 IOPS included (500 per GiB, 16,000 at most)
        if t == "st1":
            return 500.0            # st1: 500 IOPS of 1 MiB at most
        return 0.0

    @property
    def baseline_MiBps(self) -> float:
        """Throughput cap, or the baseline that burst credits lift (st1)."""
        if self.throughput_MiBps:
            return float(self.throughput_MiBps)
        t, gib = self.volume_type, self._gib
        if t == "gp2":
            # gp2: 128 MiB/s up to 170 GiB, 250 MiB/s above (between 170 and 334 GiB
            # only while bursting: not modelled, 250 from 170 GiB on)
            return 128.0 if gib <= 170 else 250.0
        if t == "gp3":
            return 125.0            # gp3: 125 MiB/s included
        if t == "io1":
            # io1: 256 KiB per IOPS up to 500 MiB/s (reached at 2,000 IOPS); above
            # 32,000 IOPS 16 KiB more per IOPS, up to 1,000 MiB/s at 64,000
            iops = self.baseline_iops
            return min(1000.0, min(500.0, iops / 4) + max(0.0, iops - 32_000) / 64)
        if t == "io2":
            return min(4000.0, self.baseline_iops / 4)   # io2 Block Express: 4,000 MiB/s
        if t == "st1":
            return min(500.0, 40.0 * gib / 1024)       # st1: 40 MiB/s per TiB baseline
        return 0.0

    @property
    def burst_kind(self) -> str:
        if self.burst_on:
            return self.burst_on
        if self.volume_type == "gp2" and self.baseline_iops < 3000:
            return "iops"
        if self.volume_type == "st1" and self.burst_rate_default > self.baseline_MiBps:
            return "throughput"
        return "none"

    @property
    def burst_rate_default(self) -> float:
        if self.volume_type == "st1":
            return min(500.0, 250.0 * self._gib / 1024)   # st1: 250 MiB/s per TiB burst
        return 3000.0                                       # gp2: 3,000 IOPS burst

    @property
    def burst_rate(self) -> float:
        """Burst IOPS or MiB/s."""
        if self.burst_kind == "iops":
            return float(self.burst_iops or (3000 if self.volume_type == "gp2" else 0))
        if self.burst_kind == "throughput":
            return float(self.burst_throughput_MiBps or self.burst_rate_default)
        return 0.0

    @property
    def baseline_rate(self) -> float:
        return self.baseline_MiBps if self.burst_kind == "throughput" else self.baseline_iops

    @property
    def credits_max(self) -> float:
        if self.burst_credits_max:
            return float(self.burst_credits_max)
        if self.burst_kind == "iops":
            return 5_400_000.0      # gp2: a bucket of 5.4 million I/O credits
        if self.burst_kind == "throughput":
            return 1024.0 * 1024 * self._gib / 1024    # st1: 1 TiB of credits per TiB
        return 0.0

    @property
    def credits_initial(self) -> float:
        c = self.burst_credits_initial
        return self.credits_max if c < 0 else min(float(c), self.credits_max)

    @property
    def unit_bytes(self) -> int:
        if self.io_unit_bytes:
            return int(self.io_unit_bytes)
        # EBS I/O characteristics: I/O size capped at 256 KiB (SSD), 1,024 KiB (HDD)
        return 1024 * 1024 if self.volume_type == "st1" else 256 * 1024

    @property
    def median_us(self) -> float:
        if self.latency_median_us:
            return float(self.latency_median_us)
        # assumed: AWS gives "single-digit millisecond" for gp2/gp3/io1/st1 and an
        # average below 500 us for 16 KiB on io2 Block Express
        return {"io2": 250.0, "st1": 2000.0}.get(self.volume_type,
                                                 500.0 if self.volume_type != "custom" else 0.0)


class CloudVolume(Device):
    """A cloud volume (module docstring). ``CloudVolume(sim, name, cfg, rng=None)``."""

    kind = "cloud_volume"

    def __init__(self, sim: Simulator, name: str, cfg: CloudVolumeConfig = CloudVolumeConfig(),
                 rng: np.random.Generator | None = None) -> None:
        super().__init__(sim, name, cfg.capacity_bytes, cfg.queue_depth, n_servers=cfg.queue_depth)
        self.cfg = cfg
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._mu = math.log(cfg.median_us * 1e3)
        self._sigma = cfg.latency_sigma
        self._unit = cfg.unit_bytes
        self._burst = cfg.burst_kind
        base_iops = cfg.baseline_iops
        base_bps = cfg.baseline_MiBps * MIB / 1e9          # bytes per ns
        # peak spacing: ns per operation, ns per byte (the burst rate while credits last)
        self._ns_per_op = 1e9 / (cfg.burst_rate if self._burst == "iops" else base_iops)
        self._ns_per_byte = 1.0 / (cfg.burst_rate * MIB / 1e9 if self._burst == "throughput"
                                   else base_bps)
        self._refill_per_ns = cfg.baseline_rate / 1e9      # credits per ns
        self._credits = cfg.credits_initial
        self._credits_max = cfg.credits_max
        self._credits_t = 0
        self._op_free = 0.0          # virtual time: next operation may be admitted
        self._byte_free = 0.0
        self._admitted = 0.0         # the last I/O's admission (arrival order)
        # sequential runs followed for merging: end offset -> bytes of its unit so far,
        # least recently continued first
        self._runs: dict[int, int] = {}
        self._streams = cfg.merge_streams
        self.operations = 0          # operations counted by the provider
        self.throttled_ns = 0        # time I/Os waited for the caps or credits
        self.burst_end_ns = -1       # when the bucket first ran empty

    # -- accounting -------------------------------------------------------------------
    def operations_of(self, req: IORequest) -> int:
        """Operations the provider counts for ``req`` (merging a sequential successor
        into the unit it continues); updates the merge state."""
        size = req.size_bytes
        if req.op == FLUSH or size <= 0:
            return 0
        runs = self._runs
        end = req.offset_bytes + size
        done = runs.pop(req.offset_bytes, None)
        if done is not None and done + size <= self._unit:
            runs[end] = done + size
            return 0
        runs.pop(end, None)
        runs[end] = size % self._unit or self._unit
        if len(runs) > self._streams:
            del runs[next(iter(runs))]
        return -(-size // self._unit)

    def burst_balance(self, now_ns: int | None = None) -> float:
        """Credits in the bucket now (CloudWatch ``BurstBalance`` x max / 100)."""
        now = self.sim.now_ns if now_ns is None else now_ns
        if self._burst == "none":
            return 0.0
        # credits spent at an admission ahead of ``now`` count as spent already
        refill = max(0.0, now - self._credits_t) * self._refill_per_ns
        return min(self._credits_max, self._credits + refill)

    def service_ns(self, req: IORequest) -> int:
        now = self.sim.now_ns
        ops = self.operations_of(req)
        nbytes = 0 if req.op == FLUSH else max(0, req.size_bytes)
        t = float(now)
        if ops or nbytes:
            self.operations += ops
            # behind every I/O admitted before it; a counted operation also waits for
            # the IOPS cap, every byte for the throughput cap
            t = max(t, self._admitted, self._byte_free)
            if ops:
                t = max(t, self._op_free)
            need = ops if self._burst == "iops" else nbytes / MIB
            if self._burst != "none" and need:
                have = min(self._credits_max,
                           self._credits + (t - self._credits_t) * self._refill_per_ns)
                if have < need:
                    # the bucket is empty: wait for the credits the refill brings
                    if self.burst_end_ns < 0:
                        self.burst_end_ns = int(t)
                    t += (need - have) / self._refill_per_ns
                    have = need
                self._credits = have - need
                self._credits_t = t
            if ops:
                self._op_free = t + ops * self._ns_per_op
            self._byte_free = t + nbytes * self._ns_per_byte
            self._admitted = t
        self.throttled_ns += int(t) - now
        rtt = math.exp(self._mu + self._sigma * float(self._rng.standard_normal()))
        return int(t + rtt) - now

    def stats(self) -> dict:
        s = super().stats()
        s.update({"operations": self.operations, "throttled_ns": self.throttled_ns,
                  "burst_balance": self.burst_balance(),
                  "burst_end_ns": self.burst_end_ns})
        return s
