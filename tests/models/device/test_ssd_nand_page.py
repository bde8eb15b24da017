"""NAND pages of several mapping units (``nand_page_bytes``): one sense (tR) reads the
whole page into the die's registers, later reads of its other units need only their
transfer until a program on the die; GC copies of one page share its sense; the
sequential precondition and static striping keep a NAND page's consecutive units
together on one die. Each effect
is checked with the mechanism on and off (``nand_page_bytes`` 0: one unit per sense,
the X25-E's and the default)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.device.request import READ, WRITE
from models.device.ssd import SSD
from models.sim import Simulator

from .jobs import run_job
from .test_ssd import SIMPLE, US, _one

KB = 1024
PAGE16 = dataclasses.replace(SIMPLE, nand_page_bytes=16 * KB)       # 4 units per sense


def _die(dev, lpn):
    ppn = int(dev.ftl.l2p[lpn])
    return ppn // (dev.cfg.blocks_per_die * dev.cfg.pages_per_block)


@pytest.mark.parametrize("value,match", [(6000, "^nand_page_bytes:"),
                                         (12 * KB, "^nand_page_bytes:")])   # 16 % 3 units
def test_config_rejects_a_nand_page_that_is_no_whole_number_of_units_per_block(value, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(SIMPLE, nand_page_bytes=value)


def test_sequential_precondition_keeps_a_nand_page_on_one_die():
    dev = SSD(Simulator(), "ssd0", PAGE16)
    l2p = dev.ftl.l2p
    for first in (0, 4, 8, 400):
        group = l2p[first:first + 4]
        assert (group // 4 == group[0] // 4).all() and (np.diff(group) == 1).all()
    assert _die(dev, 0) != _die(dev, 4)                      # pages striped over the dies
    off = SSD(Simulator(), "ssd0", SIMPLE)
    assert _die(off, 0) != _die(off, 1)                      # off: units striped


def test_a_read_of_a_sensed_page_needs_only_its_transfer():
    sim = Simulator()
    dev = SSD(sim, "ssd0", PAGE16)
    assert _one(dev, sim, READ, 0, 4096) == (10 + 20 + 100 + 10) * US
    assert _one(dev, sim, READ, 4096, 4096) == (10 + 100 + 10) * US        # no tR
    assert _one(dev, sim, READ, 16 * KB, 4096) == (10 + 20 + 100 + 10) * US  # next page
    sim = Simulator()
    dev = SSD(sim, "ssd0", SIMPLE)
    _one(dev, sim, READ, 0, 4096)
    assert _one(dev, sim, READ, 4096, 4096) == (10 + 20 + 100 + 10) * US


def test_a_program_on_the_die_overwrites_the_register():
    sim = Simulator()
    dev = SSD(sim, "ssd0", dataclasses.replace(PAGE16, die_allocation="static"))
    _one(dev, sim, READ, 0, 4096)
    # LPN 8 is NAND page 2: die 0 under static striping, as LPNs 0-3
    _one(dev, sim, WRITE, 8 * 4096, 4096, fua=True)
    assert _die(dev, 8) == _die(dev, 0)
    assert _one(dev, sim, READ, 4096, 4096) == (10 + 20 + 100 + 10) * US


def test_static_striping_stripes_nand_pages():
    for cfg, together in ((PAGE16, True), (SIMPLE, False)):
        sim = Simulator()
        dev = SSD(sim, "ssd0", dataclasses.replace(cfg, precondition="fresh",
                                                   die_allocation="static"))
        run_job(sim, dev, "write", 64 * KB, 4, 16)
        dies = np.array([_die(dev, lpn) for lpn in range(256)]).reshape(-1, 4)
        assert (dies == dies[:, :1]).all() == together
        assert set(dies.ravel()) == {0, 1}


FAST = dict(channel_MBps=409.6, host_MBps=4096.0, read_us=50)      # die-bound reads


def _mb_s(cfg, rw, precondition):
    sim = Simulator()
    dev = SSD(sim, "ssd0", dataclasses.replace(cfg, precondition=precondition, **FAST),
              rng=np.random.default_rng(1))
    bs = 64 * KB if rw == "read" else 4 * KB
    return run_job(sim, dev, rw, bs, 8, 400).mb_s


def test_sequential_reads_get_several_units_per_sense_random_reads_do_not():
    on, off = _mb_s(PAGE16, "read", "sequential"), _mb_s(SIMPLE, "read", "sequential")
    # per die: off tR 50 + 10 us per unit; on 50 + 4 x 10 us per four units
    assert on / off == pytest.approx(60 / 22.5, rel=0.1)
    on, off = _mb_s(PAGE16, "randread", "random"), _mb_s(SIMPLE, "randread", "random")
    assert on == pytest.approx(off, rel=0.02)


def _randwrite(cfg):
    sim = Simulator()
    dev = SSD(sim, "ssd0", dataclasses.replace(cfg, precondition="random", read_us=200),
              rng=np.random.default_rng(1))
    r = run_job(sim, dev, "randwrite", 4 * KB, 8, 4000)
    return r.iops, dev.stats()["write_amplification"]


def test_gc_copies_of_one_nand_page_share_its_sense():
    (on, wa_on), (off, wa_off) = _randwrite(PAGE16), _randwrite(SIMPLE)
    assert wa_on == pytest.approx(wa_off, rel=0.05) and wa_on > 2   # the same GC work ...
    assert on > 1.1 * off                           # ... with fewer tR of 200 us per copy
