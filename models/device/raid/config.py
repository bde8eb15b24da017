"""The RAID controller and array's configuration (``RAIDConfig``), checked; what the
controller does with it is ``controller.py``'s docstring."""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import above, at_least

DESTAGE_ORDERS = ("age", "address")
LEVELS = (0, 1, 10)


@dataclass(frozen=True)
class RAIDConfig:
    """RAID controller and array; defaults: a 2009-era SAS RAID controller (LSI MegaRAID
    SAS 8708 class: 256 MB DDR2 cache with BBU, PCIe x8, 64 KB default stripe).

    ``members`` names the member devices in the run config (the pipeline builds them
    first); ``RAID(...)`` receives the built devices. Assumed (no published figure):
    ``controller_cpu_us`` (10 us: ~100 k commands/s firmware ceiling). Calibrated:
    ``controller_latency_us`` (45 us; a 2013 MegaRAID 2208 is given 40 us), together
    with the host's wake-up latency (``cpu.wakeup_us`` / ``fs.wakeup_ns``, 20 us): with
    the syscall path a cached write + ``fdatasync`` then costs ~85 us and a
    battery-backed commit fsync ~0.1 ms, and the E2 / E4 figures that depend on the
    pair fall within tolerance together (``models/fs/README.md``). ``host_MBps`` 1,000
    (PCIe 1.0 x8 effective DMA);
    ``destage_max_inflight`` 16 destage writes outstanding. Calibrated (mechanisms of
    real controllers, chosen with E5's published iostat in view: the README's
    Calibrations table): 64 KB cache
    lines and oldest-first destage - with byte-granular space and an elevator over the
    whole cache, a RAID 1 of 15k disks absorbed E5's random index writes at ~10,000/s
    where the published system managed 576/s, and ``nr_requests`` made no difference;
    E2 and E4 (sequential logs) do not move either way. ``max_hw_sectors_kb`` the
    largest host command the driver accepts (0: no limit; MegaRAID-class controllers
    report 256 in ``/sys/block/<dev>/queue/max_hw_sectors_kb``).
    """

    level: int = 1
    members: tuple[str, ...] = ()
    stripe_size_bytes: int = 64 * 1024
    queue_depth: int = 256
    controller_cpu_us: float = 10.0
    controller_latency_us: float = 45.0
    host_MBps: float = 1000.0
    cache_size_bytes: int = 256 * 2**20
    write_back: bool = True
    battery_backed: bool = True
    write_back_without_battery: bool = False
    destage_max_inflight: int = 16
    destage_max_bytes: int = 2**20
    destage_order: str = "age"
    cache_line_bytes: int = 64 * 1024
    max_hw_sectors_kb: int = 0
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        if not self.price_usd >= 0:
            raise ValueError(f"price_usd: must be >= 0, got {self.price_usd}")
        if self.level not in LEVELS:
            raise ValueError(f"level: must be one of {LEVELS}, got {self.level!r}")
        object.__setattr__(self, "members", tuple(str(m) for m in self.members))
        if self.members:
            check_member_count(self.level, len(self.members))
        if self.stripe_size_bytes < 512 or self.stripe_size_bytes % 512:
            raise ValueError("stripe_size_bytes: must be a positive multiple of 512, got "
                             f"{self.stripe_size_bytes}")
        at_least(self, 1, "queue_depth", "destage_max_inflight")
        at_least(self, 0, "controller_cpu_us", "controller_latency_us")
        above(self, 0, "host_MBps")
        at_least(self, 0, "cache_size_bytes", "max_hw_sectors_kb")
        at_least(self, 512, "destage_max_bytes", "cache_line_bytes")
        if self.cache_line_bytes % 512:
            raise ValueError(f"cache_line_bytes: must be a multiple of 512, got {self.cache_line_bytes}")
        if self.destage_order not in DESTAGE_ORDERS:
            raise ValueError(f"destage_order: must be one of {', '.join(DESTAGE_ORDERS)}, "
                             f"got {self.destage_order!r}")


def check_member_count(level: int, n: int) -> None:
    if level == 1 and n < 2:
        raise ValueError(f"members: RAID 1 needs at least 2 members, got {n}")
    if level == 10 and (n < 4 or n % 2):
        raise ValueError(f"members: RAID 10 needs an even number >= 4 of members, got {n}")
    if level == 0 and n < 1:
        raise ValueError("members: RAID 0 needs at least 1 member")
