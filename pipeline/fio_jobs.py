"""A fio job file of several jobs (``[global]`` + several ``[job]`` sections) as the
``fio_jobs`` workload (``models.workload.fio.jobs``): every job's options translated
as for one job (``pipeline.fio_jobfile.one_job``), the workload section's own keys
over every job (as options given to fio on its command line), one device for all.

Refused with one line naming the file (and the job): a job with ``read_iolog``, a
buffered job (``direct=0``; a file of several buffered jobs is not modelled), jobs on
different devices (``filename``).
"""
from __future__ import annotations

import dataclasses

from models.workload.fio import FioConfig

from .errors import ConfigError

FIELDS = tuple(f.name for f in dataclasses.fields(FioConfig))
EXTRAS = ("filename", "jobfile")


def several_jobs(entry: dict, merged: list[dict], jf, named: dict | None = None) -> dict:
    """The ``fio_jobs`` entry of job file ``jf`` whose jobs' entries are ``merged``
    (``named``: the workload section's fio-named keys, over every job). A bad value from
    the file names its line (``pipeline.fio_jobfile.file_error``)."""
    from .fio_jobfile import file_error

    devices = {str(m.get("filename", "")).removeprefix("/dev/") for m in merged} - {""}
    if len(devices) > 1:
        raise ConfigError("workload.jobfile", f"{jf.path}: jobs on several devices "
                          f"({', '.join(sorted(devices))}): every job of a file runs on "
                          "one device here")
    jobs = []
    for job, m in zip(jf.jobs, merged):
        where = f"{jf.path} [{job.name}]"
        if "read_iolog" in m:
            raise ConfigError("workload.jobfile", f"{where}: read_iolog in a file of several "
                              "jobs is not modelled (one replay job per file)")
        unknown = set(m) - set(FIELDS) - set(EXTRAS) - {"type"}
        if unknown:
            raise ConfigError(f"workload.{sorted(unknown)[0]}", "not an option of a fio job")
        fields = {k: v for k, v in m.items() if k in FIELDS}
        try:
            cfg = FioConfig(**fields)
        except (TypeError, ValueError) as ex:
            err = file_error(str(ex), entry, named or {}, jf, job, job.name)
            raise err or ConfigError("workload.jobfile", f"{where}: {ex}") from None
        if not cfg.direct:
            raise ConfigError("workload.jobfile", f"{where}: direct=0 in a file of several "
                              "jobs is not modelled; set direct=1 (one buffered job per file)")
        jobs.append(fields)
    out = {"type": "fio_jobs", "jobs": jobs, "names": [j.name for j in jf.jobs],
           "groups": [j.groupid for j in jf.jobs], "stonewall": [j.stonewall for j in jf.jobs],
           "jobfile": entry.get("jobfile", "")}
    if devices or "filename" in entry:
        out["filename"] = str(entry.get("filename", next(iter(devices), ""))).removeprefix("/dev/")
    return out
