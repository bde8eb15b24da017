"""Flash presets of today's drives, each from its data sheet: three NVMe SSDs
(``NVMeConfig``) and a SATA SSD (``SSDConfig``, the same flash back end).

How the numbers are set (the README's "Data-sheet presets" table lists, per drive,
which data-sheet figures are inputs and which are predictions of the model):

- Dies and channels: user capacity / die capacity of the NAND generation the drive
  uses, plus the spare area that makes the raw capacity; the controller's channel
  count.
- ``program_us`` is the *effective* program time of one 4 KiB mapping unit on a die:
  the data sheet's sequential write MB/s spread over the dies (a die programs a
  multi-plane page of several 4 KiB units in one tPROG, so the unit's share of it is
  what bounds a die's write rate). The unit's channel transfer holds the die as well
  (no cache programs), so where it is not small against that share it is taken off:
  the XPoint drive and the 970 EVO Plus (1.3 of 7.2 us, 5.1 of 39.7 us). The P4500
  and S4510 keep it inside (10.2 us of 164 / 257 us: their sheets' rates come back at
  0.98 / 0.97 as they are).
- ``slc_program_us`` / ``slc_cache_bytes`` (the consumer TLC drive): its sheet's
  sequential write in the SLC cache sets the SLC rate as above, the footnote's rate
  beyond the cache ``program_us``.
- ``read_us`` (tR of a single-plane page read) and ``read_cmd_us`` / ``write_cmd_us``:
  the data sheet's QD1 4 KiB latencies split into flash and controller time.
- ``nand_page_bytes`` 16 KiB on the three TLC drives (assumed: the page size of the
  3D TLC generations they use; one plane per sense, multi-plane reads not counted -
  two planes, 32 KiB, also meets every figure it moves): one tR brings four 4 KiB
  units into the die's registers, so data laid out in order (``precondition:
  sequential``) reads several units per tR, and GC copies of one page share a sense
  (the simulated write path places unit by unit: ``kernels.choose_die``). Chosen
  with the P4500 sequential read and the S4510 sequential latency in view (the
  README's Calibrations table).
- Modelled capacity: the FTL keeps per-page state (8 bytes per 4 KiB), so a 1 TB
  drive would take 2 GB of memory; the presets model 16 GiB of LBAs (4 GiB for the
  XPoint drive's 512-byte units) with the data sheet's die count and spare fraction,
  which is what sets parallelism and GC. ``capacity_bytes`` /
  ``raw_capacity_bytes`` may be set to the real sizes where memory allows.

Assumed values are marked; none is tuned to a predicted figure.
"""
from __future__ import annotations

from .nvme import NVMeConfig
from .drive import SSDConfig

GIB = 2**30


def _raw(user_bytes: int, spare: float, unit: int) -> int:
    return int(user_bytes * (1.0 + spare)) // unit * unit


def intel_p4500_1tb(**overrides) -> NVMeConfig:
    """Datacenter NVMe with power-loss protection: Intel SSD DC P4500 1.0 TB (U.2,
    PCIe 3.0 x4). Source: Lenovo Press product guide "Intel P4500 Entry NVMe PCIe
    SSDs" (technical specifications table): 4 KB random read 279,500 IOPS, random
    write 30,500 IOPS, sequential read 3.2 GB/s, sequential write 0.6 GB/s, random
    read latency 85 us, random write latency 20 us, PCIe 3.0 x4; enhanced power-loss
    data protection (Intel). IMFT 32-layer 384 Gb TLC (48 GB per die): 1.0 TB = 21
    dies of user data; 24 dies on Intel's 12-channel controller (2 per channel),
    i.e. 15 % spare (assumed: the raw count is not published).

    The guide also gives sequential QD1 latencies, 10 us read and 13 us write (not
    inputs; the model misses both: no controller read-ahead, one ``write_cmd_us``).

    Inputs: sequential write (-> ``program_us`` = 24 dies x 4 KiB / 600 MB/s = 164 us),
    the two random QD1 latencies (-> ``read_cmd_us``, ``write_cmd_us``). Assumed: tR 70 us,
    400 MB/s channels (ONFI 3 class), 4 firmware cores, 2 map pages per flush (no
    flush without PLP on this drive anyway)."""
    cfg = dict(
        capacity_bytes=16 * GIB, raw_capacity_bytes=_raw(16 * GIB, 0.15, 24 * 4096 * 256),
        channels=12, dies_per_channel=2, page_bytes=4096, pages_per_block=256,
        nand_page_bytes=16 * 1024,
        read_us=70.0, program_us=164.0, erase_us=5000.0, channel_MBps=400.0,
        write_cache_bytes=8 * 2**20, flush_metadata_pages=2,
        nr_queues=32, queue_depth=1024, controller_cores=4,
        # 85 us = cmd + tR 70 + 4 KiB over the channel 10.2 + over the link 1.1
        read_cmd_us=3.7,
        # 20 us = cmd + 4 KiB over the link 1.1 (the write completes in the PLP buffer)
        write_cmd_us=18.9, flush_cmd_us=2.0,
        pcie_gen=3, pcie_lanes=4, write_cache=True, power_loss_protection=True)
    cfg.update(overrides)
    return NVMeConfig(**cfg)


def samsung_970_evo_plus_1tb(**overrides) -> NVMeConfig:
    """Consumer NVMe without power-loss protection: Samsung 970 EVO Plus 1 TB
    (MZ-V7S1T0, M.2, PCIe 3.0 x4). Source: Samsung data sheet (970 EVO Plus, 2019):
    sequential read 3,500 MB/s, sequential write 3,300 MB/s (Intelligent TurboWrite),
    4 KB random read 600,000 IOPS (QD32, 4 threads), random write 550,000 IOPS
    (QD32, 4 threads), QD1 1 thread 19,000 / 60,000 IOPS read / write; beyond the
    Intelligent TurboWrite buffer (the sheet's footnote, 1 TB) 1,700 MB/s sequential
    and 400,000 IOPS random write (QD32, 4 threads); 96-layer
    256 Gb V-NAND TLC (32 dies for 1 TB), 8-channel Phoenix controller, 1 GB LPDDR4
    cache; no power-loss protection (client drive).

    Intelligent TurboWrite: 6 GB of SLC-mode cache plus 36 GB more while the drive has
    free space (``slc_cache_bytes`` / ``slc_cache_dynamic_bytes``; the model scales the
    dynamic part by the share of LBAs not written) - the 1 TB 970 EVO's sizes as
    quoted by thefpsreview.com's review (2020), taken to be the EVO Plus's (same
    controller and cache scheme; not checked against the EVO Plus sheet).

    Inputs: sequential write in and beyond the TurboWrite buffer (-> a die's time per
    unit 32 x 4 KiB / 3,300 MB/s = 39.7 us and 32 x 4 KiB / 1,700 MB/s = 77.1 us, less
    the unit's 5.1 us channel transfer, which holds the die too - no cache programs -,
    as the XPoint drive's: ``slc_program_us`` 34.6 us, ``program_us`` 72.0 us for
    direct-to-TLC writes, folding and GC copies), QD1 read and write
    (-> ``read_cmd_us`` from 1/19,000 s = 52.6 us; ``write_cmd_us`` from 1/60,000 s =
    16.7 us). Assumed: tR 40 us (SLC-cached reads of fresh data), 800 MB/s channels
    (Toggle 4.0 class), 5 firmware cores, 9.95 % spare (1 TiB of NAND for 1 TB),
    2 map pages programmed per FLUSH (16 KiB NAND pages, 138 us each: a lone program
    holds the die for the page's whole tPROG), a 4 MiB write buffer. Preconditioned
    ``sequential`` (every LBA written once: reads find data); the sheet's random-write
    figure is a fresh drive's (``precondition: fresh``)."""
    cfg = dict(
        capacity_bytes=16 * GIB, raw_capacity_bytes=_raw(16 * GIB, 0.0995, 32 * 4096 * 256),
        channels=8, dies_per_channel=4, page_bytes=4096, pages_per_block=256,
        nand_page_bytes=16 * 1024,
        read_us=40.0, program_us=72.0, erase_us=3500.0, channel_MBps=800.0,
        slc_program_us=34.6, slc_cache_bytes=6 * 10**9, slc_cache_dynamic_bytes=36 * 10**9,
        write_cache_bytes=4 * 2**20, flush_metadata_pages=2,
        nr_queues=8, queue_depth=1024, controller_cores=5,
        # 52.6 us = cmd + tR 40 + 4 KiB over the channel 5.1 + over the link 1.1
        read_cmd_us=6.4,
        # 16.7 us = cmd + 4 KiB over the link 1.1
        write_cmd_us=15.6, flush_cmd_us=2.0,
        pcie_gen=3, pcie_lanes=4, write_cache=True, power_loss_protection=False,
        precondition="sequential")
    cfg.update(overrides)
    return NVMeConfig(**cfg)


def intel_optane_p4800x_375gb(**overrides) -> NVMeConfig:
    """Low-latency NVMe (3D XPoint): Intel Optane SSD DC P4800X 375 GB (PCIe 3.0 x4).
    Source: Intel product brief / specification: sequential read 2,400 MB/s,
    sequential write 2,000 MB/s, 4 KB random read 550,000 IOPS, random write
    500,000 IOPS, latency < 10 us read and write (QD1), power-loss protection;
    7-channel controller with 28 3D XPoint dies (4 per channel; Intel's disclosure at
    launch), 448 GB of media for 375 GB (19.5 % spare).

    3D XPoint writes in place: no erase before write. Modelled as flash whose erase
    unit is one 512-byte unit (``pages_per_block`` 1) erased in no time, so GC never
    copies; a 4 KiB command spreads over eight units on several dies, as the
    controller stripes it. Inputs: sequential read and write per die (-> ``read_us``
    2,400 MB/s / 28 dies -> 512 B per 6.0 us less its 1.3 us transfer; ``program_us``
    2,000 MB/s / 28 -> 7.2 us less 1.3 us), the 10 us QD1 latency (-> the command
    times). Assumed: 400 MB/s channels, 7 firmware cores."""
    cfg = dict(
        capacity_bytes=4 * GIB, raw_capacity_bytes=_raw(4 * GIB, 0.195, 28 * 512),
        channels=7, dies_per_channel=4, page_bytes=512, pages_per_block=1,
        read_us=4.7, program_us=5.9, erase_us=0.0, channel_MBps=400.0,
        write_cache_bytes=2 * 2**20, flush_metadata_pages=0,
        nr_queues=32, queue_depth=1024, controller_cores=7,
        read_cmd_us=2.0, write_cmd_us=2.0, flush_cmd_us=1.0,
        pcie_gen=3, pcie_lanes=4, write_cache=False, power_loss_protection=True,
        gc_min_free_blocks=2)
    cfg.update(overrides)
    return NVMeConfig(**cfg)


def intel_s4510_960gb(**overrides) -> SSDConfig:
    """SATA SSD of the last years: Intel SSD D3-S4510 960 GB (SATA 6 Gb/s, enhanced
    power-loss data protection). Source: Intel product specification: sequential
    read 560 MB/s, sequential write 510 MB/s, 4 KB random read 95,000 IOPS, random
    write 36,000 IOPS (steady state), latency read 36 us, write 37 us; IMFT 64-layer
    TLC; 8-channel controller. Intel's latency figure is its "sequential latency",
    4 KiB sequential at QD1 (the S4500/S4600 specification of the same family lists
    it so, 36 / 36 us, beside a random latency of 110 / 52 us).

    Power-loss protection (``power_loss_protection``; Intel's product brief: "enhanced
    power-loss data protection"): the buffer is durable, so FLUSH CACHE costs its
    command time and FUA writes complete in the buffer. ``flush_metadata_pages`` 0
    (with the protection off, a FLUSH waits for the buffer's programs only).
    Inputs: random read IOPS (-> ``read_cmd_us`` = 1/95,000 s = 10.5 us,
    the one controller CPU's bound, as the X25-E's), sequential write (->
    ``program_us`` = 32 dies x 4 KiB / 510 MB/s = 257 us), the sequential QD1 write
    latency (-> ``write_cmd_us``; a cached write costs the same either way). Assumed: 32 dies of 256 Gb (4 per channel), 14.5 % spare (1 TiB
    of NAND), tR 60 us (64-layer TLC), 400 MB/s channels, a 1 MiB buffer."""
    cfg = dict(
        capacity_bytes=16 * GIB, raw_capacity_bytes=_raw(16 * GIB, 0.145, 32 * 4096 * 256),
        channels=8, dies_per_channel=4, page_bytes=4096, pages_per_block=256,
        nand_page_bytes=16 * 1024,
        read_us=60.0, program_us=257.0, erase_us=5000.0, channel_MBps=400.0,
        host_MBps=600.0,                      # SATA 6 Gb/s after 8b/10b
        read_cmd_us=10.5,
        # 37 us = cmd + 4 KiB over the link 6.8
        write_cmd_us=30.2, flush_cmd_us=5.0,
        queue_depth=32, write_cache=True, write_cache_bytes=1 * 2**20,
        flush_metadata_pages=0, power_loss_protection=True)
    cfg.update(overrides)
    return SSDConfig(**cfg)
