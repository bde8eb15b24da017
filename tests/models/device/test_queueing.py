"""Queueing theory against the device base: a single-server device with exponential
service fed by Poisson arrivals is an M/M/1 queue, and the device's own count of
commands in the system obeys Little's law."""
from __future__ import annotations

import numpy as np
import pytest

from models.device.base import Device
from models.device.request import READ, IORequest
from models.sim import Simulator

US = 1000


class ExpDevice(Device):
    """One server (QD1 service), unbounded queue, exponential service times."""

    def __init__(self, sim, mean_service_ns, rng):
        super().__init__(sim, "exp0", 2**40, queue_depth=10**9, n_servers=1)
        self.mean = mean_service_ns
        self.rng = rng

    def service_ns(self, req):
        return max(1, int(round(self.rng.exponential(self.mean))))


def _mm1(lam_per_us, mu_per_us, n, seed):
    sim = Simulator()
    rng = np.random.default_rng(seed)
    dev = ExpDevice(sim, 1e3 / mu_per_us, np.random.default_rng(rng.integers(2**32)))
    resp = []
    area = {"n": 0, "last": 0, "integral": 0}

    def change(delta):
        now = sim.now_ns
        area["integral"] += area["n"] * (now - area["last"])
        area["last"] = now
        area["n"] = dev.inflight + delta

    def done(req):
        resp.append(req.done_ns - req.submit_ns)
        change(0)                                  # inflight already decremented

    def arrive(k):
        req = IORequest(READ, 0, 4096)
        req.submit_ns = sim.now_ns
        change(1)                                  # about to be one more
        dev.submit(req)
        if k + 1 < n:
            sim.after(max(1, int(round(rng.exponential(1e3 / lam_per_us)))), arrive, k + 1)

    dev.on_complete = done
    arrive(0)
    sim.run()
    change(0)
    return np.array(resp), area["integral"] / sim.now_ns, n / sim.now_ns, dev.busy_ns / sim.now_ns


@pytest.mark.parametrize("rho,seed", [(0.5, 1), (0.7, 2)])
def test_mm1_mean_response_time(rho, seed):
    mu = 1 / 100                                   # per us: 100 us mean service
    lam = rho * mu
    resp, _, _, util = _mm1(lam, mu, 120_000, seed)
    expected_ns = 1e3 / (mu - lam)
    assert resp.mean() == pytest.approx(expected_ns, rel=0.05)
    assert util == pytest.approx(rho, rel=0.02)


def test_littles_law_on_the_devices_own_count():
    mu = 1 / 100
    resp, l_time_avg, lam_ns, _ = _mm1(0.7 * mu, mu, 100_000, 3)
    # L (time average of dev.inflight) = lambda x W
    assert l_time_avg == pytest.approx(lam_ns * resp.mean(), rel=0.01)
    assert l_time_avg == pytest.approx(0.7 / 0.3, rel=0.08)   # M/M/1: rho / (1 - rho)


def test_outstanding_time_is_the_union_of_command_lifetimes_not_the_sum_of_services():
    """``Device.outstanding_ns``: time with a command outstanding (iostat's %util of a
    drive serving several at once), up to now; ``busy_ns`` sums service times. Two
    servers, commands of 100 us at 0 and 50 us, a third at 400 us still in service at
    450 us: outstanding 150 + 50 us, summed service 300 us."""
    sim = Simulator()

    class TwoServers(Device):
        def service_ns(self, req):
            return 100_000

    dev = TwoServers(sim, "d", 2**30, queue_depth=2, n_servers=2)
    dev.on_complete = lambda r: None
    for t in (0, 50_000, 400_000):
        sim.at(t, lambda _a: dev.submit(IORequest(READ, 0, 4096)))
    sim.run(until_ns=450_000)
    assert dev.outstanding_ns() == 150_000 + 50_000
    assert dev.busy_ns == 300_000
    sim.run()
    assert dev.outstanding_ns() == 150_000 + 100_000 and dev.inflight == 0
