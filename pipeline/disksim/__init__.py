"""Readers for DiskSim's parameter and validation-trace files, and the real-disk check.

DiskSim (CMU PDL, version 4.0) describes a drive in libparam files (``libparam``):
``NAME.diskspecs`` (controller, buffer, overheads), the ``.model`` it sources
(mechanics and layout), the ``.seek`` curve and the ``.parv`` system (bus rates) -
read by ``specs``; its layout_g1 mapping is ``layout``; validation traces are read by
``traces``; ``validate`` replays them on the HDD model (``python -m pipeline.disksim``).
"""
from .layout import (SECTATEND_SPARING, SECTPERRANGE_SPARING, SECTSPERZONE_SPARING,
                     SUPPORTED_SPARING, TRACK_SPARING, lbn_to_pbn, pbn_angle_sectors,
                     zone_lbn_counts)
from .libparam import ParamBlock, parse_params
from .specs import (DiskModel, DiskSpec, Zone, hpl_seek_ms, parse_model, parse_seek,
                    read_diskspecs, rotation_ns)
from .traces import (Trace, parse_csv_trace, parse_validate_trace, read_csv_trace, read_trace,
                     read_validate_trace)
from .validate import (DATA_DIR, DISKSIM_DEMERIT_MS, DRIVES, SUMMARY_KEYS, config_path,
                       format_table, main, plot_cdfs, replay_trace, validate_drive)

__all__ = [
    "DATA_DIR", "DISKSIM_DEMERIT_MS", "DRIVES", "SUMMARY_KEYS", "DiskModel", "DiskSpec",
    "ParamBlock", "SECTATEND_SPARING", "SECTPERRANGE_SPARING", "SECTSPERZONE_SPARING",
    "SUPPORTED_SPARING", "TRACK_SPARING", "Trace", "Zone", "config_path", "format_table",
    "hpl_seek_ms", "lbn_to_pbn", "main", "parse_csv_trace", "parse_model", "parse_params",
    "parse_seek", "parse_validate_trace", "pbn_angle_sectors", "plot_cdfs", "read_csv_trace",
    "read_diskspecs", "read_trace", "read_validate_trace", "replay_trace", "rotation_ns",
    "validate_drive", "zone_lbn_counts",
]
