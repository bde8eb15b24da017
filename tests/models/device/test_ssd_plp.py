"""Power-loss protection on the SATA SSD (models/device/ssd/drive.py,
``power_loss_protection``): the buffer is durable, so FLUSH CACHE costs its command
time, FUA writes complete in the buffer and ``volatile_bytes()`` is 0 - as the NVMe
model does it. The Intel D3-S4510 preset has it, the X25-E (the default) not."""
from __future__ import annotations

import numpy as np

from models.device.ssd import presets as P
from models.device.request import FLUSH, READ, WRITE, IORequest
from models.device.ssd import SSD, SSDConfig
from models.sim import Simulator

from .jobs import run_job

KB = 1024
US = 1000


def s4510(plp: bool, **kw):
    sim = Simulator()
    cfg = P.intel_s4510_960gb(power_loss_protection=plp, precondition="fresh", **kw)
    return sim, SSD(sim, "sda", cfg, rng=np.random.default_rng(1))


def one(sim, dev, req) -> int:
    """Submit ``req`` on an idle drive and return its service time (ns)."""
    done = []
    dev.on_complete = lambda r: done.append(r.done_ns - r.dispatch_ns)
    dev.submit(req)
    sim.run()
    return done[0]


def write_then_flush(plp: bool, fua: bool = False, **kw):
    """An fdatasync of an 8 KiB overwrite as the drive sees it: the write, then a
    FLUSH once it is done. Returns (write ns, flush ns, bytes volatile after the write,
    the drive)."""
    sim, dev = s4510(plp, **kw)
    w = one(sim, dev, IORequest(WRITE, 1 << 20, 8 * KB, fua=fua))
    vol = dev.volatile_bytes()
    f = one(sim, dev, IORequest(FLUSH, 0, 0))
    return w, f, vol, dev


def test_presets():
    assert P.intel_s4510_960gb().power_loss_protection
    assert not SSDConfig().power_loss_protection              # X25-E: no protection


def test_with_plp_write_plus_flush_costs_the_write_alone():
    w, f, vol, dev = write_then_flush(True)
    assert vol == 0                                         # the buffer is durable
    assert f == dev.cfg.flush_cmd_us * US                   # command time only
    assert w < dev.cfg.program_us * US                      # acknowledged from the buffer
    assert dev.flush_ns_total == f


def test_without_plp_the_flush_pays_the_programs():
    w_plp, f_plp, _, _ = write_then_flush(True)
    w, f, vol, dev = write_then_flush(False)
    assert w == w_plp                                       # the write itself is the same
    assert vol == 8 * KB                                    # acknowledged, not programmed
    assert f >= dev.cfg.program_us * US > 10 * f_plp
    assert dev.volatile_bytes() == 0                        # programmed once the FLUSH is done


def test_fua_write_completes_in_the_buffer_only_with_plp():
    w_plp, _, vol, _ = write_then_flush(True, fua=True)
    w_cached, _, _, _ = write_then_flush(True)
    w_no, _, vol_no, dev = write_then_flush(False, fua=True)
    assert w_plp == w_cached and vol == vol_no == 0
    assert w_no - w_plp >= dev.cfg.program_us * US


def test_plp_volatile_bytes_stay_zero_under_load():
    sim, dev = s4510(True)
    seen = []
    run_job(sim, dev, "randwrite", 4 * KB, 16, 400, span_bytes=4096 * 4 * KB,
            on_done=lambda _req: seen.append(dev.volatile_bytes()))
    assert len(seen) == 400 and max(seen) == 0


def test_plp_flush_still_follows_the_ncq_drain():
    # FLUSH CACHE is non-queued: the host sends it once every accepted command is
    # done, so it completes no earlier than the read before it
    sim, dev = s4510(True)
    done = []
    dev.on_complete = lambda r: done.append((r.op, r.done_ns))
    dev.submit(IORequest(READ, 0, 128 * KB))
    dev.submit(IORequest(FLUSH, 0, 0))
    sim.run()
    assert [op for op, _ in done] == [READ, FLUSH]
    assert done[1][1] >= done[0][1]
