"""The server's CPUs: a fixed number of cores that simulated threads queue for.

Modelled: ``cores`` identical cores as a FIFO run queue (a counting semaphore). A thread
runs a CPU burst by taking a core for ``cycles / ghz`` nanoseconds; when all cores are
busy it waits, so concurrency above the core count queues for CPU. A burst holds its
core only while it runs - a thread sleeping on a lock, an event or an I/O holds none.

Wake-ups: a thread that slept (on a contended mutex, an os_event, an I/O completion)
first has to be switched in again. ``wakeup_us`` is that latency, spent on a core by
the woken thread before it continues. On a server that is mostly idle - every
experiment here keeps its cores under ~30 % busy - the woken thread's core is idle, so
the latency is the IPI, the core's exit from its idle state and the context switch:
Nehalem's C1E / C3 exit latencies are 10 / 20 us (``intel_idle``'s table), the switch
itself 2-5 us (lmbench ``lat_ctx``). The default, 20 us, was calibrated within that
range together with the RAID controller's ``controller_latency_us``: the pair puts the
five published figures that depend on them (E2: the ~10,000 fsync/s ceiling and the
Plugin's 6.1x; E4: ext3 append and overwrite; the X25-E with ``nobarrier``) within
their tolerances at once - ``models/fs/README.md`` has the table. It is why the
waiters of an InnoDB log flush, woken one after another through the event's mutex,
bound the Plugin's group commit, and why an ext3 append (five sleeps per
``fdatasync``) costs four overwrites (one sleep) rather than three. A server booted
with deep C-states disabled (``intel_idle.max_cstate=0 processor.max_cstate=1``) is
``wakeup_us`` ~3-5. The filesystem layer's ``fs.wakeup_ns`` is the same quantity for
kernel-side sleeps: sweep the two together.

Broadcasts: threads sleeping on a condition variable that is broadcast
(``pthread_cond_broadcast``; InnoDB's ``os_event_set``, MySQL 5.6's
``Stage_manager::signal_done``) do not all run at once: glibc wakes one and requeues
the rest onto the condition's mutex (``FUTEX_CMP_REQUEUE``), so each waiter is woken
by the previous one's unlock. ``wait_broadcast(ev, mutex)`` models that chain: the
k-th waiter continues about k wake-ups after the broadcast.

Spinning: InnoDB's own mutexes (``log_sys->mutex`` among them) spin before they
sleep (``mutex_spin_wait``: ``innodb_sync_spin_loops`` rounds of
``ut_delay(ut_rnd_interval(0, innodb_spin_wait_delay))``, each delay unit 50 PAUSE
instructions). ``lock(mutex, spin_ns)`` models that: a waiter whose lock comes
within ``spin_ns`` continues at once, without the wake-up; a longer wait sleeps and
pays it. The spinning is counted as busy core time (``spin_ns_total``) but does not
occupy a core of the run queue (the CPUs are mostly idle in these experiments).

Mutexes barge (``models.sim.Mutex(barging=True)``, ``SpinMutex``): a release with
only sleepers waiting frees the lock and wakes one; ``lock`` makes the woken thread
pay its wake-up *without* the lock and try again, so a thread that asks meanwhile
takes it and a busy lock is not left idle for each hand-off. ``spin_wait(ev,
spin_ns)`` is the same wait for an event that grants outright (InnoDB's rw-latches,
modelled as FIFO hand-off).

Per-I/O host cost: ``io_submit_cycles`` (building and issuing one command: the block
layer, the driver, the doorbell) and ``io_complete_cycles`` (the interrupt, the
completion handler, waking the bio's owner) are charged on the core of the submitting
thread by a blk-mq queue (``models/block/mq/queue.py``: a core completes one I/O at a
time, so completions of threads on one core queue behind each other). Both are 0 by
default - no published figure here depends on them, and the experiments of the
2.6.18 era run on the legacy queue, which does not charge them. Typical Linux figures
for a 4 KB NVMe I/O are a few microseconds of kernel CPU in all (~5,000-15,000 cycles
at 3 GHz, the kernel's io_uring / SPDK comparisons).

Statement costs are given in cycles by the engine (see ``models.engine.innodb``), so a
faster clock shortens them and one figure serves every experiment.

Deliberately not modelled: preemption / time slices (a burst runs to completion once
started), SMT, NUMA, cache misses as a function of data size, a C-state that depends
on how long the core was idle (one wake-up latency for all), CPU frequency scaling,
the client program's own CPU use.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import MAX_SECONDS, above, at_least, at_most
from ..sim import Event, Semaphore, Simulator


@dataclass(frozen=True)
class CPUConfig:
    """``cores``: cores the server threads can run on (``nproc``).
    ``ghz``: clock rate; statement costs in cycles become ``cycles / ghz`` ns.
    ``wakeup_us``: time a sleeping thread needs to run again after being woken (IPI,
    idle-state exit, context switch; see the module docstring for the 20 us).
    ``pause_cycles``: latency of one PAUSE instruction in a spin loop (~10 cycles on
    Nehalem/Westmere; Skylake-SP raised it to ~140).
    ``io_submit_cycles`` / ``io_complete_cycles``: host CPU per I/O command on blk-mq
    queues, on the submitting thread's core (module docstring); 0 = not charged."""

    cores: int = 16
    ghz: float = 2.8
    wakeup_us: float = 20.0
    pause_cycles: int = 10
    io_submit_cycles: int = 0
    io_complete_cycles: int = 0

    def __post_init__(self) -> None:
        at_least(self, 1, "cores")
        above(self, 0, "ghz")
        at_least(self, 0, "wakeup_us", "pause_cycles", "io_submit_cycles", "io_complete_cycles")
        at_most(self, MAX_SECONDS * 1e6, "wakeup_us")


class CPU:
    """``yield from cpu.run(cycles)`` runs a burst; ``yield from cpu.wait(ev)`` sleeps on
    an event and pays the wake-up when it had to sleep; ``yield from cpu.lock(mutex,
    spin_ns)`` acquires a mutex (spin, sleep, retry after a barging wake-up)."""

    def __init__(self, sim: Simulator, cfg: CPUConfig | None = None) -> None:
        self.sim = sim
        self.cfg = cfg or CPUConfig()
        self.cores = Semaphore(sim, self.cfg.cores, "cpu")
        self.ns_per_cycle = 1.0 / self.cfg.ghz
        self.wakeup_ns = int(round(self.cfg.wakeup_us * 1000))
        self.busy_ns = 0
        self.bursts = 0
        self.wakeups = 0
        self.spins = 0
        self.spin_ns_total = 0

    def ns(self, cycles: float) -> int:
        """Duration of ``cycles`` on one core."""
        return int(round(cycles * self.ns_per_cycle))

    def run(self, cycles: float):
        """Run a burst of ``cycles`` on one core (waits for a free core first):
        ``yield from cpu.run(cycles)``. A plain function handing back ``run_ns``'s
        generator (one generator frame per burst, not two)."""
        return self.run_ns(self.ns(cycles))

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

    def wait_broadcast(self, ev: Event, mutex):
        """Sleep until broadcast ``ev`` fires, then get ``mutex`` (the condition's) and
        be switched in while holding it: woken waiters run one after another."""
        if ev.triggered:
            return ev.value
        value = yield ev
        acq = mutex.acquire()
        if not acq.triggered:
            yield acq
        self.wakeups += 1
        yield from self.run_ns(self.wakeup_ns)
        mutex.release()
        return value

    def spin_wait(self, ev: Event, spin_ns: int):
        """Wait for ``ev`` spinning up to ``spin_ns`` first (an InnoDB mutex): no
        wake-up cost if it fires within the spin window."""
        if ev.triggered:
            return ev.value
        t0 = self.sim.now_ns
        value = yield ev
        waited = self.sim.now_ns - t0
        self.spin_ns_total += min(waited, spin_ns)
        if waited <= spin_ns and value is not False:   # False: woken, lock not granted
            self.spins += 1
            return value
        self.wakeups += 1
        yield from self.run_ns(self.wakeup_ns)
        return value

    def lock(self, mutex, spin_ns: int = 0):
        """Acquire ``mutex``: spin up to ``spin_ns``, then sleep. A barging mutex wakes a
        sleeper without handing it the lock: it pays the wake-up, then tries again.
        ``yield from cpu.lock(mutex)``; a lock granted at once costs no generator."""
        ev = mutex.acquire()
        if ev.triggered and ev.value is not False:
            return ()
        return self._lock_wait(mutex, ev, spin_ns)

    def _lock_wait(self, mutex, ev: Event, spin_ns: int):
        got = yield from self.spin_wait(ev, spin_ns)
        while got is False:
            got = yield from self.spin_wait(mutex.acquire(retry=True), spin_ns)

    def stats(self, elapsed_ns: int) -> dict:
        util = self.busy_ns / (elapsed_ns * self.cfg.cores) * 100.0 if elapsed_ns > 0 else 0.0
        return {"cores": self.cfg.cores, "busy_s": self.busy_ns / 1e9, "util_pct": util,
                "run_queue_wait_s": self.cores.wait_ns_total / 1e9,
                "bursts": self.bursts, "wakeups": self.wakeups, "spins": self.spins,
                "spin_s": self.spin_ns_total / 1e9}
