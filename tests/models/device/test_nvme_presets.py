"""Each flash preset against the figures of its data sheet that were NOT inputs
(models/device/ssd/presets.py says which were), by fio-style runs on a fresh
instance of the drive: 4 KiB random at QD1 and QD128 (the sheets' 4 workers x QD32;
QD32 on the SATA drive, NCQ's limit), 128 KiB sequential at QD32, and Intel's
"sequential latency" (4 KiB sequential at QD1). Within 25 % (the README's "Data-sheet
presets" table). Sequential figures run on a drive written in order (``precondition:
sequential``), as sequential tests are run after a sequential fill; random writes on
the preset's own state. The figures the model misses are strict xfails naming the
missing mechanism."""
import numpy as np
import pytest

from models.device.ssd import presets as P
from models.device.ssd.nvme import NVMe, NVMeConfig
from models.device.ssd import SSD
from models.sim import Simulator

from .jobs import run_job

KB = 1024


def drive(preset, **over):
    cfg = preset(**over)
    sim = Simulator()
    cls = NVMe if isinstance(cfg, NVMeConfig) else SSD
    return sim, cls(sim, "dev", cfg, rng=np.random.default_rng(1))


def fio(preset, rw, bs, qd, n, **over):
    return run_job(*drive(preset, **over), rw, bs, qd, n)


def iops(preset, rw, qd, n=8000, **over):
    # random writes run 30,000 I/Os: past the write buffer and into GC's steady state
    return fio(preset, rw, 4 * KB, qd, n, **over).iops


def seq_mb_s(preset, rw, **over):
    return fio(preset, rw, 128 * KB, 32, 1500, **{"precondition": "sequential", **over}).mb_s


def seq_lat_us(preset, rw, **over):
    return fio(preset, rw, 4 * KB, 1, 1000, **{"precondition": "sequential", **over}).lat_us


MISS = pytest.mark.xfail(strict=True)
BEYOND_SLC = {"slc_cache_bytes": 2**20, "slc_cache_dynamic_bytes": 0}
# (preset, what, simulate, data-sheet figure)
PREDICTIONS = [
    (P.intel_p4500_1tb, "4K random read IOPS", lambda p: iops(p, "randread", 128), 279_500),
    (P.intel_p4500_1tb, "4K random write IOPS", lambda p: iops(p, "randwrite", 128, n=30_000),
     30_500),
    (P.intel_p4500_1tb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 3_200),
    # 15 us of command + one 4 KiB channel transfer + link, before any sense: the sheet's
    # 10 us needs reads served from a read-ahead buffer in controller DRAM
    pytest.param(P.intel_p4500_1tb, "QD1 4K sequential read latency us",
                 lambda p: seq_lat_us(p, "read"), 10,
                 marks=MISS, id="p4500-seq-read-latency-no-controller-read-ahead"),
    # one write_cmd_us for every write (set from the random 20 us): the sheet's 7 us
    # less for sequential writes is firmware work the model does not split by pattern
    pytest.param(P.intel_p4500_1tb, "QD1 4K sequential write latency us",
                 lambda p: seq_lat_us(p, "write"), 13,
                 marks=MISS, id="p4500-seq-write-latency-one-write-cmd-time-for-all-writes"),
    (P.samsung_970_evo_plus_1tb, "4K random read IOPS",
     lambda p: iops(p, "randread", 128), 600_000),
    (P.samsung_970_evo_plus_1tb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 3_500),
    pytest.param(P.samsung_970_evo_plus_1tb, "4K random write IOPS (fresh drive)",
                 lambda p: iops(p, "randwrite", 128, precondition="fresh"), 550_000,
                 marks=MISS, id="970-randwrite-qd1-latency-all-core-occupancy-5-cores-x-15.6us"),
    # the sheet's footnote, beyond the Intelligent TurboWrite (SLC) buffer: a fresh drive
    # whose cache is full (1 MiB of it, filled by the first 256 writes)
    (P.samsung_970_evo_plus_1tb, "4K random write IOPS beyond the TurboWrite buffer",
     lambda p: iops(p, "randwrite", 128, n=30_000, precondition="fresh", **BEYOND_SLC), 400_000),
    (P.intel_optane_p4800x_375gb, "4K random read IOPS",
     lambda p: iops(p, "randread", 128, n=4000), 550_000),
    (P.intel_optane_p4800x_375gb, "4K random write IOPS",
     lambda p: iops(p, "randwrite", 128, n=4000), 500_000),
    (P.intel_s4510_960gb, "sequential read MB/s", lambda p: seq_mb_s(p, "read"), 560),
    pytest.param(P.intel_s4510_960gb, "4K random write IOPS",
                 lambda p: iops(p, "randwrite", 32, n=30_000), 36_000, marks=MISS,
                 id="s4510-randwrite-wa-4.2-at-assumed-14.5pct-spare-program-budget"),
    # Intel's "latency" is 4 KiB sequential at QD1 (its S4500/S4600 specification names
    # it so beside a random one): 3 of 4 reads find their NAND page sensed already
    (P.intel_s4510_960gb, "QD1 4K sequential read latency us",
     lambda p: seq_lat_us(p, "read"), 36),
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
    (P.samsung_970_evo_plus_1tb, lambda p: seq_mb_s(p, "write", **BEYOND_SLC), 1_700),
    (P.samsung_970_evo_plus_1tb, lambda p: seq_mb_s(p, "write"), 3_300),
    (P.intel_p4500_1tb, lambda p: seq_mb_s(p, "write"), 600),
    (P.intel_s4510_960gb, lambda p: iops(p, "randread", 32), 95_000),
    (P.intel_s4510_960gb, lambda p: seq_mb_s(p, "write"), 510),
]


@pytest.mark.parametrize("preset,simulate,sheet", INPUTS)
def test_input_figures_come_back(preset, simulate, sheet):
    assert simulate(preset) == pytest.approx(sheet, rel=0.05)


def test_970_sequential_writes_in_and_beyond_the_turbowrite_buffer():
    # the two inputs, 3,300 and 1,700 MB/s, set a die's time per unit (39.7 and 77.1 us
    # on each of 32 dies): slc_program_us and program_us are those less the unit's
    # channel transfer, which holds the die as well (no cache programs); the rates are
    # in the ratio of the die times
    # (each figure against its sheet: the input rows above)
    p = P.samsung_970_evo_plus_1tb
    cfg = p()
    cached, beyond = seq_mb_s(p, "write"), seq_mb_s(p, "write", **BEYOND_SLC)
    x = 4096 / cfg.channel_MBps              # us: 4 KiB over the channel
    assert cached / beyond == pytest.approx((cfg.program_us + x) / (cfg.slc_program_us + x),
                                            rel=0.01)


def test_power_loss_protection_of_the_presets():
    assert P.intel_p4500_1tb().power_loss_protection
    assert P.intel_optane_p4800x_375gb().power_loss_protection
    assert not P.samsung_970_evo_plus_1tb().power_loss_protection
    assert P.intel_s4510_960gb().flush_metadata_pages == 0


def test_970_concurrent_fua_writes_share_nand_pages_once_the_dies_are_busy():
    # no power-loss protection: a lone FUA write pads its 16 KiB NAND page (3 units of
    # padding a write); 128 at once keep the dies busy, and writes that reach the
    # controller while a padded page waits for its die fill it - the controller cores
    # (5 x 15.6 us of write_cmd_us) bound the rate, not padded programs
    p = P.samsung_970_evo_plus_1tb
    cfg = p()

    def fua(qd, n):
        sim, dev = drive(p)
        res = run_job(sim, dev, "randwrite", 4 * KB, qd, n, fua=True)
        return res.iops, dev.stats()["flash_pages_padded"]

    _, padded = fua(1, 2000)
    assert padded == 3 * 2000
    iops, padded = fua(128, 10_000)
    assert padded < 10_000
    assert iops == pytest.approx(cfg.controller_cores / (cfg.write_cmd_us * 1e-6), rel=0.03)
