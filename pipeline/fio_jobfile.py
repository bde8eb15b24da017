"""fio as fio users write it: a job file (``.fio``, INI) and fio's own option names.

    python -m pipeline.run workload=fio workload.jobfile=jobs/randread.fio
    python -m pipeline.run workload=fio workload.runtime=30s workload.thinktime=2ms

The ``workload`` section of ``type: fio`` is translated before it is checked against
``models.workload.fio.FioConfig``: options of the job file first (the ``[global]``
sections above the job, then the job's section), then the section's own keys over
them, fio names or the config's field names alike. ``direct=1`` is the ``fio``
workload (the block device), ``direct=0`` the ``fio_buffered`` one (a file on the
filesystem of the device, ``models.workload.fio.buffered``); a file of several jobs
is the ``fio_jobs`` workload (``pipeline.fio_jobs``). fio's names and units (fio's
HOWTO):

- ``runtime`` / ``ramp_time`` (seconds unless suffixed: us, ms, s, m, h, d):
  ``runtime_s`` = runtime, ``ramp_time_s`` = ramp_time (fio's ramp is lead-in time on
  top of the runtime: the job runs both, ``models.workload.fio``); ``startdelay`` ->
  ``startdelay_s`` (the job starts that long after its phase; fio's random range is
  not modelled). ``thinktime`` (microseconds unless suffixed) -> ``thinktime_us``.
- ``rw=`` (or ``readwrite=``) takes fio's values, the value ``rw`` being ``readwrite``
  (options.c), with fio's postfix (``randread:8``: a new random offset every 8 I/Os,
  ``rw_sequencer`` saying what the others do; ``write:4k``: 4k skipped after every
  I/O; ``percentage_random``; ``models.workload.fio.offsets``); the trim modes (``trim``, ``randtrim``,
  ``trimwrite``, ``randtrimwrite``) are refused as not modelled.
- ``bs`` (``r[,w]``), ``bsrange`` (``blocksize_range``), ``bssplit`` and ``ba``
  (``blockalign``) as fio reads them (``models.workload.fio.bs``).
- ``readwrite`` = ``rw``, ``blocksize`` = ``bs``, ``iodepth_batch`` =
  ``iodepth_batch_submit``, ``iodepth_batch_complete`` =
  ``iodepth_batch_complete_min``, ``rwmixwrite`` = 100 - ``rwmixread``,
  ``buffered`` = not ``direct``; ``filename=/dev/sdb`` names the block device (with
  ``direct=0``: the device whose filesystem holds the job's file).
- ``rate_iops`` / ``rate`` / ``rate_iops_min`` / ``rate_min``: fio's
  ``read[,write[,trim]]`` values, kept as written (``"500,200"``;
  ``models.workload.fio.pace``); ``rate_cycle`` -> ``rate_cycle_ms``.
- ``read_iolog=FILE`` replays that trace instead (the ``trace`` workload:
  ``pipeline.trace_job``), with ``iodepth``, ``replay_time_scale``, ``number_ios``
  and ``filename``.
- In a job file fio's defaults hold where the file (and the section) are silent:
  ``rw=read``, ``bs=4k``, ``iodepth=1``, ``ioengine=psync`` (fio's default on Linux),
  ``size=100%`` (the whole device beyond ``offset``; a buffered job needs ``size=``, as
  fio does for a file), ``direct=0`` (buffered), no ``time_based`` (each
  job stops after ``size`` bytes; with no ``runtime`` either the run is bounded by
  that alone).
- ``stonewall`` (the job starts once every job above it ended) and ``new_group``: a
  new reporting group (``Job.groupid``); ``clat_percentiles``, ``lat_percentiles``,
  ``slat_percentiles``: which latencies of ``fio.json`` carry percentiles.
- Accepted and without effect in the simulation: ``name``, ``description``,
  ``group_reporting``, ``thread``, ``randrepeat``, ``norandommap``, ``invalidate``,
  ``exitall``, ``percentile_list`` (the JSON carries fio's default list),
  ``disable_slat``, ``write_iolog``, ``write_bw_log``, ``write_lat_log``,
  ``write_iops_log``, ``log_avg_msec``; what the buffers hold (``refill_buffers``,
  ``zero_buffers``, ``scramble_buffers``, ``buffer_compress_percentage`` / ``_chunk``,
  ``buffer_pattern``, ``dedupe_percentage``: no simulated device compresses or
  deduplicates); ``gtod_reduce`` (fio still reports the latencies here),
  ``allow_mounted_write``; ``iodepth_batch_complete_max`` (every completion is reaped
  as it comes); ``thinktime_spin`` (part of the think time: the job issues nothing
  either way); ``random_generator`` (random blocks are drawn with replacement by any
  generator, as with ``norandommap``: ``models.workload.fio.offsets``).

Job files: ``key=value`` or a bare ``key`` (a flag), ``;`` and ``#`` comments (to the
end of the line, as fio strips them), one or more job sections besides ``[global]``.
An unknown option, a malformed line or a bad value is one line naming the file, the
line and the option, with fio's closest name (difflib); a bad value is caught where the
file's options are translated (``runtime=soon``) or where the workload's config checks
them (``bs=16q``, ``rw=randtrim``: ``check_job``). A real fio option that is not
modelled (``UNSUPPORTED``: ``verify``, ``nrfiles``, ...) is named as such, not as
unknown. The file's content is a parameter of the run (``workload.jobfile_sha256``,
``pipeline.inputs``); its job names go to ``fio.json`` (``pipeline.fio_json``).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from models.checks import MAX_SECONDS
from models.workload.fio import IOENGINES, FioConfig

from .errors import ConfigError

REPO = Path(__file__).resolve().parent.parent

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
    "startdelay": ("time_s", "startdelay_s"),
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
_SET_BY = {"runtime_s": ("runtime",), "ramp_time_s": ("ramp_time",),
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


def _convert(kind: str, name: str, value):
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


@dataclass
class Job:
    """One job section: its name, its options (fio names -> values: the ``[global]``
    sections above it, then its own), the line each came from, and where it starts
    (``stonewall``: after every job above it finished) and reports (``groupid``)."""

    name: str
    options: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    stonewall: bool = False
    groupid: int = 0


@dataclass
class JobFile:
    """A parsed job file: its jobs in file order."""

    path: Path
    jobs: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.jobs[0].name

    @property
    def options(self) -> dict:
        return self.jobs[0].options

    @property
    def lines(self) -> dict:
        return self.jobs[0].lines


def resolve(path: str) -> Path:
    p = Path(str(path))
    return p if p.is_absolute() else REPO / p


def read_jobfile(path: Path) -> JobFile:
    """Parse a fio job file; ``ValueError("<file> line N: ...")`` for what it cannot use.
    A ``[global]`` section applies to the jobs below it (fio's parse order)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a fio job file (not UTF-8 text)") from None
    section = None
    glob: dict = {}          # option -> (value, line), the [global]s read so far
    jobs: list[tuple[str, dict, dict]] = []    # name, [global]s above it, its own
    for ln, raw in enumerate(text.splitlines(), 1):
        # fio strips a comment from ';' or '#' to the end of the line (parse.c)
        line = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise ValueError(f"{path} line {ln}: expected a section '[name]', got {line!r}")
            section = line[1:-1].strip()
            if section != "global":
                jobs.append((section, dict(glob), {}))
            continue
        if section is None:
            raise ValueError(f"{path} line {ln}: option before any section ([global] or "
                             f"[jobname]): {line!r}")
        key, eq, value = line.partition("=")
        key = key.strip()
        value = value.strip() if eq else "1"
        if key.startswith("include") or key.startswith("$"):
            raise ValueError(f"{path} line {ln}: {key!r} is not supported in job files here")
        if key in UNSUPPORTED:
            raise ValueError(f"{path} line {ln}: {key!r} is a fio option that is not "
                             f"modelled here ({UNSUPPORTED[key]})")
        if key not in OPTIONS and key not in IGNORED:
            close = difflib.get_close_matches(key, KNOWN, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{path} line {ln}: unknown fio option {key!r}{hint}")
        (glob if section == "global" else jobs[-1][2])[key] = (value, ln)
    if not jobs:
        raise ValueError(f"{path}: no job section (a [name] section besides [global])")
    out: list[Job] = []
    group = 0
    for i, (name, above, own) in enumerate(jobs):
        opts = {**above, **own}
        flags = {}
        for key in ("stonewall", "new_group"):
            try:
                flags[key] = _convert("bool", key, opts[key][0]) if key in opts else False
            except ValueError as ex:
                raise ValueError(f"{path} line {opts[key][1]}: {ex}") from None
        if i and (flags["stonewall"] or flags["new_group"]):   # fio: a new reporting group
            group += 1
        out.append(Job(name, {k: v for k, (v, _) in opts.items()},
                       {k: ln for k, (_, ln) in opts.items()}, bool(i and flags["stonewall"]),
                       group))
    return JobFile(Path(path), out)


def translate(options: dict, jobfile: JobFile | None = None, from_file: frozenset = frozenset(),
              job: Job | None = None) -> dict:
    """fio options (names -> raw values) -> workload entry keys (``FioConfig`` fields,
    ``filename``, or a trace replay's keys under ``read_iolog``)."""
    out: dict = {}
    runtime = ramp = None
    for key, value in options.items():
        if key in IGNORED:
            continue
        kind, target = OPTIONS[key]
        try:
            v = _convert(kind, key, value)
            if target == "rwmixwrite" and not 0 <= v <= 100:   # FioConfig sees 100 - v
                raise ValueError(f"{key}: must be in 0..100, got {v}")
        except ValueError as ex:
            if jobfile is not None and key in from_file:
                lines = (job or jobfile).lines
                raise ValueError(f"{jobfile.path} line {lines.get(key)}: {ex}") from None
            raise
        if target == "runtime":
            runtime = v
        elif target == "ramp_time":
            ramp = v
        elif target == "rwmixwrite":
            out["rwmixread"] = 100 - v
        elif target == "buffered":
            out["direct"] = not v
        elif target == "filename":
            out["filename"] = str(v).removeprefix("/dev/")
        else:
            out[target] = v
    if runtime is not None or ramp is not None:
        if runtime is not None:        # fio's ramp is on top of the runtime: not in it
            out["runtime_s"] = runtime
        out["ramp_time_s"] = ramp or 0.0
    return out


def _fio_keys(entry: dict) -> dict:
    """The fio-named keys of a workload section (the rest are FioConfig's own)."""
    return {k: v for k, v in entry.items() if k in OPTIONS and k not in _OWN_FIELDS}


# fio options named as FioConfig's fields (and ``filename``, the section's own key)
_OWN_FIELDS = ({f.name for f in fields(FioConfig)} | {"filename"}) & set(OPTIONS)


def expand(entry: dict) -> dict:
    """The ``workload`` section of ``type: fio`` with its job file and fio names
    translated (``WorkloadKind.expand``); ``ConfigError`` naming the key. A file of
    several jobs becomes the ``fio_jobs`` workload (``pipeline.fio_jobs``)."""
    entry = dict(entry)
    if entry.get("type") == "fio_buffered":
        entry.setdefault("direct", False)
    named = _fio_keys(entry)
    for k in named:
        entry.pop(k)
    for a, b in (("runtime_s", "runtime"), ("ramp_time_s", "ramp_time"),
                 ("startdelay_s", "startdelay"),
                 ("thinktime_us", "thinktime")):
        if a in entry and b in named:
            raise ConfigError(f"workload.{b}", f"set {b} (fio's name) or {a}, not both")
    jobfile = entry.get("jobfile") or ""
    jf = None
    if jobfile:
        path = resolve(jobfile)
        if not path.is_file():
            raise ConfigError("workload.jobfile", f"no such file {str(jobfile)!r} "
                                                  f"(relative paths start at {REPO})")
        try:
            jf = read_jobfile(path)
        except OSError as ex:
            raise ConfigError("workload.jobfile", f"cannot read {path}: {ex.strerror or ex}") from None
        except ValueError as ex:
            raise ConfigError("workload.jobfile", str(ex)) from None
        if len(jf.jobs) > 1:
            from .fio_jobs import several_jobs

            return several_jobs(entry, [one_job(entry, named, jf, j) for j in jf.jobs], jf,
                                named)
    merged = one_job(entry, named, jf, jf.jobs[0] if jf else None)
    if "read_iolog" in merged:
        return _as_trace(merged)
    merged["type"] = "fio" if _direct(merged) else "fio_buffered"
    if jf is not None:
        check_job(merged, entry, named, jf, jf.jobs[0])
    return merged


def file_option(field: str, entry: dict, named: dict, job: Job) -> str | None:
    """The option of ``job``'s file (fio's name, as written) that set workload field
    ``field``; None if the file did not set it (fio's default, or the workload section's
    own key - ``entry`` or fio-named ``named`` - over the file's)."""
    options = tuple(k for k, (_, t) in OPTIONS.items() if t == field) + _SET_BY.get(field, ())
    if field in entry or any(o in named for o in options):
        return None
    return next((o for o in options if o in job.options), None)


def file_error(key_and_message: str, entry: dict, named: dict, jf: JobFile, job: Job,
               where: str | None = None) -> ConfigError | None:
    """``ConfigError("workload.jobfile", "<file> line N: <option>: <message>")`` for a
    config error ``"<field>: <message>"`` whose value came from the job file; None if it
    did not (the caller keeps its own error). ``where``: the job, for a file of several."""
    field, _, message = key_and_message.partition(": ")
    option = file_option(field.removeprefix("workload."), entry, named, job)
    if option is None:
        return None
    at = f" [{where}]" if where else ""
    return ConfigError("workload.jobfile",
                       f"{jf.path} line {job.lines[option]}{at}: {option}: {message}")


def check_job(merged: dict, entry: dict, named: dict, jf: JobFile, job: Job) -> None:
    """Check a one-job file's translated entry as the run will (``typed_entry`` with
    the workload's config: ``bs=16q``, ``rw=randtrim``, ``rwmixread=150``, ...), so that
    a bad value from the file is one line naming the file, the line and the option
    rather than only ``workload.bs``; an error in the section's own keys is left to
    ``pipeline.spec`` (it names the key)."""
    from . import registry
    from .coerce import typed_entry

    kind = registry.WORKLOADS[merged["type"]]
    try:
        typed_entry(merged, registry.WORKLOADS, "workload", kind.extras)
    except ConfigError as ex:
        err = file_error(str(ex), entry, named, jf, job)
        if err is not None:
            raise err from None


def one_job(entry: dict, named: dict, jf: JobFile | None, job: Job | None) -> dict:
    """One job's workload entry: the job's options (fio's defaults where the file is
    silent), the section's fio-named keys (``named``) and own keys (``entry``) over them."""
    options = {**(job.options if job else {}), **named}
    from_file = frozenset(k for k in (job.options if job else {}) if k not in named)
    try:
        base = translate(options, jf, from_file, job)
    except ValueError as ex:
        text = str(ex)
        if jf is not None and text.startswith(str(jf.path)):
            raise ConfigError("workload.jobfile", text) from None
        key, _, msg = text.partition(": ")
        raise ConfigError(f"workload.{key}", msg) from None
    if jf is not None:
        # fio's defaults where the file (and the section) are silent
        if "direct" not in entry:
            base.setdefault("direct", False)     # fio's default: buffered I/O
        buffered = not _direct({**base, **entry})
        if buffered and "size" not in base and "size" not in entry:
            raise ConfigError("workload.jobfile", f"{jf.path}: buffered I/O (direct=0, fio's "
                              "default) goes to a file, which needs size= (or direct=1 for the "
                              "block device)")
        for key, default in FIO_DEFAULTS.items():
            if key not in entry:
                base.setdefault(key, default)
        if "runtime_s" not in base and "runtime_s" not in entry:
            if base.get("time_based", entry.get("time_based")):
                raise ConfigError("workload.jobfile", f"{jf.path}: time_based without runtime "
                                  "would run forever; set runtime=")
            base["runtime_s"] = float(MAX_SECONDS)
    return {**base, **entry}


def _direct(merged: dict) -> bool:
    """``direct`` of a translated section (FioConfig's default: 1)."""
    try:
        return _convert("bool", "direct", merged.get("direct", True))
    except ValueError as ex:
        raise ConfigError("workload.direct", str(ex).partition(": ")[2]) from None
def _as_trace(merged: dict) -> dict:
    """``read_iolog``: the trace workload with the job's replay options."""
    out = {"type": "trace", "iolog": merged["read_iolog"], "mode": "auto"}
    for k in ("filename", "iodepth", "replay_time_scale", "number_ios"):
        if k in merged:
            out[k] = merged[k]
    return out
