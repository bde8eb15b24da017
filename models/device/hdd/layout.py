"""HDD layout: where each LBA lies on the platters, compiled over the state vector.

Modelled (DiskSim's layout_g1, the ``ltop`` / track-boundary functions of
diskmodel/layout_g1.c): zones of cylinders with a fixed number of sectors per
track; LBAs fill every surface of a cylinder before the next cylinder, optionally
with the surface order reversed on odd cylinders (serpentine, DiskSim mapping schemes
1 and 2); per zone, reserved sectors at the zone front ("Empty space at zone front"),
spare sectors at the end of every range of cylinders (sparing scheme 8; the zone is
one range otherwise, its unused tail being the zone's spare space) and slipped runs
of physical sectors that hold no LBA (defects slipped over: single sectors, or whole
tracks for track sparing) - each run pushes the following LBAs of its range on by
its length. The angle of a sector: the zone's first-sector offset plus one track skew
per track switch and one cylinder skew per cylinder switch from the zone start.

Deliberately not modelled: remapped defects (a sector relocated to a spare elsewhere),
and slips that shift the skew of later tracks (DiskSim does so only for its
sectors-per-cylinder/-track schemes, none of which the validation drives use).

``locate`` keeps its result (cylinder, head, sector, sectors per track, angle);
``track_run`` adds how many LBAs of a transfer lie on the track and how many
sectors the head passes over for them (slipped sectors inside the run included).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .state import (L_CUM, L_LEN, L_START, L_T, LCOLS, O_EXT, O_ZONE, P_NSECT, P_NZONE,
                        P_SURF, W_FRONT, W_NSLIP, W_RLBA, W_RPHYS, W_SLIP0, WCOLS, X_O_SLIP,
                        X_O_ZSP, X_SERP, Z_CSKEW, Z_CYL0, Z_END, Z_LBA0, Z_OFF, Z_SPT, Z_TSKEW,
                        ZCOLS)


# -- tables (plain numpy, once per drive) ----------------------------------------------
def zone_lbas(z, surfaces: int) -> int:
    """LBAs a zone holds: its ``lbas`` if given, else every sector that is not at the
    front or a range spare, less the slipped sectors when the zone is one range
    (with ranges, slips are absorbed by the range's spares)."""
    total = (z.last_cyl - z.first_cyl + 1) * surfaces * z.sectors_per_track
    lbas = int(getattr(z, "lbas", 0) or 0)
    if lbas:
        return lbas
    rc = int(getattr(z, "spare_range_cylinders", 0) or 0)
    spares = int(getattr(z, "spare_sectors_per_range", 0) or 0)
    ranges = (z.last_cyl - z.first_cyl + 1) // rc if rc else 0
    slipped = 0 if rc else sum(int(n) for _, n in getattr(z, "slipped", ()) or ())
    return total - int(getattr(z, "front_sectors", 0) or 0) - ranges * spares - slipped


def zone_tables(zones, surfaces: int, capacity_sectors: int):
    """(zone rows (n, ZCOLS), sparing rows (n, WCOLS), slip rows (m, LCOLS)) for the
    zones that hold LBAs below ``capacity_sectors``."""
    rows, spare_rows, slip_rows = [], [], []
    lba = 0
    for z in zones:
        n = zone_lbas(z, surfaces)
        rows.append((lba, z.first_cyl, z.last_cyl, z.sectors_per_track, z.track_skew_sectors,
                     z.cylinder_skew_sectors, z.first_sector_offset,
                     min(lba + n, capacity_sectors)))
        rc = int(getattr(z, "spare_range_cylinders", 0) or 0)
        rphys = rc * surfaces * z.sectors_per_track if rc else 0
        rlba = rphys - int(getattr(z, "spare_sectors_per_range", 0) or 0) if rc else 0
        slips = sorted((int(s), int(k)) for s, k in (getattr(z, "slipped", ()) or ()))
        spare_rows.append((int(getattr(z, "front_sectors", 0) or 0), rlba, rphys,
                           len(slip_rows), len(slips)))
        cum, base_prev = 0, None
        for s, k in slips:
            base = (s // rphys) * rphys if rphys else 0
            if base != base_prev:
                cum, base_prev = 0, base
            slip_rows.append((s, k, s - base - cum, cum))
            cum += k
        lba += n
        if lba >= capacity_sectors:
            break
    return (np.array(rows, dtype=np.float64).reshape(-1, ZCOLS),
            np.array(spare_rows, dtype=np.float64).reshape(-1, WCOLS),
            np.array(slip_rows, dtype=np.float64).reshape(-1, LCOLS))


def _skew_sectors(switch_ms: float, spt: int, rev_ms: float) -> int:
    """Sectors that pass under the head while it switches track: the layout skew that
    lets a sequential transfer continue on the next track without losing a turn."""
    return math.ceil(switch_ms / rev_ms * spt) + 1


def synthetic_zones(n_zones: int, cylinders: int, outer_spt: int, inner_spt: int,
                    head_switch_ms: float, seek_single_cyl_ms: float,
                    rpm: float) -> list[dict]:
    """``n_zones`` zones of equal cylinder count, sectors per track falling linearly
    from ``outer_spt`` to ``inner_spt`` (constant linear density: track length grows
    with radius and the band is uniform in radius), skews set from the switch times.
    Returns ``HDDZone`` keyword dicts (``HDDConfig`` converts them)."""
    rev_ms = 60e3 / rpm
    zones = []
    for i in range(n_zones):
        c0 = cylinders * i // n_zones
        c1 = cylinders * (i + 1) // n_zones - 1
        spt = round(outer_spt + (inner_spt - outer_spt) * i / max(1, n_zones - 1))
        zones.append(dict(first_cyl=c0, last_cyl=c1, sectors_per_track=spt,
                          track_skew_sectors=_skew_sectors(head_switch_ms, spt, rev_ms),
                          cylinder_skew_sectors=_skew_sectors(seek_single_cyl_ms, spt, rev_ms)))
    return zones


def spt_for_rate(rate_mb_s: float, switch_ms: float, rpm: float) -> int:
    """Sectors per track whose *sustained* rate (a track per revolution plus one track
    switch, covered by the skew) equals a data sheet's sustained MB/s."""
    rev_ms = 60e3 / rpm
    spt = rate_mb_s * 1e6 * rev_ms / 1e3 / 512
    for _ in range(20):
        skew = _skew_sectors(switch_ms, round(spt), rev_ms)
        spt = rate_mb_s * 1e6 * rev_ms / 1e3 / 512 * (spt + skew) / spt
    return round(spt)


# -- compiled mapping ------------------------------------------------------------------
@numba.njit(cache=True)
def zone_index(S, lba):
    oz = int(S[O_ZONE])
    lo = 0
    hi = int(S[P_NZONE]) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if S[oz + mid * ZCOLS + Z_LBA0] <= lba:
            lo = mid
        else:
            hi = mid - 1
    return lo


@numba.njit(cache=True)
def _slip_bounds(S, o, n, base, rphys):
    """Slip rows [lo, hi) of the range starting at physical sector ``base``."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if S[o + mid * LCOLS + L_START] < base:
            lo = mid + 1
        else:
            hi = mid
    if rphys <= 0.0:
        return lo, n
    a = lo
    hi = n
    while a < hi:
        mid = (a + hi) // 2
        if S[o + mid * LCOLS + L_START] < base + rphys:
            a = mid + 1
        else:
            hi = mid
    return lo, a


@numba.njit(cache=True)
def phys_of(S, zi, rel):
    """Zone-relative physical sector (cylinder * surfaces * spt + track * spt + sector,
    counted from the zone's first cylinder) of the zone's LBA number ``rel``."""
    e = int(S[O_EXT])
    w = int(S[e + X_O_ZSP]) + zi * WCOLS
    p = rel + S[w + W_FRONT]
    rl = S[w + W_RLBA]
    base = 0.0
    rphys = 0.0
    if rl > 0.0:
        rng = math.floor(p / rl)
        p -= rng * rl
        rphys = S[w + W_RPHYS]
        base = rng * rphys
    ns = int(S[w + W_NSLIP])
    if ns == 0:
        return base + p
    o = int(S[e + X_O_SLIP]) + int(S[w + W_SLIP0]) * LCOLS
    lo, hi = _slip_bounds(S, o, ns, base, rphys)
    # runs applied: T <= p (T rises with the row within a range)
    a = lo
    b = hi
    while a < b:
        mid = (a + b) // 2
        if S[o + mid * LCOLS + L_T] <= p:
            a = mid + 1
        else:
            b = mid
    if a == lo:
        return base + p
    k = o + (a - 1) * LCOLS
    return base + p + S[k + L_CUM] + S[k + L_LEN]


@numba.njit(cache=True)
def lba_at(S, zi, phys):
    """Zone-relative number of the first LBA at or after physical sector ``phys`` of
    zone ``zi`` (the zone's LBA count if none)."""
    e = int(S[O_EXT])
    w = int(S[e + X_O_ZSP]) + zi * WCOLS
    r = int(S[O_ZONE]) + zi * ZCOLS
    count = S[r + Z_END] - S[r + Z_LBA0]
    rl = S[w + W_RLBA]
    rng = 0.0
    base = 0.0
    rphys = 0.0
    if rl > 0.0:
        rphys = S[w + W_RPHYS]
        rng = math.floor(phys / rphys)
        base = rng * rphys
    q = phys - base
    ns = int(S[w + W_NSLIP])
    if ns > 0:
        o = int(S[e + X_O_SLIP]) + int(S[w + W_SLIP0]) * LCOLS
        lo, hi = _slip_bounds(S, o, ns, base, rphys)
        a = lo
        b = hi
        while a < b:      # last run starting before phys
            mid = (a + b) // 2
            if S[o + mid * LCOLS + L_START] < phys:
                a = mid + 1
            else:
                b = mid
        if a > lo:
            k = o + (a - 1) * LCOLS
            q -= S[k + L_CUM] + min(S[k + L_LEN], phys - S[k + L_START])
    if rl > 0.0 and q > rl:
        q = rl
    rel = rng * rl + q - S[w + W_FRONT]
    return min(max(rel, 0.0), count)


@numba.njit(cache=True)
def locate(S, lba):
    """LBA -> (cylinder, head, sector in track, sectors per track, angle in [0,1))."""
    zi = zone_index(S, lba)
    r = int(S[O_ZONE]) + zi * ZCOLS
    spt = S[r + Z_SPT]
    surf = S[P_SURF]
    phys = phys_of(S, zi, lba - S[r + Z_LBA0])
    track = math.floor(phys / spt)
    sector = phys - track * spt
    ci = math.floor(track / surf)
    head = track - ci * surf
    tskew = S[r + Z_TSKEW]
    skew = S[r + Z_OFF] + ci * ((surf - 1.0) * tskew + S[r + Z_CSKEW]) + head * tskew
    ang = ((sector + skew) % spt) / spt
    cyl = S[r + Z_CYL0] + ci
    serp = S[int(S[O_EXT]) + X_SERP]
    if (serp == 1.0 and ci % 2.0 == 1.0) or (serp == 2.0 and cyl % 2.0 == 1.0):
        head = surf - 1.0 - head
    return cyl, head, sector, spt, ang


@numba.njit(cache=True)
def track_run(S, lba, n):
    """A transfer of ``n`` LBAs from ``lba`` on the track holding ``lba``:
    (cylinder, head, sector, sectors per track, angle, LBAs on this track, sectors
    the head passes over for them)."""
    c, h, s, spt, ang = locate(S, lba)
    zi = zone_index(S, lba)
    r = int(S[O_ZONE]) + zi * ZCOLS
    w = int(S[int(S[O_EXT]) + X_O_ZSP]) + zi * WCOLS
    left = spt - s
    if S[w + W_NSLIP] == 0.0 and S[w + W_RLBA] == 0.0:
        k = min(n, left, S[r + Z_END] - lba)
        return c, h, s, spt, ang, k, k
    rel = lba - S[r + Z_LBA0]
    phys = phys_of(S, zi, rel)
    end = lba_at(S, zi, phys + left) + S[r + Z_LBA0]
    k = min(n, end - lba)
    if k <= 1.0:
        return c, h, s, spt, ang, k, k
    span = phys_of(S, zi, rel + k - 1.0) - phys + 1.0
    return c, h, s, spt, ang, k, span


@numba.njit(cache=True)
def track_span(S, lba):
    """(first LBA, end LBA) of the track holding ``lba``."""
    zi = zone_index(S, lba)
    r = int(S[O_ZONE]) + zi * ZCOLS
    spt = S[r + Z_SPT]
    phys = phys_of(S, zi, lba - S[r + Z_LBA0])
    t0 = math.floor(phys / spt) * spt
    first = lba_at(S, zi, t0) + S[r + Z_LBA0]
    end = lba_at(S, zi, t0 + spt) + S[r + Z_LBA0]
    return min(first, lba), min(max(end, lba + 1.0), S[P_NSECT])


@numba.njit(cache=True)
def cylinder_end(S, lba):
    """First LBA after the cylinder holding ``lba``."""
    zi = zone_index(S, lba)
    r = int(S[O_ZONE]) + zi * ZCOLS
    per_cyl = S[r + Z_SPT] * S[P_SURF]
    phys = phys_of(S, zi, lba - S[r + Z_LBA0])
    end = lba_at(S, zi, (math.floor(phys / per_cyl) + 1.0) * per_cyl) + S[r + Z_LBA0]
    return min(max(end, lba + 1.0), S[P_NSECT])
