"""Configuration of one Linux request queue (``/sys/block/<dev>/queue/...``)."""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import MAX_SECONDS, above, at_least, at_most

SCHEDULERS = ("noop", "deadline", "cfq")


@dataclass(frozen=True)
class BlockConfig:
    """Request-queue knobs under their sysfs names.

    ``scheduler``: noop | deadline | cfq (``queue/scheduler``).
    ``nr_requests``: requests that may be allocated per queue; one more submitter sleeps.
    ``max_sectors_kb``: largest request the queue builds by merging (and the size bios
    are split to).
    deadline (``queue/iosched/``): ``read_expire_ms``, ``write_expire_ms``,
    ``fifo_batch``, ``writes_starved``, ``front_merges``.
    cfq: ``quantum`` (requests dispatched per queue turn), ``slice_sync_ms``,
    ``slice_async_ms``.
    """

    scheduler: str = "noop"
    nr_requests: int = 128
    max_sectors_kb: int = 512
    read_expire_ms: float = 500.0
    write_expire_ms: float = 5000.0
    fifo_batch: int = 16
    writes_starved: int = 2
    front_merges: bool = True
    quantum: int = 8
    slice_sync_ms: float = 100.0
    slice_async_ms: float = 40.0

    def __post_init__(self) -> None:
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler: must be one of {', '.join(SCHEDULERS)}, got {self.scheduler!r}")
        at_least(self, 1, "nr_requests")
        at_least(self, 4, "max_sectors_kb")
        above(self, 0, "read_expire_ms", "write_expire_ms", "slice_sync_ms", "slice_async_ms")
        at_most(self, MAX_SECONDS * 1e3, "read_expire_ms", "write_expire_ms", "slice_sync_ms",
                "slice_async_ms")
        at_least(self, 1, "fifo_batch", "writes_starved", "quantum")
