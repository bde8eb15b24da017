"""DiskSim's layout_g1 LBN -> physical block mapping (diskmodel/layout_g1.c,
layout_g1_load.c), every sparing scheme of layout_g1.h: 0 (none), 1 (spare tracks at
the end of each zone), 2 (spare sectors at the end of each cylinder), 3 (spare sectors
at the end of each track), 4 (2, slips pushed to the zone end), 5 / 6 (2 / 4 with the
spares at the cylinder's front: DiskSim's ltop maps them as 2 / 4, only its ptol
differs), 7 (slipped sectors pushed to the zone end), 8 (spare sectors at the end of
each range of cylinders), 9 (spare sectors at the end of the zone) and 10 (9, slips not
taken from the spares); mapping scheme 1 reverses the surface order on odd cylinders
of a zone, 2 on odd cylinders. ``lbn_to_pbn`` and ``pbn_angle_sectors`` are the
reference the HDD model's layout is checked against.

"Empty space at zone front" counts LBNs, as DiskSim adds it to the zone-relative LBN
(``lbn += deadspace``): with per-track or per-cylinder spares it spans
``deadspace / (LBNs per track or cylinder)`` tracks or cylinders.

One DiskSim quirk is not followed: for schemes 2/4/5/6 its ``g1_ltop_sectpercylspare``
wraps the last LBNs of a cylinder that has slips onto the next cylinder's first
sectors (two LBNs on one sector); here they stay in that cylinder's spare sectors,
where its ``ptol`` and the range scheme (8) put them.
"""
from __future__ import annotations

import numpy as np

from .specs import DiskModel

#: DiskSim sparing schemes (layout_g1.h)
NO_SPARING, TRACK_SPARING, SECTPERCYL_SPARING, SECTPERTRACK_SPARING = 0, 1, 2, 3
SECTPERCYL_SPARING_SLIPTOEND, SECTPERCYL_SPARING_ATFRONT = 4, 5
SECTPERCYL_SPARING_ATFRONT_SLIPTOEND, SECTATEND_SPARING, SECTPERRANGE_SPARING = 6, 7, 8
SECTSPERZONE_SPARING, SECTSPERZONE_SPARING_SLIPTOEND = 9, 10
SUPPORTED_SPARING = tuple(range(11))
PER_CYLINDER = (SECTPERCYL_SPARING, SECTPERCYL_SPARING_SLIPTOEND, SECTPERCYL_SPARING_ATFRONT,
                SECTPERCYL_SPARING_ATFRONT_SLIPTOEND)
SLIP_TO_END = (SECTPERCYL_SPARING_SLIPTOEND, SECTPERCYL_SPARING_ATFRONT_SLIPTOEND,
               SECTATEND_SPARING)


def range_cylinders(model: DiskModel) -> int:
    """Cylinders per sparing range: 1 for the per-cylinder schemes, Rangesize for 8."""
    return 1 if model.sparing_scheme in PER_CYLINDER else int(model.range_size)


def zone_lbn_counts(model: DiskModel) -> np.ndarray:
    """Logical blocks in each zone (layout_g1_load.c: compute_blksinband)."""
    out = []
    for z in model.zones:
        n = z.cylinders * z.sectors_per_track * model.surfaces - z.empty_space_front
        s = model.sparing_scheme
        if s == 0:
            pass
        elif s == TRACK_SPARING:
            n -= z.spares * z.sectors_per_track
        elif s == SECTPERTRACK_SPARING:
            n -= z.spares * z.cylinders * model.surfaces
        elif s == SECTATEND_SPARING:
            n -= len(z.slips)
        elif s == SECTSPERZONE_SPARING:
            n -= z.spares
        elif s == SECTSPERZONE_SPARING_SLIPTOEND:
            n -= z.spares + len(z.slips)
        elif s in PER_CYLINDER:
            n -= z.spares * z.cylinders + (len(z.slips) if s in SLIP_TO_END else 0)
        elif s == SECTPERRANGE_SPARING:
            n -= z.spares * (z.cylinders // model.range_size)
        else:
            raise ValueError(f"{model.name}: sparing scheme {s} not supported")
        out.append(n)
    return np.asarray(out, dtype=np.int64)


def lbn_to_pbn(model: DiskModel, lbn: int) -> tuple[int, int, int]:
    """(cylinder, surface, sector-on-track) of logical block ``lbn``.

    Follows DiskSim layout_g1 ``ltop`` for the sparing scheme in use, including the
    slipped sectors (tracks for scheme 1) listed per zone.
    """
    counts = zone_lbn_counts(model)
    starts = np.concatenate(([0], np.cumsum(counts)))
    zi = int(np.searchsorted(starts, lbn, side="right") - 1)
    if lbn < 0 or zi >= len(model.zones):
        raise ValueError(f"lbn {lbn} outside the drive (0..{starts[-1] - 1})")
    z = model.zones[zi]
    spt = z.sectors_per_track
    per_cyl = spt * model.surfaces
    rel = int(lbn - starts[zi]) + z.empty_space_front
    s = model.sparing_scheme
    if s in (SECTPERCYL_SPARING_SLIPTOEND, SECTPERCYL_SPARING_ATFRONT_SLIPTOEND) and z.slips \
            and z.spares:
        raise ValueError(f"{model.name}: Sparing scheme used = {s} with slips (per-cylinder "
                         "spares and slips pushed to the zone end) is not expressible")
    if s == TRACK_SPARING:
        track = rel // spt
        for sl in z.slips:
            if sl <= track:
                track += 1
        cyl, head, sector = track // model.surfaces, track % model.surfaces, rel % spt
    elif s == SECTPERTRACK_SPARING:
        per_track = spt - z.spares
        track, r = divmod(rel, per_track)
        first = track * spt
        for sl in sorted(z.slips):
            if sl >= first and sl - first <= r:
                r += 1
        cyl, head, sector = track // model.surfaces, track % model.surfaces, r
    elif s == SECTPERRANGE_SPARING or (s in PER_CYLINDER and not (s in SLIP_TO_END and z.slips)):
        per_range = per_cyl * range_cylinders(model)
        lbns_per_range = per_range - z.spares
        rng, rel = divmod(rel, lbns_per_range)
        first = rng * per_range
        slips = 0
        for sl in z.slips:
            if sl >= first and sl - first <= rel + slips:
                slips += 1
        rel += slips
        cyl = rng * range_cylinders(model) + rel // per_cyl
        head, sector = divmod(rel % per_cyl, spt)
    elif s in SLIP_TO_END:
        # sect-per-cylinder mapping with zero spares per cylinder, slips pushed on
        # towards the end of the zone (issliptoend): every slip before this cylinder
        # and the ones on it up to this block shift the block by one.
        cyl, r = divmod(rel, per_cyl)
        slips = 0
        first = cyl * per_cyl
        for sl in z.slips:
            if sl // per_cyl < cyl or (sl >= first and sl - first <= r + slips):
                slips += 1
        r += slips
        cyl += r // per_cyl
        head, sector = divmod(r % per_cyl, spt)
    else:  # 0 / 9: zone-wide slipping
        slips = 0
        for sl in z.slips:
            if sl <= rel + slips:
                slips += 1
        rel += slips
        cyl, r = divmod(rel, per_cyl)
        head, sector = divmod(r, spt)
    if model.mapping_scheme == 1 and cyl % 2 == 1:
        head = model.surfaces - head - 1
    elif model.mapping_scheme == 2 and (cyl + z.first_cyl) % 2 == 1:
        head = model.surfaces - head - 1
    return int(cyl + z.first_cyl), int(head), int(sector)


def pbn_angle_sectors(model: DiskModel, cyl: int, head: int, sector: int) -> float:
    """Angle (in sectors of that zone, mod sectors per track) where a block starts.

    layout_g1 ``map_pbn_skew``: first-block offset + track switches * track skew +
    cylinder switches * cylinder skew (counted from the zone's first cylinder; a
    serpentine layout counts the surface in its logical order) + sector.
    """
    z = next(z for z in model.zones if z.first_cyl <= cyl <= z.last_cyl)
    c = cyl - z.first_cyl
    h = head
    if model.mapping_scheme == 1 and c % 2 == 1:
        h = model.surfaces - head - 1
    elif model.mapping_scheme == 2 and cyl % 2 == 1:
        h = model.surfaces - head - 1
    switches = h + (model.surfaces - 1) * c
    a = z.first_block_offset + switches * z.track_skew + c * z.cyl_skew + sector
    return a % z.sectors_per_track
