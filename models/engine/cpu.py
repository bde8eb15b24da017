"""The server's CPUs: a fixed number of cores that simulated threads queue for.

Modelled: ``cores`` identical cores as a FIFO run queue (a counting semaphore). A thread
runs a CPU burst by taking a core for ``cycles / ghz`` nanoseconds; when all cores are
busy it waits, so concurrency above the core count queues for CPU. A burst holds its
core only while it runs - a thread sleeping on a lock, an event or an I/O holds none.

Wake-ups: a thread that slept (on a contended mutex, an os_event, an I/O completion)
first has to be switched in again. ``wakeup_us`` is that cost, spent on a core by the
woken thread before it continues (Linux futex wake-up of a thread on another core:
an IPI plus a context switch, a few microseconds on 2009-era Xeons - lmbench
``lat_ctx`` reports 2-5 us for a switch with a small working set). It is the reason a
lock that is handed from sleeper to sleeper (a convoy) costs more than its critical
section.

Statement costs are given in cycles by the engine (see ``models.engine.innodb``), so a
faster clock shortens them and one figure serves every experiment.

Deliberately not modelled: preemption / time slices (a burst runs to completion once
started), SMT, NUMA, cache misses as a function of data size, C-state exit latency,
CPU frequency scaling, the client program's own CPU use.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..sim import Event, Semaphore, Simulator


@dataclass(frozen=True)
class CPUConfig:
    """``cores``: cores the server threads can run on (``nproc``).
    ``ghz``: clock rate; statement costs in cycles become ``cycles / ghz`` ns.
    ``wakeup_us``: core time a sleeping thread needs to run again after being woken."""

    cores: int = 16
    ghz: float = 2.8
    wakeup_us: float = 5.0

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError(f"cores: must be >= 1, got {self.cores}")
        if not self.ghz > 0:
            raise ValueError(f"ghz: must be > 0, got {self.ghz}")
        if self.wakeup_us < 0:
            raise ValueError(f"wakeup_us: must be >= 0, got {self.wakeup_us}")


class CPU:
    """``yield from cpu.run(cycles)`` runs a burst; ``yield from cpu.wait(ev)`` sleeps on
    an event and pays the wake-up when it had to sleep."""

    def __init__(self, sim: Simulator, cfg: CPUConfig | None = None) -> None:
        self.sim = sim
        self.cfg = cfg or CPUConfig()
        self.cores = Semaphore(sim, self.cfg.cores, "cpu")
        self.ns_per_cycle = 1.0 / self.cfg.ghz
        self.wakeup_ns = int(round(self.cfg.wakeup_us * 1000))
        self.busy_ns = 0
        self.bursts = 0
        self.wakeups = 0

    def ns(self, cycles: float) -> int:
        """Duration of ``cycles`` on one core."""
        return int(round(cycles * self.ns_per_cycle))

    def run(self, cycles: float):
        """Run a burst of ``cycles`` on one core (waits for a free core first)."""
        yield from self.run_ns(self.ns(cycles))

    def run_ns(self, duration_ns: int):
        if duration_ns <= 0:
            return
        ev = self.cores.acquire()
        if not ev.triggered:
            yield ev
        self.bursts += 1
        self.busy_ns += duration_ns
        yield duration_ns
        self.cores.release()

    def wait(self, ev: Event):
        """Sleep until ``ev`` fires; returns its value. A thread that really slept pays
        ``wakeup_us`` of core time before it continues."""
        if ev.triggered:
            return ev.value
        value = yield ev
        self.wakeups += 1
        yield from self.run_ns(self.wakeup_ns)
        return value

    def stats(self, elapsed_ns: int) -> dict:
        util = self.busy_ns / (elapsed_ns * self.cfg.cores) * 100.0 if elapsed_ns > 0 else 0.0
        return {"cores": self.cfg.cores, "busy_s": self.busy_ns / 1e9, "util_pct": util,
                "run_queue_wait_s": self.cores.wait_ns_total / 1e9,
                "bursts": self.bursts, "wakeups": self.wakeups}
