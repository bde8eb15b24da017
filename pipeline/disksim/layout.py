"""DiskSim's layout_g1 LBN -> physical block mapping (diskmodel/layout_g1.c,
layout_g1_load.c): sparing schemes 1 (spare tracks at the end of each zone), 7
(slipped sectors pushed to the zone end), 8 (spare sectors at the end of each range of
cylinders) and 9 (spare sectors at the end of the zone); mapping scheme 1 reverses the
surface order on odd cylinders of a zone, 2 on odd cylinders. ``lbn_to_pbn`` and
``pbn_angle_sectors`` are the reference the HDD model's layout is checked against.
"""
from __future__ import annotations

import numpy as np

from .specs import DiskModel

#: DiskSim sparing schemes (layout_g1.h)
TRACK_SPARING, SECTATEND_SPARING, SECTPERRANGE_SPARING, SECTSPERZONE_SPARING = 1, 7, 8, 9
SUPPORTED_SPARING = (0, TRACK_SPARING, SECTATEND_SPARING, SECTPERRANGE_SPARING,
                     SECTSPERZONE_SPARING)


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
        elif s == SECTATEND_SPARING:
            n -= len(z.slips)
        elif s == SECTPERRANGE_SPARING:
            n -= z.spares * (z.cylinders // model.range_size)
        elif s == SECTSPERZONE_SPARING:
            n -= z.spares
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
    if s == TRACK_SPARING:
        track = rel // spt
        for sl in z.slips:
            if sl <= track:
                track += 1
        cyl, head, sector = track // model.surfaces, track % model.surfaces, rel % spt
    elif s == SECTPERRANGE_SPARING:
        per_range = per_cyl * model.range_size
        lbns_per_range = per_range - z.spares
        rng, rel = divmod(rel, lbns_per_range)
        first = rng * per_range
        slips = 0
        for sl in z.slips:
            if sl >= first and sl - first <= rel + slips:
                slips += 1
        rel += slips
        cyl = rng * model.range_size + rel // per_cyl
        head, sector = divmod(rel % per_cyl, spt)
    elif s == SECTATEND_SPARING:
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
