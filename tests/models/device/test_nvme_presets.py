"""Each flash preset against the figures of its data sheet that were NOT inputs
(models/device/nvme_presets.py says which were), by fio-style runs on a fresh
instance of the drive: 4 KiB random at QD1 and QD128 (the sheets' 4 workers x QD32;
QD32 on the SATA drive, NCQ's limit), 128 KiB sequential at QD32. Within 25 % (the README's "Data-sheet presets" table).
The figures the model misses are strict xfails naming the missing mechanism."""
import numpy as np
import pytest

from models.device import nvme_presets as P
from models.device.nvme import NVMe, NVMeConfig
from models.device.ssd import SSD
from models.sim import Simulator

from .jobs import run_job

KB = 1024


def fio(preset, rw, bs, qd, n, **over):
    cfg = preset(**over)
    sim = Simulator()
    cls = NVMe if isinstance(cfg, NVMeConfig) else SSD
    dev = cls(sim, "dev", cfg, rng=np.random.default_rng(1))
    return run_job(sim, dev, rw, bs, qd, n)


def iops(preset, rw, qd, n=8000, **over):
    # random writes run 30,000 I/Os: past the write buffer and into GC's steady state
    return fio(preset, rw, 4 * KB, qd, n, **over).iops


def seq_mb_s(preset, rw, **over):
    return fio(preset, rw, 128 * KB, 32, 1500, **over).mb_s


MISS = pytest.mark.xfail(strict=True)
# (preset, what, simulate, data-sheet figure)
PREDICTIONS = [
    (P.intel_p4500_1tb, "4K random read IOPS", lambda p: iops(p, "randread", 128), 279_500),
    (P.intel_p4500_1tb, "4K random write IOPS", lambda p: iops(p, "randwrite", 128, n=30_000),
     30_500),
    pytest.param(P.intel_p4500_1tb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 3_200,
                 marks=MISS, id="p4500-seqread-die-bound-one-4k-unit-per-tR"),
    (P.samsung_970_evo_plus_1tb, "4K random read IOPS",
     lambda p: iops(p, "randread", 128), 600_000),
    (P.samsung_970_evo_plus_1tb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 3_500),
    pytest.param(P.samsung_970_evo_plus_1tb, "4K random write IOPS (fresh drive)",
                 lambda p: iops(p, "randwrite", 128, precondition="fresh"), 550_000,
                 marks=MISS, id="970-randwrite-controller-bound-host-time-in-qd1-latency"),
    (P.intel_optane_p4800x_375gb, "4K random read IOPS",
     lambda p: iops(p, "randread", 128, n=4000), 550_000),
    (P.intel_optane_p4800x_375gb, "4K random write IOPS",
     lambda p: iops(p, "randwrite", 128, n=4000), 500_000),
    (P.intel_s4510_960gb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 560),
    pytest.param(P.intel_s4510_960gb, "4K random write IOPS",
                 lambda p: iops(p, "randwrite", 32, n=30_000), 36_000, marks=MISS, id="s4510-randwrite-wa-at-assumed-spare"),
    pytest.param(P.intel_s4510_960gb, "QD1 4K read latency us",
                 lambda p: fio(p, "randread", 4 * KB, 1, 1000).lat_us, 36,
                 marks=MISS, id="s4510-qd1-read-latency-tlc-tR"),
]


@pytest.mark.parametrize("preset,what,simulate,sheet", PREDICTIONS)
def test_data_sheet_figure_not_used_as_input_within_25_percent(preset, what, simulate, sheet):
    assert simulate(preset) == pytest.approx(sheet, rel=0.25), what


INPUTS = [
    # the figures the parameters were derived from come back out (consistency)
    (P.intel_p4500_1tb, lambda p: fio(p, "randread", 4 * KB, 1, 1000).lat_us, 85),
    (P.intel_p4500_1tb, lambda p: fio(p, "randwrite", 4 * KB, 1, 1000).lat_us, 20),
    (P.samsung_970_evo_plus_1tb, lambda p: iops(p, "randread", 1, n=1000), 19_000),
    (P.samsung_970_evo_plus_1tb, lambda p: iops(p, "randwrite", 1, n=1000), 60_000),
    (P.intel_s4510_960gb, lambda p: iops(p, "randread", 32), 95_000),
]


@pytest.mark.parametrize("preset,simulate,sheet", INPUTS)
def test_input_figures_come_back(preset, simulate, sheet):
    assert simulate(preset) == pytest.approx(sheet, rel=0.05)


def test_power_loss_protection_of_the_presets():
    assert P.intel_p4500_1tb().power_loss_protection
    assert P.intel_optane_p4800x_375gb().power_loss_protection
    assert not P.samsung_970_evo_plus_1tb().power_loss_protection
    assert P.intel_s4510_960gb().flush_metadata_pages == 0
