"""The parameter table of ``pipeline.import_disksim``: one DiskSim drive (``DiskSpec``:
its ``.diskspecs``, ``.model``, ``.seek`` and ``.parv``) -> the fields of
``models.device.hdd.HDDConfig`` (``to_hdd_dict``), and what the files hold that the
config cannot carry (``unmapped``). The mapping (DiskSim parameter -> field) is:

- ``rpm`` <- Rotation speed (in rpms); ``surfaces`` <- Number of data surfaces;
  ``cylinders`` <- Number of cylinders; ``capacity_bytes`` <- Block count * 512.
- ``zones`` <- the layout's zones: First/Last cylinder number, Blocks per track,
  Skew for track switch / cylinder switch (sectors), Offset of first block, and the
  sparing (``zone_dicts``): LBN count, Empty space at zone front, spares per range,
  slipped sectors or tracks; ``surface_order`` <- LBN-to-PBN mapping scheme.
- seek: ``seek_curve_cyl`` / ``seek_curve_ms`` <- the ``.seek`` table ("extracted"
  seek type), or for the ``hpl`` / ``hplplus10`` types the HPL formula (and the
  first ten measured seeks) evaluated at every distance up to the formula's break
  point and at the full stroke (linear beyond it, so the table is exact there and
  within 1 us elsewhere). ``seek_single_cyl_ms`` <- the curve at one cylinder,
  ``seek_full_stroke_ms`` <- Full strobe seek time (or the curve's end),
  ``seek_avg_ms`` <- the curve averaged over uniformly random start and end
  cylinders (derived, for reference). ``head_switch_ms`` <- Head switch time,
  ``write_settle_ms`` <- Add. write settling delay.
- overheads: ``overhead_{read,write}_{hit,miss}_ms`` <- "... over. after read" (the
  controller's path when the previous command was a read), and
  ``overhead_*_after_write_ms`` <- "... over. after write" (disksim_diskctlr.c picks
  by the flags of the last completed command).
- ``interface_mb_s`` <- 512 bytes / the slowest per-sector transfer time on the path
  (the disk's Bulk sector transfer time, the buses' Read block transfer time and the
  controller's Bulk sector transfer time in the .parv; DiskSim takes the maximum).
- ``cache_segments`` <- Number of buffer segments, ``cache_segment_bytes`` <- Segment
  size (in blks) * 512, ``read_ahead_max_bytes`` <- Maximum read-ahead (blks) * 512
  (0 when Buffer continuous read = 0), ``read_ahead_min_bytes`` <- Minimum read-ahead,
  ``read_ahead_scheme`` <- Buffer continuous read (1 track, 2 cylinder, 3 bytes,
  4 track_stream), ``read_ahead_window_hits`` <- Allow almost read hits,
  ``read_ahead_on_idle_hit`` <- Read-ahead on idle hit, ``read_zero_latency`` <-
  Immediate buffer read (DiskSim's zero-latency read of a miss's first track,
  disksim_diskctlr.c disk_buffer_seekdone; 1 and 2 both turn it on - DiskSim only
  tests the value for non-zero - and any other value is refused naming the
  parameter); ``write_zero_latency`` <- Immediate buffer write (zero-latency writes of
  data already in the buffer, write-on-arrival; the same values);
  ``combine_seq_writes`` <- Combine seq writes (a queued write appending to the one
  being written continues it: BUFFER_APPEND in disksim_diskcache.c; it needs a queue,
  so the validation traces, replayed one request at a time, do not show it). "Read-ahead over requested"
  only matters with a maximum read-ahead of 0 and read-ahead on (none of these drives).
- ``write_cache`` <- Fast write level >= 1. Level 2 is write-back for every write;
  level 1 only while the write appends to the dirty segment or nothing else is
  queued (disksim_disk.c LIMITED_FASTWRITE), which at Max queue length 1 is every
  write - the measured traces agree (barracuda and cheetah4LP writes take ~1 ms);
  ``write_cache_bytes`` <- Maximum number of write segments * segment size.
- ``queue_depth`` <- Max queue length; ``scheduler`` <- fifo for Scheduling policy 1
  (FCFS), sptf otherwise.

What the files hold that HDDConfig cannot express is listed by ``unmapped(spec)`` and
written as comments at the top of the YAML.
"""
from __future__ import annotations

import numpy as np

from .layout import (PER_CYLINDER, SECTPERRANGE_SPARING, SECTPERTRACK_SPARING, SLIP_TO_END,
                     SUPPORTED_SPARING, TRACK_SPARING, zone_lbn_counts)
from .specs import DiskSpec, hpl_seek_ms

#: DiskSim "Buffer continuous read" -> HDDConfig.read_ahead_scheme (0 = no read-ahead:
#: read_ahead_max_bytes is 0)
CONTREAD_SCHEMES = {0: "bytes", 1: "track", 2: "cylinder", 3: "bytes", 4: "track_stream"}
#: DiskSim "LBN-to-PBN mapping scheme" -> HDDConfig.surface_order
SURFACE_ORDERS = {0: "forward", 1: "alternate_in_zone", 2: "alternate"}


def _hpl_table(spec: DiskSpec) -> tuple[np.ndarray, np.ndarray]:
    m = spec.model
    brk = int(m.hpl_seek[0])
    last = max(z.last_cyl for z in m.zones)
    full = max(m.cylinders - 1, last)
    d = np.unique(np.concatenate([
        np.arange(1, 41), np.arange(42, 101, 2), np.arange(105, brk, 5),
        [brk - 1, brk, full]]))
    d = d[(d >= 1) & (d <= full)]
    return d.astype(np.int64), hpl_seek_ms(m, d)


def seek_table(spec: DiskSpec) -> tuple[np.ndarray, np.ndarray]:
    """(distance_cyl, ms) of the drive's seek curve (table or evaluated formula)."""
    if spec.seek_dist_cyl is not None:
        return spec.seek_dist_cyl, spec.seek_ms
    return _hpl_table(spec)


def mean_seek_ms(dist: np.ndarray, ms: np.ndarray, cylinders: int) -> float:
    """Seek time averaged over independent uniform start and end cylinders.

    P(distance = d) = 2 (N - d) / N^2 for d >= 1; the curve is linearly
    interpolated between table points (extrapolated past the last one).
    """
    n = int(cylinders)
    d = np.arange(1, n, dtype=np.float64)
    t = np.interp(d, dist, ms)
    beyond = d > dist[-1]
    if beyond.any() and len(dist) > 1:
        slope = (ms[-1] - ms[-2]) / (dist[-1] - dist[-2])
        t[beyond] = ms[-1] + slope * (d[beyond] - dist[-1])
    w = 2.0 * (n - d) / (n * n)
    return float(np.sum(w * t))


def transfer_ms_per_sector(spec: DiskSpec) -> tuple[float, float]:
    """(read, write) ms per 512-byte sector: the slowest of disk, buses, controller."""
    disk = float(spec.get("Bulk sector transfer time", 0.0))
    rd = max(disk, spec.bus_read_ms_per_sector, spec.ctlr_ms_per_sector)
    wr = max(disk, spec.bus_write_ms_per_sector, spec.ctlr_ms_per_sector)
    return rd, wr


def _runs(starts, length: int) -> list[list[int]]:
    """Sorted slip positions -> [first, count] runs (adjacent slips merged)."""
    out: list[list[int]] = []
    for a in sorted(starts):
        if out and out[-1][0] + out[-1][1] == a:
            out[-1][1] += length
        else:
            out.append([a, length])
    return out


def _per_track_unused(z, surfaces: int) -> tuple[int, list[int]]:
    """Sparing scheme 3 (spare sectors at the end of every track): the zone's front in
    physical sectors and the sectors after it that hold no LBN - each track's spares
    not taken by its slips, and the slipped sectors (layout_g1 ltop_sectpertrackspare:
    the LBNs of a track skip its slips, in order)."""
    spt = z.sectors_per_track
    per_track = spt - z.spares
    if per_track < 1:
        raise ValueError(f"Number of spares: {z.spares} spares per track leave no LBN on a "
                         f"track of {spt} sectors (zone from cylinder {z.first_cyl})")
    t0, r0 = divmod(z.empty_space_front, per_track)
    slips: dict[int, list[int]] = {}
    for sl in sorted(z.slips):
        slips.setdefault(sl // spt, []).append(sl)
    unused: list[int] = []
    for t in range(t0, z.cylinders * surfaces):
        first = t * spt
        if t not in slips and t != t0:       # no slip: the track's last sectors are spare
            unused += range(first + per_track, first + spt)
            continue
        used = set()
        for r in range(r0 if t == t0 else 0, per_track):
            pos = r
            for sl in slips.get(t, ()):
                if sl - first <= pos:
                    pos += 1
            if pos >= spt:
                raise ValueError(f"slips: track {t} of the zone from cylinder {z.first_cyl} "
                                 f"has more slips than its {z.spares} spares")
            used.add(pos)
        start = r0 if t == t0 else 0
        unused += [first + k for k in range(start, spt) if k not in used]
    return t0 * spt + r0, unused


def zone_dicts(m) -> list[dict]:
    """The layout's zones as HDDZone dicts, with the sparing of the drive's scheme:
    Empty space at zone front -> front_sectors; the zone's LBN count (DiskSim's
    blksinband) -> lbas; schemes 8 and 2/5 (and 4/6 without slips) ->
    spare_sectors_per_range at the end of every Rangesize cylinders (one cylinder);
    scheme 3 -> each track's spares (and its slips) as slipped sectors; slips ->
    slipped runs (whole tracks for track sparing, scheme 1, else sectors; schemes 0,
    7, 9 and 10 slip zone-wide, 8 and 2/5 within the range). Per-cylinder spares
    with slips pushed to the zone end (4/6 with slips) cannot be expressed."""
    if m.sparing_scheme not in SUPPORTED_SPARING:
        raise ValueError(f"Sparing scheme used: {m.sparing_scheme} is not a DiskSim "
                         "layout_g1 scheme (0..10)")
    s = m.sparing_scheme
    ranged = s == SECTPERRANGE_SPARING or s in PER_CYLINDER
    counts = zone_lbn_counts(m)
    out = []
    for z, n in zip(m.zones, counts):
        d = {"first_cyl": z.first_cyl, "last_cyl": z.last_cyl,
             "sectors_per_track": z.sectors_per_track,
             "track_skew_sectors": float(z.track_skew),
             "cylinder_skew_sectors": float(z.cyl_skew),
             "first_sector_offset": float(z.first_block_offset),
             "lbas": int(n)}
        if s in PER_CYLINDER and s in SLIP_TO_END and z.slips and z.spares:
            raise ValueError(f"Sparing scheme used: {s} (spares per cylinder, slips pushed "
                             "to the zone end) with slips is not expressible by the HDD "
                             f"layout (zone from cylinder {z.first_cyl})")
        if s in PER_CYLINDER and z.empty_space_front:
            raise ValueError(f"Empty space at zone front: {z.empty_space_front} LBNs with "
                             f"sparing scheme {s} is not expressible (zone from cylinder "
                             f"{z.first_cyl})")
        if s == SECTPERTRACK_SPARING:
            front, unused = _per_track_unused(z, m.surfaces)
            if front:
                d["front_sectors"] = int(front)
            if unused:
                d["slipped"] = _runs(unused, 1)
            out.append(d)
            continue
        if z.empty_space_front:
            d["front_sectors"] = int(z.empty_space_front)
        if ranged and z.spares:
            d["spare_range_cylinders"] = 1 if s in PER_CYLINDER else int(m.range_size)
            d["spare_sectors_per_range"] = int(z.spares)
        if z.slips:
            if s == TRACK_SPARING:
                d["slipped"] = _runs([t * z.sectors_per_track for t in z.slips], z.sectors_per_track)
            else:
                d["slipped"] = _runs(z.slips, 1)
        out.append(d)
    return out


def drive_cylinders(m) -> int:
    """Number of cylinders, or the zones' extent where the last zone ends on (or past)
    that count: DiskSim's validation drives write "Number of cylinders" as the last
    cylinder's number (hp_c2490a: 2629 with zones up to cylinder 2629), and DiskSim
    lays the zones out regardless."""
    return max(int(m.cylinders), max(z.last_cyl for z in m.zones) + 1)


def to_hdd_dict(spec: DiskSpec) -> dict:
    """HDDConfig field -> value for one DiskSim drive (plain YAML-able types)."""
    m = spec.model
    p = spec.params
    dist, ms = seek_table(spec)
    rd_ms, wr_ms = transfer_ms_per_sector(spec)
    if rd_ms <= 0:
        raise ValueError(f"{spec.name}: no transfer time on the disk, bus or controller")
    seg_bytes = int(p["Segment size (in blks)"]) * 512
    contread = int(p.get("Buffer continuous read", 0))
    if contread not in CONTREAD_SCHEMES:
        raise ValueError(f"{spec.name}: Buffer continuous read {contread} not supported")
    ra_max = int(p.get("Maximum read-ahead (blks)", 0)) * 512 if contread else 0
    ra_min = min(int(p.get("Minimum read-ahead (blks)", 0)) * 512, ra_max)
    fast = int(p.get("Fast write level", 0))
    immed = {}
    for key in ("Immediate buffer read", "Immediate buffer write"):
        immed[key] = int(p.get(key, 0))
        if immed[key] not in (0, 1, 2):
            raise ValueError(f"{key}: {immed[key]} (DiskSim accepts 0, 1 or 2)")
    sched = p.get("Scheduler", {})
    policy = int(sched.get("Scheduling policy", 1)) if isinstance(sched, dict) else 1
    cylinders = drive_cylinders(m)
    # the full stroke from the seek curve where there is one (DiskSim's mech_g1 seeks by
    # the curve; "Full strobe seek time" is a label there), else Full strobe seek time
    full_ms = (float(np.interp(cylinders - 1, dist, ms)) if len(dist)
               else m.full_seek_ms)
    return {
        "rpm": float(m.rpm),
        "surfaces": int(m.surfaces),
        "zones": zone_dicts(m),
        "surface_order": SURFACE_ORDERS[m.mapping_scheme],
        "seek_single_cyl_ms": float(np.interp(1, dist, ms)),
        "seek_avg_ms": round(mean_seek_ms(dist, ms, m.cylinders), 4),
        "seek_full_stroke_ms": float(full_ms),
        "head_switch_ms": float(m.head_switch_ms),
        "write_settle_ms": float(m.write_settle_ms),
        "cylinders": int(cylinders),
        "capacity_bytes": int(m.block_count) * 512,
        "seek_curve_cyl": [int(x) for x in dist],
        "seek_curve_ms": [round(float(x), 6) for x in ms],
        "overhead_read_hit_ms": float(p["Read hit over. after read"]),
        "overhead_read_miss_ms": float(p["Read miss over. after read"]),
        "overhead_write_hit_ms": float(p["Write hit over. after read"]),
        "overhead_write_miss_ms": float(p["Write miss over. after read"]),
        "overhead_flush_ms": 0.0,
        "overhead_read_hit_after_write_ms": float(p["Read hit over. after write"]),
        "overhead_read_miss_after_write_ms": float(p["Read miss over. after write"]),
        "overhead_write_hit_after_write_ms": float(p["Write hit over. after write"]),
        "overhead_write_miss_after_write_ms": float(p["Write miss over. after write"]),
        "interface_mb_s": round(512 / (rd_ms * 1e-3) / 1e6, 6),
        "interface_write_mb_s": round(512 / (wr_ms * 1e-3) / 1e6, 6) if wr_ms != rd_ms else None,
        "read_watermark": float(p.get("High (read) water mark", 0.0)),
        "watermark_by_request": bool(int(p.get("Set watermark by reqsize", 1))),
        "overhead_reselect_ms": float(p.get("First reselect overhead", 0.0)),
        "overhead_data_prep_ms": float(p.get("Data preparation overhead", 0.0)),
        "overhead_read_complete_ms": float(p.get("Read completion overhead", 0.0)),
        "overhead_write_complete_ms": float(p.get("Write completion overhead", 0.0)),
        "min_seek_ms": float(p.get("Minimum seek delay", 0.0)),
        "cache_segments": int(p["Number of buffer segments"]),
        "cache_segment_bytes": seg_bytes,
        "read_ahead_max_bytes": min(ra_max, seg_bytes),
        "read_ahead_min_bytes": ra_min,
        "read_ahead_scheme": CONTREAD_SCHEMES[contread],
        "read_ahead_window_hits": bool(int(p.get("Allow almost read hits", 0))),
        "read_ahead_on_idle_hit": bool(int(p.get("Read-ahead on idle hit", 0))),
        "read_any_free_blocks": bool(int(p.get("Read any free blocks", 0))),
        "read_zero_latency": bool(immed["Immediate buffer read"]),
        "write_zero_latency": bool(immed["Immediate buffer write"]),
        "combine_seq_writes": bool(int(p.get("Combine seq writes", 0))),
        "read_hits_on_write_data": bool(int(p.get("Allow read hits on write data", 1))),
        "write_cache": fast >= 1,
        "write_cache_bytes": int(p.get("Maximum number of write segments", 1)) * seg_bytes,
        "queue_depth": max(1, int(p.get("Max queue length", 1))),
        "scheduler": "fifo" if policy == 1 else "sptf",
        "sptf_age_limit_ms": 0.0,
    }


def unmapped(spec: DiskSpec) -> list[str]:
    """DiskSim parameters of this drive that the HDD config cannot carry (non-default)."""
    m = spec.model
    p = spec.params
    out = []
    if any(z.defects for z in m.zones):
        out.append(f"remapped defects: {sum(len(z.defects) for z in m.zones)} (their sectors "
                   "are read in place)")
    if int(p.get("Fast write level", 0)) == 1:
        out.append("Fast write level 1: write-back only while the write appends to the dirty "
                   "segment or nothing else is queued (imported as write_cache: true; the "
                   "difference shows only with a queue depth above 1)")
    if (int(p.get("Buffer continuous read", 0)) in (1, 2, 3) and int(p.get("Read-ahead over requested", 0)) != 1
            and not int(p.get("Maximum read-ahead (blks)", 0))):
        out.append("Read-ahead over requested with a maximum read-ahead of 0 (read-ahead "
                   "sized by the segment)")
    if float(p.get("Low (write) water mark", 0.0)):
        out.append(f"Low (write) water mark = {p['Low (write) water mark']} (only matters "
                   "for writes larger than a segment; write data is taken in whole)")
    for key in ("Read disconnect afterread", "Read disconnect afterwrite",
                "Write disconnect overhead", "Other reselect overhead"):
        if float(p.get(key, 0.0)):
            out.append(f"{key} = {p[key]} ms (a disconnect message; it does not delay the "
                       "drive at queue depth 1)")
    if int(p.get("Extra write disconnect", 0)):
        out.append("Extra write disconnect = 1 and its Extradisc overheads (DiskSim 4.0 "
                   "never sets the flag: disksim_diskcache.c has it commented out)")
    for key in ("Per-request overhead time",):
        if float(p.get(key, 0.0)):
            out.append(f"{key} = {p[key]} ms")
    if int(p.get("Use separate write segment", 0)):
        out.append("Use separate write segment = 1 (DiskSim 4.0 never initialises the "
                   "dedicated segment: writes share the segments)")
    return out
