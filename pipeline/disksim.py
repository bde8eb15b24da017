"""Readers for DiskSim's parameter and validation-trace files, and the real-disk check.

DiskSim (CMU PDL, version 4.0) describes a drive in three files, all in the libparam
syntax ``TYPE NAME { Key words = value, ... }`` with nested blocks, ``[ lists ]``,
``# comments`` and ``source FILE`` includes:

- ``NAME.diskspecs``: the ``disksim_disk`` block - controller overheads in ms
  ("Read hit over. after read", "Write miss over. after write", ...), "Bulk sector
  transfer time" (ms per 512-byte sector over the interface), cache segments and
  read-ahead, "Fast write level" (write-behind), "Max queue length"; its ``Model``
  key sources the ``.model`` file.
- ``NAME.model``: the ``dm_disk`` block - surfaces, cylinders, block count, the
  mechanical model (RPM, head switch, write settle, seek type and curve) and the
  layout (zones with first/last cylinder, blocks per track, skews in sectors, spares,
  slipped sectors, "Empty space at zone front").
- ``NAME.seek``: the extracted seek curve, ``distance, ms`` per line.
- ``NAME.parv``: the whole simulated system; buses and controller carry their own
  per-sector transfer times (DiskSim uses the slowest of disk, bus and controller).

Validation traces (``NAME.trace``) are one request a line:
``R|W FLAG start_sector sector_count measured_service_us gap_us``; closed loop, one
request outstanding (see data/disksim-valid/README.md).

The LBN -> (cylinder, surface, sector) mapping follows DiskSim's layout_g1 semantics
(``layout_g1.c``, ``layout_g1_load.c``): sparing schemes 1 (spare tracks at the end
of each zone), 7 (slipped sectors pushed to the zone end), 8 (spare sectors at the end
of each range of cylinders) and 9 (spare sectors at the end of the zone); mapping
scheme 1 reverses the surface order on odd cylinders of a zone. ``lbn_to_pbn`` is
the reference used to check what the HDD model does with the imported zone table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "disksim-valid"

#: DiskSim's own published demerit (ms) for each validation drive
#: (data/disksim-valid/README.md).
DISKSIM_DEMERIT_MS = {
    "atlas_III": 0.378, "barracuda": 0.349, "cheetah4LP": 0.318, "cheetah9LP": 0.107,
    "ibm18es": 0.135, "atlas10k": 0.268, "hp_c2247a": 0.090,
}
DRIVES = tuple(DISKSIM_DEMERIT_MS)

# --------------------------------------------------------------------------------------
# libparam syntax
# --------------------------------------------------------------------------------------
_TOKEN = re.compile(r"[{}\[\],=]|[^\s{}\[\],=]+")


class ParamBlock(dict):
    """A ``TYPE { ... }`` block: a dict of its keys plus the block's ``type`` words."""

    def __init__(self, type_: str = "") -> None:
        super().__init__()
        self.type = type_


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, line) tokens; kind is 'p' (punctuation) or 'w' (word)."""
    out: list[tuple[str, str, int]] = []
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        for tx in _TOKEN.findall(line):
            out.append(("p" if tx in "{}[],=" and len(tx) == 1 else "w", tx, ln))
    return out


def _scalar(words: list[str]):
    s = " ".join(words)
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", 0)

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def expect(self, p: str) -> None:
        t = self.take()
        if t[1] != p:
            raise ValueError(f"libparam: expected {p!r} at line {t[2]}, got {t[1]!r}")

    def words_on_line(self) -> list[str]:
        """Words up to punctuation or the end of the first word's line."""
        words: list[str] = []
        line = None
        while True:
            kind, tx, ln = self.peek()
            if kind != "w" or (line is not None and ln != line):
                return words
            line = ln
            words.append(tx)
            self.i += 1

    def value(self):
        words = self.words_on_line()
        kind, tx, _ = self.peek()
        if kind == "p" and tx == "{":
            self.take()
            return self.block(" ".join(words))
        if kind == "p" and tx == "[":
            self.take()
            lst = self.list_()
            return lst if not words else {"type": " ".join(words), "children": lst}
        return _scalar(words)

    def list_(self) -> list:
        out: list = []
        while True:
            kind, tx, _ = self.peek()
            if kind == "eof":
                raise ValueError("libparam: unterminated list")
            if tx == "]":
                self.take()
                return out
            if tx == ",":
                self.take()
                continue
            out.append(self.value())

    def block(self, type_: str) -> ParamBlock:
        blk = ParamBlock(type_)
        while True:
            kind, tx, ln = self.peek()
            if kind == "eof":
                raise ValueError(f"libparam: unterminated block {type_!r}")
            if tx == "}":
                self.take()
                return blk
            if tx == ",":
                self.take()
                continue
            key: list[str] = []
            while self.peek()[0] == "w":
                key.append(self.take()[1])
            if self.peek()[1] != "=":
                # a bare word list without '=' (tolerated, ignored)
                if self.peek()[1] in ("}", ","):
                    continue
                raise ValueError(f"libparam: expected '=' after {' '.join(key)!r} at line {ln}")
            self.take()
            blk[" ".join(key)] = self.value()

    def top(self) -> list[tuple]:
        """Top-level items: ('block', type_words, ParamBlock), ('source', file),
        ('instantiate', [names], as_name), ('topology', tree)."""
        items: list[tuple] = []
        while self.peek()[0] != "eof":
            kind, tx, ln = self.peek()
            if kind == "w" and tx == "source":
                self.take()
                items.append(("source", self.take()[1]))
                continue
            if kind == "w" and tx == "instantiate":
                self.take()
                self.expect("[")
                names = [str(v) for v in self.list_()]
                if self.peek()[1] == "as":
                    self.take()
                items.append(("instantiate", names, self.take()[1]))
                continue
            if kind == "w" and tx == "topology":
                self.take()
                items.append(("topology", self.value()))
                continue
            words = []
            while self.peek()[0] == "w":
                words.append(self.take()[1])
            kind, tx, ln = self.take()
            if tx == "{":
                items.append(("block", " ".join(words), self.block(" ".join(words))))
            elif tx == "[":
                items.append(("list", " ".join(words), self.list_()))
            elif kind == "eof":
                break
            else:
                raise ValueError(f"libparam: unexpected {tx!r} at line {ln}")
        return items


def parse_params(text: str) -> list[tuple]:
    """Parse libparam text into top-level items (see ``_Parser.top``)."""
    return _Parser(text).top()


def _first_block(items: list[tuple], type_prefix: str) -> tuple[str, ParamBlock]:
    for it in items:
        if it[0] == "block" and it[1].split()[0] == type_prefix:
            return it[1], it[2]
    raise ValueError(f"no {type_prefix} block found")


# --------------------------------------------------------------------------------------
# drive description
# --------------------------------------------------------------------------------------
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
    for line in text.splitlines():
        line = line.strip()
        if not line or not line[0].isdigit():
            continue
        a, b = re.split(r"[,\s]+", line, maxsplit=1)
        d.append(int(a))
        t.append(float(b.strip().rstrip(",")))
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


# --------------------------------------------------------------------------------------
# layout: LBN -> physical block, DiskSim layout_g1 semantics
# --------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------
# traces
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trace:
    """A request trace as arrays (what models.workload.trace replays).

    ``ops``: 0 read / 1 write (models.device.request READ/WRITE); ``offset_bytes``,
    ``size_bytes``; ``time_ns``: arrival time (open loop) or the idle gap after the
    request completes (closed loop, DiskSim validation traces); ``measured_ns``: the
    measured service time where the trace has one, else empty.
    """

    ops: np.ndarray
    offset_bytes: np.ndarray
    size_bytes: np.ndarray
    time_ns: np.ndarray
    measured_ns: np.ndarray
    mode: str  # "closed" (time_ns = gap after completion) | "open" (arrival times)

    def __len__(self) -> int:
        return int(self.ops.size)

    def head(self, n: int) -> "Trace":
        return Trace(self.ops[:n], self.offset_bytes[:n], self.size_bytes[:n],
                     self.time_ns[:n], self.measured_ns[:n], self.mode)


def parse_validate_trace(text: str) -> Trace:
    """DiskSim "validate" format -> closed-loop Trace (512-byte sectors, us -> ns)."""
    ops, lbn, cnt, svc, gap = [], [], [], [], []
    for ln, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) != 6 or f[0] not in ("R", "W"):
            raise ValueError(f"validate trace line {ln}: expected 'R|W FLAG lbn n us us'")
        ops.append(0 if f[0] == "R" else 1)
        lbn.append(int(f[2]))
        cnt.append(int(f[3]))
        svc.append(float(f[4]))
        gap.append(float(f[5]))
    return Trace(
        ops=np.asarray(ops, dtype=np.int8),
        offset_bytes=np.asarray(lbn, dtype=np.int64) * 512,
        size_bytes=np.asarray(cnt, dtype=np.int64) * 512,
        time_ns=np.rint(np.asarray(gap) * 1e3).astype(np.int64),
        measured_ns=np.rint(np.asarray(svc) * 1e3).astype(np.int64),
        mode="closed",
    )


def read_validate_trace(path: str | Path) -> Trace:
    return parse_validate_trace(Path(path).read_text())


def parse_csv_trace(text: str) -> Trace:
    """CSV ``time_us,op,offset_bytes,size_bytes`` (header optional) -> open-loop Trace.

    ``op`` is R/W (or read/write, 0/1); rows are sorted by time. This is what one
    exports from ``blkparse`` of a real system (the Q or D events: time, RWBS, sector
    * 512, bytes).
    """
    t, ops, off, size = [], [], [], []
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(",")]
        if ln == 1 and not f[0].replace(".", "", 1).isdigit():
            continue  # header
        if len(f) != 4:
            raise ValueError(f"csv trace line {ln}: expected time_us,op,offset_bytes,size_bytes")
        op = f[1].upper()
        if op in ("R", "READ", "0") or op.startswith("R"):
            ops.append(0)
        elif op in ("W", "WRITE", "1") or op.startswith("W"):
            ops.append(1)
        else:
            raise ValueError(f"csv trace line {ln}: op must be R or W, got {f[1]!r}")
        t.append(float(f[0]))
        off.append(int(f[2]))
        size.append(int(f[3]))
    order = np.argsort(np.asarray(t), kind="stable")
    return Trace(
        ops=np.asarray(ops, dtype=np.int8)[order],
        offset_bytes=np.asarray(off, dtype=np.int64)[order],
        size_bytes=np.asarray(size, dtype=np.int64)[order],
        time_ns=np.rint(np.asarray(t) * 1e3).astype(np.int64)[order],
        measured_ns=np.zeros(0, dtype=np.int64),
        mode="open",
    )


def read_csv_trace(path: str | Path) -> Trace:
    return parse_csv_trace(Path(path).read_text())


def read_trace(path: str | Path, fmt: str = "auto") -> Trace:
    """Read a trace file: ``validate`` (DiskSim), ``csv`` (time_us,op,offset,size) or
    ``auto`` (by extension: .csv -> csv, anything else -> validate)."""
    path = Path(path)
    if fmt == "auto":
        fmt = "csv" if path.suffix.lower() == ".csv" else "validate"
    if fmt == "csv":
        return read_csv_trace(path)
    if fmt == "validate":
        return read_validate_trace(path)
    raise ValueError(f"iolog_format: must be auto, csv or validate, got {fmt!r}")


def rotation_ns(model: DiskModel) -> float:
    return 60e9 / model.rpm


# --------------------------------------------------------------------------------------
# the real-disk check: replay a validation trace on the imported drive
# --------------------------------------------------------------------------------------
def config_path(name: str) -> Path:
    """The committed device config of a validation drive."""
    return Path(__file__).resolve().parent.parent / "conf" / "device" / f"disksim_{name}.yaml"


def replay_trace(cfg, trace: Trace, mode: str | None = None, iodepth: int = 1,
                 device_name: str = "sda"):
    """Replay ``trace`` on a fresh ``HDD(cfg)``; returns the finished ``TraceReplay``.

    ``mode`` defaults to the trace's own (closed for DiskSim validation traces).
    """
    from models.device.hdd import HDD
    from models.sim import Simulator
    from models.workload.trace import TraceConfig, TraceReplay

    sim = Simulator()
    dev = HDD(sim, device_name, cfg)
    rp = TraceReplay(sim, dev, TraceConfig(mode=mode or trace.mode, iodepth=iodepth),
                     trace.ops, trace.offset_bytes, trace.size_bytes, trace.time_ns)
    rp.start()
    sim.run()
    if not rp.done:
        raise RuntimeError(f"replay stopped with {rp.n - rp.completed} requests outstanding")
    rp.events_processed = sim.events_processed
    rp.sim_ns = sim.now_ns
    return rp


def validate_drive(name: str, n_requests: int = 0, cfg=None) -> dict:
    """Replay drive ``name``'s measured trace on its imported config; compare CDFs.

    Returns a flat dict: drive, requests, demerit_ms, DiskSim's published demerit,
    mean / p50 / p90 / p99 measured and simulated service times (ms), relative mean
    error, simulated seconds, wall seconds, and the per-request arrays
    ``measured_ms`` / ``simulated_ms`` / ``cache_hit`` (numpy) for plots and the
    detail table. ``cfg`` overrides the committed config (an HDDConfig).
    """
    import time

    from .demerit import error_stats
    from .import_disksim import load_hdd_config

    t0 = time.perf_counter()
    trace = read_validate_trace(DATA_DIR / f"{name}.trace")
    if n_requests:
        trace = trace.head(n_requests)
    cfg = cfg if cfg is not None else load_hdd_config(config_path(name))
    rp = replay_trace(cfg, trace)
    measured = trace.measured_ns / 1e6
    simulated = rp.response_ns / 1e6
    st = error_stats(measured, simulated)
    out = {
        "drive": name,
        "requests": int(len(trace)),
        "demerit_ms": st["demerit"],
        "disksim_demerit_ms": DISKSIM_DEMERIT_MS.get(name, float("nan")),
        "mean_measured_ms": st["mean_measured"],
        "mean_simulated_ms": st["mean_simulated"],
        "mean_error_rel": st["mean_error_rel"],
    }
    for q in (50, 90, 99):
        out[f"p{q}_measured_ms"] = st[f"p{q}_measured"]
        out[f"p{q}_simulated_ms"] = st[f"p{q}_simulated"]
    out["cache_hit_fraction"] = float(rp.cache_hit.mean()) if rp.n else 0.0
    out["sim_seconds"] = rp.sim_ns / 1e9
    out["events_processed"] = int(rp.events_processed)
    out["wall_seconds"] = time.perf_counter() - t0
    out["measured_ms"] = measured
    out["simulated_ms"] = simulated
    out["cache_hit"] = rp.cache_hit.copy()
    out["is_write"] = trace.ops == 1
    return out


def plot_cdfs(result: dict, path: str | Path) -> Path:
    """PNG overlaying the measured and simulated service-time CDFs of one drive."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .demerit import PROBS, quantiles

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4), dpi=110)
    ax.plot(quantiles(result["measured_ms"]), PROBS, label="measured", lw=1.6)
    ax.plot(quantiles(result["simulated_ms"]), PROBS, label="simulated", lw=1.2, ls="--")
    ax.set_xlabel("service time (ms)")
    ax.set_ylabel("cumulative fraction of requests")
    ax.set_title(f"{result['drive']}: demerit {result['demerit_ms']:.3f} ms "
                 f"(DiskSim {result['disksim_demerit_ms']:.3f} ms)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
    return path


SUMMARY_KEYS = ("drive", "requests", "demerit_ms", "disksim_demerit_ms", "mean_measured_ms",
                "mean_simulated_ms", "mean_error_rel", "p50_measured_ms", "p50_simulated_ms",
                "p90_measured_ms", "p90_simulated_ms", "p99_measured_ms", "p99_simulated_ms",
                "cache_hit_fraction", "sim_seconds", "events_processed", "wall_seconds")


def format_table(results: list[dict]) -> str:
    """Markdown table: demerit vs DiskSim's, mean measured vs simulated, targets."""
    lines = ["| drive | demerit ms | DiskSim ms | ratio | mean measured ms | mean simulated ms "
             "| mean error |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        ratio = r["demerit_ms"] / r["disksim_demerit_ms"]
        lines.append(f"| {r['drive']} | {r['demerit_ms']:.3f} | {r['disksim_demerit_ms']:.3f} "
                     f"| {ratio:.1f}x | {r['mean_measured_ms']:.2f} | {r['mean_simulated_ms']:.2f} "
                     f"| {100 * r['mean_error_rel']:+.1f}% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.disksim [DRIVE ...] [--n N] [--png DIR]``: the table."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m pipeline.disksim",
                                 description="replay the DiskSim validation traces")
    ap.add_argument("drives", nargs="*", default=list(DRIVES))
    ap.add_argument("--n", type=int, default=0, help="first N requests only")
    ap.add_argument("--png", default="", help="write one CDF plot per drive into DIR")
    a = ap.parse_args(argv)
    results = []
    for d in a.drives:
        r = validate_drive(d, a.n)
        results.append(r)
        if a.png:
            plot_cdfs(r, Path(a.png) / f"{d}_cdf.png")
    print(format_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
