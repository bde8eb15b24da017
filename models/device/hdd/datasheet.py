"""An HDD from the numbers of its data sheet (product manual): ``HDDDataSheet`` holds
them, ``hdd_from_datasheet`` turns them into the ``HDDConfig`` the HDD model runs
(``models.device.hdd``): a zone table and the three seek points.

Derivation (what is modelled):

- Zones: ``n_zones`` bands of equal cylinder count (constant linear density, so the
  sectors per track fall linearly from the outer to the inner diameter); the outer
  and inner zones' sectors per track are those whose *sustained* rate - one track
  per revolution plus the skewed track switch - equals the sheet's sustained MB/s at
  the outer and inner diameter (``layout.spt_for_rate``); track and cylinder skew
  from the head-switch and track-to-track times (``layout.synthetic_zones``).
- Cylinders: as many as make the zones hold the formatted capacity.
- Seek: the sheet's track-to-track, average and full-stroke *read* seeks are the
  three points of the model's seek curve (a + b*sqrt(d) joined to a line);
  ``write_settle_ms`` is the sheet's average write seek minus the average read seek
  (a write settles longer on the same arm movement).
- Controller: the sheet's "including controller overhead" access time minus the
  seek alone, when the sheet gives both, is the per-command read/write overhead.
- Buffer: ``cache_bytes`` in ``cache_segments`` equal segments; read-ahead up to half a
  segment, at most 512 KiB.

Not on data sheets, so parameters (``heads`` aside): the zone count, the head-switch
time (taken equal to track-to-track unless given), the buffer segmentation, the
cache and flush overheads where the sheet gives no access-time pair. Each preset
says which of its numbers are the sheet's and which are assumed.

Deliberately not modelled: zone boundaries as the drive has them (a data sheet does
not give them), separate seek curves for reads and writes beyond the settle time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...checks import above, at_least
from .config import SECTOR_BYTES, HDDConfig
from .layout import spt_for_rate, synthetic_zones


@dataclass(frozen=True)
class HDDDataSheet:
    """A drive's data-sheet figures (units in the names; MB = 10^6 bytes).

    - ``rpm``; ``heads`` (read/write heads = data surfaces); ``capacity_bytes``
      (formatted, a multiple of 512).
    - ``seek_track_to_track_ms``, ``seek_avg_read_ms``, ``seek_full_stroke_ms``: read
      seeks without controller overhead; ``seek_avg_write_ms`` (0 = as read).
    - ``sustained_outer_MBps``, ``sustained_inner_MBps``: sustained media rate at the
      outer and inner diameter.
    - ``cache_bytes``: the buffer; ``interface_MBps``: the host link (6 Gb/s ~ 600).
    - ``overhead_read_ms``, ``overhead_write_ms``: controller overhead per command
      (access time including it minus the seek alone); ``overhead_hit_ms`` for a
      command the buffer serves and ``overhead_flush_ms`` for SYNCHRONIZE CACHE.
    - ``head_switch_ms``: 0 = the track-to-track seek. ``n_zones``, ``cache_segments``.
    """

    rpm: float
    heads: int
    capacity_bytes: int
    seek_track_to_track_ms: float
    seek_avg_read_ms: float
    seek_full_stroke_ms: float
    sustained_outer_MBps: float
    sustained_inner_MBps: float
    cache_bytes: int
    seek_avg_write_ms: float = 0.0
    interface_MBps: float = 600.0
    overhead_read_ms: float = 0.1
    overhead_write_ms: float = 0.1
    overhead_hit_ms: float = 0.05
    overhead_flush_ms: float = 0.05
    head_switch_ms: float = 0.0
    n_zones: int = 20
    cache_segments: int = 16

    def __post_init__(self) -> None:
        above(self, 0, "rpm", "capacity_bytes", "seek_track_to_track_ms", "seek_avg_read_ms",
              "seek_full_stroke_ms", "sustained_outer_MBps", "sustained_inner_MBps",
              "cache_bytes", "interface_MBps")
        at_least(self, 1, "heads", "n_zones", "cache_segments")
        at_least(self, 0, "seek_avg_write_ms", "overhead_read_ms", "overhead_write_ms",
                 "overhead_hit_ms", "overhead_flush_ms", "head_switch_ms")
        if self.capacity_bytes % SECTOR_BYTES:
            raise ValueError(f"capacity_bytes: must be a multiple of {SECTOR_BYTES}, "
                             f"got {self.capacity_bytes}")
        if self.sustained_inner_MBps > self.sustained_outer_MBps:
            raise ValueError("sustained_inner_MBps: exceeds sustained_outer_MBps (the outer "
                             "diameter is the faster)")
        if self.seek_avg_write_ms and self.seek_avg_write_ms < self.seek_avg_read_ms:
            raise ValueError("seek_avg_write_ms: below seek_avg_read_ms")


def hdd_from_datasheet(sheet: HDDDataSheet, **overrides) -> HDDConfig:
    """The ``HDDConfig`` of ``sheet`` (module docstring); ``overrides`` replace fields
    of the result (``queue_depth=1``, ``write_cache=True``)."""
    rpm = float(sheet.rpm)
    switch = sheet.head_switch_ms or sheet.seek_track_to_track_ms
    t2t = sheet.seek_track_to_track_ms
    outer = spt_for_rate(sheet.sustained_outer_MBps, switch, rpm)
    inner = spt_for_rate(sheet.sustained_inner_MBps, switch, rpm)
    sectors = sheet.capacity_bytes // SECTOR_BYTES
    n = sheet.n_zones
    mean_spt = sum(round(outer + (inner - outer) * i / max(1, n - 1)) for i in range(n)) / n
    cylinders = math.ceil(sectors / (sheet.heads * mean_spt) / n) * n
    segment = sheet.cache_bytes // sheet.cache_segments // SECTOR_BYTES * SECTOR_BYTES
    write_seek = sheet.seek_avg_write_ms or sheet.seek_avg_read_ms
    cfg = dict(
        rpm=rpm,
        surfaces=sheet.heads,
        zones=synthetic_zones(n, cylinders, outer, inner, switch, t2t, rpm),
        cylinders=cylinders,
        capacity_bytes=sectors * SECTOR_BYTES,
        seek_single_cyl_ms=t2t,
        seek_avg_ms=sheet.seek_avg_read_ms,
        seek_full_stroke_ms=sheet.seek_full_stroke_ms,
        head_switch_ms=switch,
        write_settle_ms=round(write_seek - sheet.seek_avg_read_ms, 9),
        overhead_read_hit_ms=sheet.overhead_hit_ms,
        overhead_read_miss_ms=sheet.overhead_read_ms,
        overhead_write_hit_ms=sheet.overhead_hit_ms,
        overhead_write_miss_ms=sheet.overhead_write_ms,
        overhead_flush_ms=sheet.overhead_flush_ms,
        interface_mb_s=sheet.interface_MBps,
        cache_segments=sheet.cache_segments,
        cache_segment_bytes=segment,
        read_ahead_max_bytes=min(segment // 2 // SECTOR_BYTES * SECTOR_BYTES, 1 << 19),
        read_ahead_min_bytes=0,
        write_cache=False,         # WCE off, as behind a RAID controller; set per experiment
        write_cache_bytes=0,
        queue_depth=32,            # Linux SAS/SATA HBA default per-device queue_depth
        scheduler="sptf",
        sptf_age_limit_ms=0.0,
    )
    cfg.update(overrides)
    return HDDConfig(**cfg)


# -- presets: each sheet's source, and which numbers are the sheet's ---------------------

# Seagate Cheetah 15K.7 300 GB (ST3300657SS), product manual 100516226: 15,000 RPM,
# average seek 3.4 ms read / 3.9 ms write, track-to-track 0.2 ms, sustained 204 ->
# 122 MB/s, 16 MB cache, 6 Gb/s SAS, 585,937,500 sectors. Assumed: 4 heads, 7.0 ms
# full stroke, the overheads. ``hdd.default_15k_sas`` (the published experiments' drive)
# is this sheet through the builder.
CHEETAH_15K7 = HDDDataSheet(
    rpm=15_000, heads=4, capacity_bytes=585_937_500 * SECTOR_BYTES,
    seek_track_to_track_ms=0.2, seek_avg_read_ms=3.4, seek_avg_write_ms=3.9,
    seek_full_stroke_ms=7.0, sustained_outer_MBps=204.0, sustained_inner_MBps=122.0,
    cache_bytes=16 << 20)

# Seagate Savvio 10K.4 600 GB (ST9600204SS, 2.5" 10k SAS), product manual 100539221
# Rev. A, sections 4.1-4.2: 10K rpm, 6 heads, 600 GB (1,172,123,568 sectors, the
# model family's guaranteed count for 600 GB), access time without / with controller
# overhead: average 3.8 / 4.0 ms read, 4.4 / 4.6 ms write, single track 0.30 / 0.50 ms
# read, full stroke 7.81 / 8.01 ms read -> 0.2 ms controller overhead; 6 Gb/s SAS;
# 677,557 bytes per track on average (112.9 MB/s at 10k rpm). Assumed: the sustained
# rates at outer/inner diameter (the manual's excerpt gives the mean track, not the
# ends: 145 / 81 MB/s keep its mean with an outer/inner ratio of 1.8) and a 64 MB
# buffer.
SAVVIO_10K4 = HDDDataSheet(
    rpm=10_000, heads=6, capacity_bytes=1_172_123_568 * SECTOR_BYTES,
    seek_track_to_track_ms=0.30, seek_avg_read_ms=3.8, seek_avg_write_ms=4.4,
    seek_full_stroke_ms=7.81, sustained_outer_MBps=145.0, sustained_inner_MBps=81.0,
    cache_bytes=64 << 20, overhead_read_ms=0.2, overhead_write_ms=0.2)

# Seagate Constellation ES.3 4 TB (ST4000NM0033, 3.5" 7200 rpm SATA enterprise),
# product manuals 100671511 (SATA) / 100671510 (SAS, the same head-disk assembly),
# section 4.1: 7200 rpm (4.16 ms average latency), 10 heads, 4 TB (7,814,037,168
# sectors), sustained transfer 175 -> 83 MB/s, 128 MB cache, 6 Gb/s; Seagate's data
# sheet: average seek 8.5 ms read / 9.5 ms write. Assumed: track-to-track 0.5 ms and
# full stroke 17.4 ms (the figures of Seagate's 7200 rpm Constellation SAS manual,
# 100572496: 0.5 ms, 17.35 ms), the controller overheads.
CONSTELLATION_ES3 = HDDDataSheet(
    rpm=7_200, heads=10, capacity_bytes=7_814_037_168 * SECTOR_BYTES,
    seek_track_to_track_ms=0.5, seek_avg_read_ms=8.5, seek_avg_write_ms=9.5,
    seek_full_stroke_ms=17.4, sustained_outer_MBps=175.0, sustained_inner_MBps=83.0,
    cache_bytes=128 << 20)


def savvio_10k4(**overrides) -> HDDConfig:
    """The 10k rpm SAS preset (``SAVVIO_10K4``)."""
    return hdd_from_datasheet(SAVVIO_10K4, **overrides)


def constellation_es3(**overrides) -> HDDConfig:
    """The 7200 rpm SATA enterprise preset (``CONSTELLATION_ES3``), with its write cache
    on: a SATA drive ships with it enabled (the ATA default; ``hdparm -W`` shows 1),
    unlike the SAS presets, which keep WCE off as behind a RAID controller."""
    return hdd_from_datasheet(CONSTELLATION_ES3, **{"write_cache": True, **overrides})
