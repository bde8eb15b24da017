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
  ``startdelay_s`` (the job starts that long after the run's start, as fio counts it,
  and not before its stonewall's jobs have ended; fio's random range is not modelled). ``thinktime`` (microseconds unless suffixed) -> ``thinktime_us``.
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
from dataclasses import dataclass, field, fields
from pathlib import Path

from models.checks import MAX_SECONDS
from models.workload.fio import FioConfig

from .errors import ConfigError
from .fio_options import FIO_DEFAULTS, IGNORED, KNOWN, OPTIONS, UNSUPPORTED, SET_BY, convert

REPO = Path(__file__).resolve().parent.parent

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
                flags[key] = convert("bool", key, opts[key][0]) if key in opts else False
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
            v = convert(kind, key, value)
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
    options = tuple(k for k, (_, t) in OPTIONS.items() if t == field) + SET_BY.get(field, ())
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
        return convert("bool", "direct", merged.get("direct", True))
    except ValueError as ex:
        raise ConfigError("workload.direct", str(ex).partition(": ")[2]) from None
def _as_trace(merged: dict) -> dict:
    """``read_iolog``: the trace workload with the job's replay options."""
    out = {"type": "trace", "iolog": merged["read_iolog"], "mode": "auto"}
    for k in ("filename", "iodepth", "replay_time_scale", "number_ios"):
        if k in merged:
            out[k] = merged[k]
    return out
