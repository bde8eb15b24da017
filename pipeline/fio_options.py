"""fio's option vocabulary as the job-file reader takes it (``pipeline.fio_jobfile``,
whose docstring says what each option does here): the modelled options and where each
goes (``OPTIONS``), the ones accepted without effect (``IGNORED``), real fio options
refused as not modelled (``UNSUPPORTED``), fio's own defaults (``FIO_DEFAULTS``), and
how a value is read (``convert``, ``parse_time``)."""
from __future__ import annotations

import difflib
import re

from models.workload.fio import IOENGINES

_TIME_UNITS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0,
               "m": 60.0, "min": 60.0, "h": 3600.0, "hr": 3600.0, "d": 86400.0, "day": 86400.0}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
IGNORED = ("name", "description", "group_reporting", "new_group", "stonewall", "thread",
           "randrepeat", "norandommap", "invalidate", "exitall", "percentile_list",
           "disable_slat", "write_iolog", "write_bw_log", "write_lat_log", "write_iops_log",
           "log_avg_msec", "clat_percentiles", "lat_percentiles", "slat_percentiles",
           # what the buffers hold: no simulated device compresses or deduplicates
           "refill_buffers", "zero_buffers", "scramble_buffers", "buffer_compress_percentage",
           "buffer_compress_chunk", "buffer_pattern", "dedupe_percentage",
           # what fio times, not what the device does
           "gtod_reduce", "allow_mounted_write",
           # completions are reaped as they come (any max reaps them all)
           "iodepth_batch_complete_max",
           # the job issues nothing while it spins, as while it sleeps
           "thinktime_spin",
           # blocks are drawn with replacement whatever the generator (as norandommap)
           "random_generator")
# fio name -> (kind, target): how the value is read and where it goes
OPTIONS: dict[str, tuple[str, str]] = {
    "rw": ("str", "rw"), "readwrite": ("str", "rw"),
    "bs": ("str", "bs"), "blocksize": ("str", "bs"),
    "bsrange": ("str", "bsrange"), "blocksize_range": ("str", "bsrange"),
    "bssplit": ("str", "bssplit"),
    "ba": ("str", "ba"), "blockalign": ("str", "ba"),
    "iodepth": ("int", "iodepth"), "numjobs": ("int", "numjobs"),
    "size": ("str", "size"), "offset": ("str", "offset"),
    "offset_increment": ("str", "offset_increment"),
    "rwmixread": ("int", "rwmixread"), "rwmixwrite": ("int", "rwmixwrite"),
    "ioengine": ("engine", "ioengine"),
    "direct": ("bool", "direct"), "buffered": ("bool", "buffered"),
    "iodepth_batch_submit": ("int", "iodepth_batch_submit"),
    "iodepth_batch": ("int", "iodepth_batch_submit"),
    "iodepth_batch_complete_min": ("int", "iodepth_batch_complete_min"),
    "iodepth_batch_complete": ("int", "iodepth_batch_complete_min"),
    "iodepth_low": ("int", "iodepth_low"),
    "fadvise_hint": ("str", "fadvise_hint"),
    "runtime": ("time_s", "runtime"), "ramp_time": ("time_s", "ramp_time"),
    # fio reads a range too (startdelay=1-3: its option has a high bound, off2)
    "startdelay": ("time_range_s", "startdelay_s"),
    "time_based": ("bool", "time_based"), "number_ios": ("int", "number_ios"),
    "io_size": ("str", "io_size"), "io_limit": ("str", "io_size"),
    "loops": ("int", "loops"),
    "thinktime": ("time_us", "thinktime_us"), "thinktime_blocks": ("int", "thinktime_blocks"),
    "rate_iops": ("str", "rate_iops"), "rate": ("str", "rate"),
    "rate_iops_min": ("str", "rate_iops_min"), "rate_min": ("str", "rate_min"),
    "rate_cycle": ("int", "rate_cycle_ms"), "rate_process": ("str", "rate_process"),
    "random_distribution": ("str", "random_distribution"),
    "rw_sequencer": ("str", "rw_sequencer"),
    "percentage_random": ("str", "percentage_random"),
    "fsync": ("int", "fsync"), "fdatasync": ("int", "fdatasync"), "sync": ("str", "sync"),
    "end_fsync": ("bool", "end_fsync"), "fsync_on_close": ("bool", "end_fsync"),
    "filename": ("str", "filename"), "read_iolog": ("str", "read_iolog"),
    "replay_time_scale": ("float", "replay_time_scale"),
}
KNOWN = tuple(sorted(set(OPTIONS) | set(IGNORED)))
# real fio options (fio's HOWTO) that are not modelled -> what to do instead; refused
# as such rather than as an unknown option (a short list of the common ones)
UNSUPPORTED: dict[str, str] = {
    "blocksize_unaligned": "bs= must be a multiple of 512 bytes",
    "verify": "data is not kept, so it cannot be verified",
    "nrfiles": "one file (or block device) per job",
    "thinktime_blocks_type": "think time follows completions (fio's default, complete)",
    "bs_is_seq_rand": "give bs=read,write",
}
# FioConfig fields a fio option of another name sets (besides the targets in OPTIONS)
SET_BY = {"runtime_s": ("runtime",), "ramp_time_s": ("ramp_time",),
           "startdelay_s": ("startdelay",),
           "rwmixread": ("rwmixwrite",), "direct": ("buffered",)}
# fio's own defaults, where a job file differs from FioConfig's
FIO_DEFAULTS = {"rw": "read", "bs": "4k", "iodepth": 1, "ioengine": "psync", "size": "100%",
                "time_based": False}


def parse_time(value, default_unit_s: float, key: str) -> float:
    """Seconds from fio's time syntax (``30``, ``500ms``, ``2m``); a bare number is in
    the option's default unit."""
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected a time such as 30s or 500ms, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value) * default_unit_s
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*", str(value))
    if not m or (m.group(2) and m.group(2).lower() not in _TIME_UNITS):
        raise ValueError(f"{key}: expected a time such as 30s or 500ms "
                         f"(units: {', '.join(_TIME_UNITS)}), got {value!r}")
    unit = _TIME_UNITS[m.group(2).lower()] if m.group(2) else default_unit_s
    return float(m.group(1)) * unit


def convert(kind: str, name: str, value):
    """``value`` of option ``name`` read as ``kind`` (``OPTIONS``); ``ValueError`` naming
    the option."""
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"{name}: expected 0 or 1, got {value!r}")
    if kind == "int":
        try:
            return int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            raise ValueError(f"{name}: expected an integer, got {value!r}") from None
    if kind == "float":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected a number, got {value!r}") from None
    if kind == "time_range_s":
        low, dash, high = str(value).partition("-")
        if dash and low.strip() and high.strip():
            # fio's range: a value drawn per job clone, which FioJob does not do (it
            # starts a job's clones together)
            raise ValueError(f"{name}: fio's random range ({str(value).strip()!r}, a value "
                             f"drawn per job clone) is not modelled here: give one time")
        kind = "time_s"
    if kind == "time_s":
        return round(parse_time(value, 1.0, name), 9)          # to the nanosecond
    if kind == "time_us":
        return round(parse_time(value, 1e-6, name) * 1e6, 3)
    if kind == "engine":
        text = str(value).strip()
        if text not in IOENGINES:
            close = difflib.get_close_matches(text, IOENGINES, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{name}: the modelled engines are {', '.join(IOENGINES)}, "
                             f"got {text!r}{hint}")
        return text
    return str(value).strip() if value is not None else value
