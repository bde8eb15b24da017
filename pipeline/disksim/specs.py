"""DiskSim drive descriptions: the ``disksim_disk`` block of ``NAME.diskspecs`` and the
``dm_disk`` block of the ``.model`` file it sources, the ``.seek`` curve, the HPL seek
formula and the bus/controller transfer times of the ``.parv`` topology.

- ``NAME.diskspecs``: controller overheads in ms ("Read hit over. after read",
  "Write miss over. after write", ...), "Bulk sector transfer time" (ms per 512-byte
  sector over the interface), cache segments and read-ahead, "Fast write level"
  (write-behind), "Max queue length"; its ``Model`` key sources the ``.model`` file.
- ``NAME.model``: surfaces, cylinders, block count, the mechanical model (RPM, head
  switch, write settle, seek type and curve) and the layout (zones with first/last
  cylinder, blocks per track, skews in sectors, spares, slipped sectors, "Empty space
  at zone front").
- ``NAME.seek``: the extracted seek curve, ``distance, ms`` per line.
- ``NAME.parv``: the whole simulated system; buses and controller carry their own
  per-sector transfer times (DiskSim uses the slowest of disk, bus and controller).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .libparam import ParamBlock, _first_block, parse_params


@dataclass(frozen=True)
class Zone:
    """One dm_layout_g1 zone (band). Skews and offsets are in sectors."""

    first_cyl: int
    last_cyl: int
    sectors_per_track: int
    first_block_offset: float
    empty_space_front: int
    track_skew: float
    cyl_skew: float
    spares: int
    slips: tuple[int, ...] = ()
    defects: tuple[int, ...] = ()

    @property
    def cylinders(self) -> int:
        return self.last_cyl - self.first_cyl + 1


@dataclass(frozen=True)
class DiskModel:
    """The ``dm_disk`` block of a ``.model`` file."""

    name: str
    surfaces: int
    cylinders: int
    block_count: int
    rpm: float
    head_switch_ms: float
    write_settle_ms: float
    seek_type: str
    single_cyl_seek_ms: float
    full_seek_ms: float
    avg_seek_ms: float | None
    seek_curve_file: str | None
    hpl_seek: tuple[float, ...]
    first_ten_seeks_ms: tuple[float, ...]
    mapping_scheme: int
    sparing_scheme: int
    range_size: int
    zones: tuple[Zone, ...]
    raw: ParamBlock = field(repr=False, compare=False, default_factory=ParamBlock)


@dataclass(frozen=True)
class DiskSpec:
    """A drive: ``disksim_disk`` block, its model, seek curve and bus transfer times."""

    name: str
    params: ParamBlock
    model: DiskModel
    seek_dist_cyl: np.ndarray | None
    seek_ms: np.ndarray | None
    bus_read_ms_per_sector: float = 0.0
    bus_write_ms_per_sector: float = 0.0
    ctlr_ms_per_sector: float = 0.0

    def get(self, key: str, default=None):
        return self.params.get(key, default)


def _num_list(v) -> tuple:
    if v is None or v == "" or v == []:
        return ()
    if isinstance(v, list):
        return tuple(x for x in v if isinstance(x, (int, float)))
    return ()


def _parse_zone(z: ParamBlock) -> Zone:
    return Zone(
        first_cyl=int(z["First cylinder number"]),
        last_cyl=int(z["Last cylinder number"]),
        sectors_per_track=int(z["Blocks per track"]),
        first_block_offset=float(z.get("Offset of first block", 0.0)),
        empty_space_front=int(z.get("Empty space at zone front", 0)),
        track_skew=float(z.get("Skew for track switch", 0.0)),
        cyl_skew=float(z.get("Skew for cylinder switch", 0.0)),
        spares=int(z.get("Number of spares", 0)),
        slips=tuple(int(x) for x in _num_list(z.get("slips"))),
        defects=tuple(int(x) for x in _num_list(z.get("defects"))),
    )


def parse_model(text: str) -> DiskModel:
    """Parse the ``dm_disk`` block of a ``.model`` file."""
    name, blk = _first_block(parse_params(text), "dm_disk")
    mech = blk["Mechanical Model"]
    lay = blk["Layout Model"]
    if getattr(mech, "type", "") != "dm_mech_g1" or getattr(lay, "type", "") != "dm_layout_g1":
        raise ValueError(f"{name}: only dm_mech_g1 / dm_layout_g1 models are supported")
    if mech.get("Access time type", "trackSwitchPlusRotation") != "trackSwitchPlusRotation":
        raise ValueError(f"{name}: access time type {mech.get('Access time type')!r} unsupported")
    if float(mech.get("Percent error in rpms", 0.0)) != 0.0:
        raise ValueError(f"{name}: 'Percent error in rpms' != 0 is not supported")
    zones = tuple(_parse_zone(z) for z in lay["Zones"] if isinstance(z, dict))
    curve = mech.get("Full seek curve")
    return DiskModel(
        name=name.split(None, 1)[1] if " " in name else name,
        surfaces=int(blk["Number of data surfaces"]),
        cylinders=int(blk["Number of cylinders"]),
        block_count=int(blk["Block count"]),
        rpm=float(mech["Rotation speed (in rpms)"]),
        head_switch_ms=float(mech.get("Head switch time", 0.0)),
        write_settle_ms=float(mech.get("Add. write settling delay", 0.0)),
        seek_type=str(mech.get("Seek type", "extracted")),
        single_cyl_seek_ms=float(mech.get("Single cylinder seek time", 0.0)),
        full_seek_ms=float(mech.get("Full strobe seek time", 0.0)),
        avg_seek_ms=(float(mech["Average seek time"]) if "Average seek time" in mech else None),
        seek_curve_file=str(curve) if curve else None,
        hpl_seek=tuple(float(x) for x in _num_list(mech.get("HPL seek equation values"))),
        first_ten_seeks_ms=tuple(float(x) for x in _num_list(mech.get("First ten seek times"))),
        mapping_scheme=int(lay.get("LBN-to-PBN mapping scheme", 0)),
        sparing_scheme=int(lay.get("Sparing scheme used", 0)),
        range_size=int(lay.get("Rangesize for sparing", 1)),
        zones=zones,
        raw=blk,
    )


def parse_seek(text: str) -> tuple[np.ndarray, np.ndarray]:
    """A ``.seek`` file -> (distance_cyl int64, seek_ms float64), in file order."""
    d: list[int] = []
    t: list[float] = []
    declared = None
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        head = re.match(r"Seek distances measured:\s*(\d+)$", line)
        if head:
            declared = int(head.group(1))
            continue
        try:
            a, b = re.split(r"[,\s]+", line, maxsplit=1)
            d.append(int(a))
            t.append(float(b.strip().rstrip(",")))
        except ValueError:
            raise ValueError(f"seek curve line {ln}: expected 'distance, ms', got {line!r}") from None
    if declared is not None and declared != len(d):
        raise ValueError(f"seek curve: {len(d)} seeks, the header says {declared}")
    dist = np.asarray(d, dtype=np.int64)
    if dist.size == 0 or np.any(np.diff(dist) <= 0):
        raise ValueError("seek curve: distances must be present and increasing")
    return dist, np.asarray(t, dtype=np.float64)


def hpl_seek_ms(model: DiskModel, dist: np.ndarray) -> np.ndarray:
    """Seek time of the HPL formula (Ruemmler & Wilkes 1994) with DiskSim's options.

    ``hpl`` (type 'hpl'): d == 1 -> single-cylinder time (unless V6 == -1),
    d < V1 -> V2 + V3*sqrt(d), else V4 + V5*d. ``hplplus10`` uses the first ten
    measured seek times for d <= 10.
    """
    v = model.hpl_seek
    if len(v) != 6:
        raise ValueError(f"{model.name}: HPL seek needs 6 values, got {len(v)}")
    d = np.asarray(dist, dtype=np.float64)
    out = np.where(d < v[0], v[1] + v[2] * np.sqrt(d), v[3] + v[4] * d)
    if model.seek_type == "hplplus10":
        ten = np.asarray(model.first_ten_seeks_ms)
        small = (d >= 1) & (d <= 10)
        out = np.where(small, ten[np.clip(d.astype(np.int64) - 1, 0, 9)], out)
    elif v[5] != -1:
        out = np.where(d == 1, model.single_cyl_seek_ms, out)
    return np.where(d == 0, 0.0, out)


def _bus_times(parv_text: str, disk_name: str) -> tuple[float, float, float]:
    """(bus read, bus write, controller) ms per sector on the path to the disk.

    The topology nests driver -> bus -> controller -> bus -> disk; every bus and
    controller instance on the disk's path contributes its per-sector time and the
    slowest one counts (disksim_disk.c: disk_get_blktranstime).
    """
    items = parse_params(parv_text)
    blocks = {it[1].split()[-1]: it[2] for it in items if it[0] == "block"}
    inst = {}
    for it in items:
        if it[0] == "instantiate":
            for n in it[1]:
                inst[n] = it[2]
    topo = next((it[1] for it in items if it[0] == "topology"), None)
    path: list[tuple[str, str]] = []

    def walk(node, trail):
        if not isinstance(node, dict):
            return False
        typ, _, inst_name = node["type"].partition(" ")
        trail = trail + [(typ, inst_name.strip())]
        if typ == "disksim_disk":
            path.extend(trail)
            return True
        return any(walk(ch, trail) for ch in node["children"])

    if topo is not None:
        walk(topo, [])
    rd = wr = ct = 0.0
    for typ, name in path:
        blk = blocks.get(inst.get(name, ""), {})
        if typ == "disksim_bus":
            rd = max(rd, float(blk.get("Read block transfer time", 0.0)))
            wr = max(wr, float(blk.get("Write block transfer time", 0.0)))
        elif typ == "disksim_ctlr":
            ct = max(ct, float(blk.get("Bulk sector transfer time", 0.0)))
    return rd, wr, ct


def read_diskspecs(path: str | Path) -> DiskSpec:
    """Read ``NAME.diskspecs`` and the ``.model`` / ``.seek`` / ``.parv`` beside it."""
    path = Path(path)
    items = parse_params(path.read_text())
    name, blk = _first_block(items, "disksim_disk")
    src = blk.get("Model")
    if not (isinstance(src, str) and src.startswith("source ")):
        raise ValueError(f"{path}: 'Model = source FILE' expected")
    model_path = path.parent / src.split(None, 1)[1]
    model = parse_model(model_path.read_text())
    dist = ms = None
    if model.seek_type == "extracted":
        if not model.seek_curve_file:
            raise ValueError(f"{model_path}: extracted seek type without 'Full seek curve'")
        dist, ms = parse_seek((path.parent / model.seek_curve_file).read_text())
    elif model.seek_type not in ("hpl", "hplplus10"):
        raise ValueError(f"{model_path}: seek type {model.seek_type!r} not supported")
    rd = wr = ct = 0.0
    parv = path.with_suffix(".parv")
    if parv.exists():
        rd, wr, ct = _bus_times(parv.read_text(), name.split()[-1])
    return DiskSpec(name=name.split()[-1], params=blk, model=model, seek_dist_cyl=dist,
                    seek_ms=ms, bus_read_ms_per_sector=rd, bus_write_ms_per_sector=wr,
                    ctlr_ms_per_sector=ct)


def rotation_ns(model: DiskModel) -> float:
    return 60e9 / model.rpm
