"""What the OLTP workloads (sysbench, TPC-C) share about a run on the InnoDB server: its
measured interval and the server's SHOW GLOBAL STATUS over it - counters as their
increase between two samples, the variables that are levels (``GAUGES``) as the later
sample has them.

``MeasuredRun``: a run starts the server, lets ``warmup_ns`` pass unmeasured (sysbench
``--warmup-time``, DBT-2's ramp-up), samples the status when the measured interval
begins (``_measure_from``) and when the run finishes (``_finish``, which also stops
the server and the simulation); the server's per-second series stops at the end of
the measured interval; the workload spawns its clients.
"""
from __future__ import annotations

# SHOW GLOBAL STATUS variables that are levels, not cumulative counts (Percona's
# Innodb_checkpoint_age among them); every other numeric variable is a counter
GAUGES = frozenset({
    "Innodb_buffer_pool_pages_data", "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_free", "Innodb_buffer_pool_pages_misc",
    "Innodb_buffer_pool_pages_total", "Innodb_buffer_pool_bytes_data",
    "Innodb_buffer_pool_bytes_dirty", "Innodb_checkpoint_age", "Innodb_checkpoint_max_age",
    "Innodb_row_lock_current_waits", "Innodb_row_lock_time_avg", "Innodb_row_lock_time_max",
    "Innodb_history_list_length", "Innodb_lsn_current", "Innodb_lsn_flushed",
    "Innodb_lsn_last_checkpoint", "Innodb_page_size", "Innodb_os_log_pending_fsyncs",
    "Innodb_os_log_pending_writes", "Innodb_data_pending_reads", "Innodb_data_pending_writes",
    "Innodb_data_pending_fsyncs", "Threads_running", "Threads_connected",
})


def status_delta(before: dict, after: dict) -> dict:
    """Numeric status variables of ``after``: gauges as they are, counters minus
    ``before``'s."""
    out = {}
    for k, v in after.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v if k in GAUGES else v - before.get(k, 0)
    return out


class MeasuredRun:
    """Base of a workload run on ``self.server`` in ``self.sim``."""

    def _begin(self, warmup_ns: int, length_ns: int) -> None:
        """Start the server and the clock; the measured interval is ``length_ns`` after
        ``warmup_ns`` (0: no time limit, ``deadline_ns`` None)."""
        sim = self.sim
        self.server.start()
        self.t0 = sim.now_ns
        self.measure_ns = self.t0 + warmup_ns
        self.deadline_ns = self.measure_ns + length_ns if length_ns else None
        self.finished_ns = None
        self._before, self._after = {}, {}
        if warmup_ns:
            sim.at(self.measure_ns, self._measure_from)
        else:
            self._before = self.server.status()
        if self.deadline_ns is not None:
            # the per-second series ends with the measured interval: a client still in a
            # transaction (a preflush it runs) keeps the run going until it returns, and
            # the seconds after the deadline - no client starts a transaction in them -
            # would read as a stall
            sim.at(self.deadline_ns + 1, self._interval_over)

    def _interval_over(self, _arg=None) -> None:
        self.server.interval_over()

    def _measure_from(self, _arg=None) -> None:
        self._before = self.server.status()

    def _finish(self) -> None:
        self.finished_ns = self.sim.now_ns
        if not self._before:
            self._before = self.server.status()
        self._after = self.server.status()
        self.server.stop()
        self.sim.stop()

    def status_over_run(self) -> dict:
        """The server's status over the measured interval (``status_delta``)."""
        return status_delta(self._before, self._after or self.server.status())
