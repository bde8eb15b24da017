"""The frozen configuration of the HDD model (``models.device.hdd``): one ``HDDZone`` per
recording zone and the ``HDDConfig`` of the drive, validated on construction. What
each field models, and which DiskSim parameter it takes, is in the docstrings below;
the mechanisms are described in ``hdd`` and the modules it names.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

from ...checks import above, at_least
from .layout import zone_lbas
from .state import RA_SCHEMES, SURFACE_ORDERS

SECTOR_BYTES = 512  # also models.device.request.SECTOR_BYTES


@dataclass(frozen=True)
class HDDZone:
    """One recording zone (DiskSim ``dm_layout_g1_zone``).

    - ``first_cyl``, ``last_cyl``: inclusive cylinder range (``First/Last cylinder
      number``).
    - ``sectors_per_track``: 512-byte sectors per track (``Blocks per track``).
    - ``track_skew_sectors``: angular offset of sector 0 between consecutive tracks of
      one cylinder, in sectors (``Skew for track switch``).
    - ``cylinder_skew_sectors``: offset between the last track of a cylinder and the
      first track of the next (``Skew for cylinder switch``).
    - ``first_sector_offset``: angle of the zone's first sector, in sectors
      (``Offset of first block``).

    Sparing (physical sectors that hold no LBA; positions count sectors from the
    zone's first cylinder: (cylinder - first_cyl) * surfaces * spt + track * spt +
    sector):
    - ``lbas``: LBAs the zone holds; 0 = every sector not reserved, spare or slipped.
      Sectors beyond them are the zone's spare space.
    - ``front_sectors``: reserved sectors before the zone's first LBA (``Empty space at
      zone front``).
    - ``spare_range_cylinders``, ``spare_sectors_per_range``: the last
      ``spare_sectors_per_range`` sectors of every ``spare_range_cylinders`` cylinders
      are spares (sparing scheme 8); 0 = none.
    - ``slipped``: ``(first sector, count)`` runs skipped by the LBAs (slipped defects,
      a whole track for track sparing); each pushes the later LBAs of its range on.
    """

    first_cyl: int
    last_cyl: int
    sectors_per_track: int
    track_skew_sectors: float = 0.0
    cylinder_skew_sectors: float = 0.0
    first_sector_offset: float = 0.0
    lbas: int = 0
    front_sectors: int = 0
    spare_range_cylinders: int = 0
    spare_sectors_per_range: int = 0
    slipped: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "slipped", tuple((int(a), int(n)) for a, n in self.slipped))
        at_least(self, 0, "first_cyl")
        if self.last_cyl < self.first_cyl:
            raise ValueError(f"last_cyl: {self.last_cyl} is below first_cyl {self.first_cyl}")
        at_least(self, 1, "sectors_per_track")
        at_least(self, 0, "track_skew_sectors", "cylinder_skew_sectors", "first_sector_offset",
                 "lbas", "front_sectors", "spare_range_cylinders", "spare_sectors_per_range")
        if self.spare_range_cylinders and self.spare_sectors_per_range >= (
                self.spare_range_cylinders * self.sectors_per_track):
            raise ValueError("spare_sectors_per_range: leaves no LBA in a range of "
                             "spare_range_cylinders cylinders of one surface")
        starts = [a for a, _ in self.slipped]
        if any(n < 1 for _, n in self.slipped) or any(a < 0 for a in starts) \
                or starts != sorted(starts) or any(a1 < a0 + n0 for (a0, n0), a1 in
                                                    zip(self.slipped, starts[1:])):
            raise ValueError("slipped: needs non-overlapping (first sector, count >= 1) runs "
                             "in increasing order")


@dataclass(frozen=True)
class HDDConfig:
    """Parameters of one drive model. Units are in the names; times a human writes are
    milliseconds, sizes are bytes. The DiskSim parameter each field takes is named in
    brackets (``.model`` / ``.diskspecs`` / ``.seek`` files).

    Geometry
      - ``rpm``: spindle speed [Rotation speed (in rpms)].
      - ``surfaces``: data surfaces = heads [Number of data surfaces].
      - ``zones``: tuple of ``HDDZone`` from the outer (cylinder 0) inwards [Zones];
        lists of dicts are accepted and converted.
      - ``cylinders``: total cylinders, sets the full-stroke distance; 0 = last zone's
        last cylinder + 1 [Number of cylinders].
      - ``capacity_bytes``: addressable bytes; 0 = every LBA of every zone
        [Block count * 512]. Each zone's LBAs follow the previous zone's.
      - ``surface_order``: ``"forward"`` (every cylinder from surface 0 up),
        ``"alternate_in_zone"`` (surfaces in reverse on odd cylinders counted from the
        zone's first) or ``"alternate"`` (on odd cylinder numbers) [LBN-to-PBN mapping
        scheme 0 / 1 / 2].

    Seek (``seek_curve_*`` if given, else the three data-sheet points)
      - ``seek_single_cyl_ms``: one-cylinder (track-to-track) seek [Single cylinder
        seek time].
      - ``seek_avg_ms``: mean seek over uniformly random start/end cylinders (data
        sheet "average read seek") [Average seek time].
      - ``seek_full_stroke_ms``: seek across all cylinders [Full strobe seek time].
        The three points give seek(d) = a + b*sqrt(d) for short seeks joined smoothly
        to a straight line for long ones.
      - ``seek_curve_cyl``, ``seek_curve_ms``: a measured table, distance in cylinders
        -> ms, linearly interpolated (seek(0) = 0) [Full seek curve, the .seek file].
      - ``head_switch_ms``: switching to another surface on the same cylinder [Head
        switch time].
      - ``write_settle_ms``: extra settling before writing after any arm movement or
        head switch [Add. write settling delay]; negative where the drive settles
        writes faster than reads (DiskSim adds it to the positioning time), no more
        negative than the shortest movement (single-cylinder seek, head switch).

    Controller (per command, before any mechanical action)
      - ``overhead_read_hit_ms``, ``overhead_read_miss_ms`` [Read hit/miss over.],
      - ``overhead_write_hit_ms`` (write absorbed by the write cache),
        ``overhead_write_miss_ms`` (write going to the media) [Write hit/miss over.],
      - ``overhead_flush_ms``: SYNCHRONIZE CACHE with nothing to destage.
      The four above apply after a read (or always) [... over. after read]; the
      controller's path differs when the previous command was a write:
      ``overhead_read_hit_after_write_ms``, ``overhead_read_miss_after_write_ms``,
      ``overhead_write_hit_after_write_ms``, ``overhead_write_miss_after_write_ms``
      [... over. after write]; None = same as after a read.
      - ``interface_mb_s``: host link rate in 10^6 bytes/s (6 Gb/s SAS ~ 600)
        [512 / Bulk sector transfer time in ms / 1000; the slowest of disk, bus and
        controller]; ``interface_write_mb_s``: the rate for write data when it
        differs (a bus's Write block transfer time); None = ``interface_mb_s``.
      - ``interface``: ``sas`` (the default; SCSI alike) or ``sata``: what the host's
        driver makes of the drive - libata advertises no FUA for a SATA drive
        (``Device.fua``), so a FUA write reaches it as the write and a FLUSH.
      - ``read_watermark``: a read miss disconnects from the host after its command;
        the drive reconnects to send data once this fraction is buffered - of
        min(request, segment) with ``watermark_by_request``, else of the segment - and
        then holds the link while the media catches up [High (read) water mark, Set
        watermark by reqsize]; 0 = after the first sector.
      - ``overhead_reselect_ms``: reconnecting to the host after a disconnect (read
        miss data, status of a write that went to the media) [First reselect
        overhead]; ``overhead_data_prep_ms``: before a data transfer [Data
        preparation overhead]; ``overhead_read_complete_ms``,
        ``overhead_write_complete_ms``: sending a command's status [Read/Write
        completion overhead].
      - ``min_seek_ms``: a media write positions for at least this long (settling
        the servo for writing even on the same track) [Minimum seek delay].

    Buffer
      - ``cache_segments`` [Number of buffer segments],
        ``cache_segment_bytes`` [Segment size (in blks) * 512].
      - ``read_ahead_max_bytes``: how far past a read the drive keeps reading while
        no other command needs the arm [Maximum read-ahead (blks) * 512]; 0 = off.
      - ``read_ahead_min_bytes``: read ahead even when another command is waiting
        [Minimum read-ahead (blks) * 512].
      - ``read_ahead_scheme``: where read-ahead stops [Buffer continuous read]:
        ``"bytes"`` ``read_ahead_max_bytes`` past the read (3); ``"track"`` / ``"cylinder"``
        the same but not beyond the end of the track / cylinder the read ended on
        (1 / 2); ``"track_stream"`` to the end of the track holding the sector after
        the read, one track further when the segment already held sectors from
        before that track, i.e. a sequential stream (4, DiskSim's DEC prefetch
        scheme; ``read_ahead_max_bytes`` is not used). In every scheme the segment is
        circular: it keeps the last ``cache_segment_bytes`` read, so a long read-ahead
        scrolls the sectors just after the read out of a small segment.
      - ``read_ahead_window_hits``: a read starting in the part of the read-ahead
        window not yet read waits for its sectors (True) or is a miss that stops the
        read-ahead and repositions (False) [Allow almost read hits = 0: only sectors
        already in the buffer hit].
      - ``read_ahead_on_idle_hit``: a read served from a segment whose read-ahead had
        ended starts reading ahead again from the segment's end [Read-ahead on idle
        hit].
      - ``read_any_free_blocks``: after positioning for a read miss, the head buffers
        the sectors of the track that pass under it before the first requested one
        [Read any free blocks].
      - ``read_zero_latency``: zero-latency read (read-on-arrival): when the head
        lands on the first track of a read miss past its first sector but inside its
        sectors on that track, it reads from the next sector boundary to the end of
        those sectors, then the ones before it as they come round (one revolution for
        the track's part); the host still gets the data in LBA order [Immediate
        buffer read].
      - ``write_zero_latency``: zero-latency write (write-on-arrival): a media write
        whose data is all in the buffer when the head lands on its first track (a
        destage of cached writes; a write-through write whose data crossed the link
        during the seek) writes from the next sector boundary inside its sectors on
        that track, then the ones before it as they come round [Immediate buffer
        write].
      - ``combine_seq_writes``: a queued media write that starts at the sector after
        the media write being written (it arrived before that one ended, and the arm
        did nothing since) continues it: its command and data were handled while the
        other was on the platter, so it pays no command overhead, minimum seek delay
        or lost revolution - with the write cache off a deep queue of sequential
        writes streams at the media rate; at queue depth 1 each write still waits for
        its sector to come round [Combine seq writes, BUFFER_APPEND onto a segment
        being written].
      - ``read_hits_on_write_data``: reads hit on sectors the buffer holds from a
        write [Allow read hits on write data]. A write always empties the other
        segments holding any of its sectors (and stops read-ahead).
      - ``write_cache``: WCE bit, volatile write-back caching [Fast write level > 0].
      - ``write_cache_bytes``: most dirty bytes held before writes must wait for
        destage; 0 = cache_segments * cache_segment_bytes [Maximum number of write
        segments * segment size]. The dirty data is held in the buffer, so at most
        cache_segments * cache_segment_bytes.

    Queue
      - ``queue_depth``: tagged commands accepted at once (TCQ/NCQ) [Max queue length].
      - ``scheduler``: ``"sptf"`` or ``"fifo"`` [Scheduling policy].
      - ``sptf_age_limit_ms``: a command older than this is served next whatever
        its positioning time; 0 = no limit [Timeout time/weight].
    """

    rpm: float
    surfaces: int
    zones: tuple[HDDZone, ...]
    seek_single_cyl_ms: float = 0.0
    seek_avg_ms: float = 0.0
    seek_full_stroke_ms: float = 0.0
    head_switch_ms: float = 0.0
    write_settle_ms: float = 0.0
    cylinders: int = 0
    capacity_bytes: int = 0
    surface_order: str = "forward"
    seek_curve_cyl: tuple[int, ...] = ()
    seek_curve_ms: tuple[float, ...] = ()
    overhead_read_hit_ms: float = 0.0
    overhead_read_miss_ms: float = 0.0
    overhead_write_hit_ms: float = 0.0
    overhead_write_miss_ms: float = 0.0
    overhead_flush_ms: float = 0.0
    overhead_read_hit_after_write_ms: float | None = None
    overhead_read_miss_after_write_ms: float | None = None
    overhead_write_hit_after_write_ms: float | None = None
    overhead_write_miss_after_write_ms: float | None = None
    interface_mb_s: float = 600.0
    interface_write_mb_s: float | None = None
    interface: str = "sas"
    read_watermark: float = 0.0
    watermark_by_request: bool = True
    overhead_reselect_ms: float = 0.0
    overhead_data_prep_ms: float = 0.0
    overhead_read_complete_ms: float = 0.0
    overhead_write_complete_ms: float = 0.0
    min_seek_ms: float = 0.0
    cache_segments: int = 1
    cache_segment_bytes: int = 0
    read_ahead_max_bytes: int = 0
    read_ahead_min_bytes: int = 0
    read_ahead_scheme: str = "bytes"
    read_ahead_window_hits: bool = True
    read_ahead_on_idle_hit: bool = True
    read_any_free_blocks: bool = False
    read_zero_latency: bool = False
    write_zero_latency: bool = False
    combine_seq_writes: bool = True
    read_hits_on_write_data: bool = True
    write_cache: bool = False
    write_cache_bytes: int = 0
    queue_depth: int = 1
    scheduler: str = "sptf"
    sptf_age_limit_ms: float = 0.0
    price_usd: float = 0.0    # list price, for the run's storage.cost_usd; no effect on timing

    def __post_init__(self) -> None:
        if not self.price_usd >= 0:
            raise ValueError(f"price_usd: must be >= 0, got {self.price_usd}")
        zones = tuple(z if isinstance(z, HDDZone) else HDDZone(**dict(z)) for z in self.zones)
        object.__setattr__(self, "zones", zones)
        object.__setattr__(self, "seek_curve_cyl", tuple(int(c) for c in self.seek_curve_cyl))
        object.__setattr__(self, "seek_curve_ms", tuple(float(m) for m in self.seek_curve_ms))
        above(self, 0, "rpm")
        at_least(self, 1, "surfaces")
        if not zones:
            raise ValueError("zones: at least one zone is needed")
        for prev, z in zip(zones, zones[1:]):
            if z.first_cyl <= prev.last_cyl:
                raise ValueError(f"zones: zone starting at cylinder {z.first_cyl} overlaps "
                                 f"or precedes the zone ending at {prev.last_cyl}")
        if self.cylinders and self.cylinders <= zones[-1].last_cyl:
            raise ValueError(f"cylinders: {self.cylinders} does not cover the last zone "
                             f"(last_cyl {zones[-1].last_cyl})")
        if self.capacity_bytes < 0 or self.capacity_bytes % SECTOR_BYTES:
            raise ValueError(f"capacity_bytes: must be a non-negative multiple of "
                             f"{SECTOR_BYTES}, got {self.capacity_bytes}")
        if self.capacity_bytes > self.zone_sectors * SECTOR_BYTES:
            raise ValueError(f"capacity_bytes: {self.capacity_bytes} exceeds the zones' "
                             f"{self.zone_sectors * SECTOR_BYTES} bytes")
        at_least(self, 0, "seek_single_cyl_ms", "seek_avg_ms", "seek_full_stroke_ms",
                 "head_switch_ms", "overhead_read_hit_ms",
                 "overhead_read_miss_ms", "overhead_write_hit_ms",
                 "overhead_write_miss_ms", "overhead_flush_ms", "sptf_age_limit_ms",
                 "overhead_reselect_ms", "overhead_data_prep_ms", "overhead_read_complete_ms",
                 "overhead_write_complete_ms", "min_seek_ms")
        moves = [x for x in (self.seek_single_cyl_ms, self.head_switch_ms) if x > 0]
        if self.write_settle_ms < -min(moves, default=0.0):
            raise ValueError(f"write_settle_ms: a negative settle may shorten a write's "
                             f"positioning at most to 0 (>= -{min(moves, default=0.0):g}), "
                             f"got {self.write_settle_ms:g}")
        for key in ("overhead_read_hit_after_write_ms", "overhead_read_miss_after_write_ms",
                    "overhead_write_hit_after_write_ms", "overhead_write_miss_after_write_ms"):
            v = getattr(self, key)
            if v is not None and v < 0:
                raise ValueError(f"{key}: must be >= 0 (or None), got {v}")
        if self.seek_curve_cyl or self.seek_curve_ms:
            if len(self.seek_curve_cyl) != len(self.seek_curve_ms):
                raise ValueError("seek_curve_ms: needs one value per seek_curve_cyl entry")
            if any(b <= a for a, b in zip(self.seek_curve_cyl, self.seek_curve_cyl[1:])) \
                    or self.seek_curve_cyl[0] < 1:
                raise ValueError("seek_curve_cyl: distances must be >= 1 and increasing")
            if any(m < 0 for m in self.seek_curve_ms):
                raise ValueError("seek_curve_ms: seek times must be >= 0")
        else:
            if not 0 < self.seek_single_cyl_ms < self.seek_avg_ms < self.seek_full_stroke_ms:
                raise ValueError("seek_avg_ms: need 0 < seek_single_cyl_ms < seek_avg_ms < "
                                 "seek_full_stroke_ms for the three-point seek curve")
        above(self, 0, "interface_mb_s")
        if self.interface not in ("sas", "sata"):
            raise ValueError(f"interface: must be sas or sata, got {self.interface!r}")
        if self.interface_write_mb_s is not None and not self.interface_write_mb_s > 0:
            raise ValueError(f"interface_write_mb_s: must be > 0 (or None), got "
                             f"{self.interface_write_mb_s}")
        if not 0.0 <= self.read_watermark <= 1.0:
            raise ValueError(f"read_watermark: must be within [0, 1], got {self.read_watermark}")
        at_least(self, 1, "cache_segments")
        for key in ("cache_segment_bytes", "read_ahead_max_bytes", "read_ahead_min_bytes",
                    "write_cache_bytes"):
            v = getattr(self, key)
            if v < 0 or v % SECTOR_BYTES:
                raise ValueError(f"{key}: must be a non-negative multiple of {SECTOR_BYTES}, got {v}")
        buffer_bytes = self.cache_segments * self.cache_segment_bytes
        if self.write_cache_bytes > buffer_bytes:
            raise ValueError(f"write_cache_bytes: must be at most the drive's buffer, "
                             f"cache_segments x cache_segment_bytes = {self.cache_segments} x "
                             f"{self.cache_segment_bytes} = {buffer_bytes} bytes (0: all of "
                             f"it), got {self.write_cache_bytes}")
        if self.read_ahead_min_bytes > self.read_ahead_max_bytes:
            raise ValueError("read_ahead_min_bytes: exceeds read_ahead_max_bytes")
        if self.read_ahead_max_bytes and self.read_ahead_max_bytes > self.cache_segment_bytes:
            raise ValueError("read_ahead_max_bytes: exceeds cache_segment_bytes")
        if self.read_ahead_scheme not in RA_SCHEMES:
            raise ValueError(f"read_ahead_scheme: must be one of {sorted(RA_SCHEMES)}, "
                             f"got {self.read_ahead_scheme!r}")
        if self.read_ahead_scheme == "track_stream" and not self.cache_segment_bytes:
            raise ValueError("read_ahead_scheme: 'track_stream' needs cache_segment_bytes > 0")
        at_least(self, 1, "queue_depth")
        if self.surface_order not in SURFACE_ORDERS:
            raise ValueError(f"surface_order: must be one of {sorted(SURFACE_ORDERS)}, "
                             f"got {self.surface_order!r}")
        for i, z in enumerate(zones):
            if zone_lbas(z, self.surfaces) < 1:
                raise ValueError(f"zones: zone {i} holds no LBA")
            full = zone_lbas(dataclasses.replace(z, lbas=0), self.surfaces)
            if z.lbas > full:
                raise ValueError(f"zones: zone {i} lbas {z.lbas} exceeds its {full} "
                                 "sectors that are not reserved, spare or slipped")
        if self.scheduler not in ("sptf", "fifo"):
            raise ValueError(f"scheduler: must be 'sptf' or 'fifo', got {self.scheduler!r}")

    # -- derived quantities ---------------------------------------------------------
    @property
    def zone_sectors(self) -> int:
        """LBAs the zones hold."""
        return sum(zone_lbas(z, self.surfaces) for z in self.zones)

    @property
    def sectors(self) -> int:
        return self.capacity_bytes // SECTOR_BYTES if self.capacity_bytes else self.zone_sectors

    @property
    def n_cylinders(self) -> int:
        return self.cylinders or self.zones[-1].last_cyl + 1

    @property
    def revolution_ns(self) -> float:
        return 60e9 / self.rpm


def hdd_config_fields() -> list[str]:
    """Field names of ``HDDConfig`` in declaration order (for importers and schemas)."""
    return [f.name for f in fields(HDDConfig)]
