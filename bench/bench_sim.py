"""Speed of the simulator itself, in simulated I/Os per CPU-second (``time.process_time``:
these machines are shared, so wall time says little). One run, one process:

- fio randread 4 KB ``iodepth=32`` over 8 GB, one job, through the ``noop`` block
  queue into the 15k SAS HDD (NCQ/SPTF), the X25-E SSD and a RAID 1+0 of 12 of those
  HDDs (the default controller), on the one event path every experiment runs;
- fio randrw 16 KB, 70 % reads, ``iodepth=32`` on the datacenter NVMe preset: the
  page mix of a flushing InnoDB server, whose writes keep the flash calendars deep;
- E5, ``experiment=myisam_nr_requests`` HDD with ``block.nr_requests=100000`` at full
  scale (120 s simulated; ``--quick`` runs it at ``--quick-scale``, said in the output);
- E2, ``experiment=group_commit`` with ``engine=innodb_plugin_104`` and 30 connections
  (the experiment's own run.scale);
- the limit: a bare compiled closed loop of the same HDD model (``bench.bare_hdd``: no
  events, no block layer, no metrics).

Per case: host I/Os (requests completed by the host's block queues), CPU seconds,
I/Os per CPU-second, events per host I/O (``Simulator.events_processed`` / host I/Os)
and the peak RSS during the case; then the ratio of the fio HDD case to the limit.
fio cases and the limit are the best of three timed runs after a warm-up; experiment
cases run once. Prints a table, and one JSON line with ``--json``::

    python -m bench.bench_sim [--quick] [--ios N] [--only hdd,e5,...] [--json]
    python -m bench.bench_sim --profile [--ios N]   # cProfile, fio HDD
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys

from pipeline.numba_cache import configure as _configure_numba_cache

_configure_numba_cache()  # before the models import numba

from . import cases  # noqa: E402

CASES = ("hdd", "ssd", "raid10", "nvme_rw", "e5", "e2", "bare")


def selected(only: str) -> set[str]:
    """The cases ``--only`` names (all by default); an unknown name exits with code 2."""
    chosen = set(only.split(",")) if only else set(CASES)
    unknown = chosen - set(CASES)
    if unknown:
        print(f"--only: unknown case {sorted(unknown)[0]!r} (one of {', '.join(CASES)})",
              file=sys.stderr)
        raise SystemExit(2)
    return chosen


def run_all(args) -> dict:
    rows: dict[str, cases.Measure] = {}
    only = selected(args.only)
    for dev in ("hdd", "ssd", "raid10", "nvme_rw"):
        if dev not in only:
            continue
        rows[f"fio {dev}"] = cases.fio_case(dev, args.ios)
    if "e5" in only:
        over = ["block.nr_requests=100000"]
        if args.quick:
            over.append(f"run.scale={args.quick_scale}")
        rows["E5 hdd nr_requests=100000"] = cases.experiment_case("myisam_nr_requests", over)
    if "e2" in only:
        rows["E2 plugin 30 conn"] = cases.experiment_case(
            "group_commit", ["engine=innodb_plugin_104", "workload.concurrency=30"])
    if "bare" in only:
        rows["bare compiled HDD loop"] = cases.bare_case(args.ios)
    return rows


def report(rows: dict, args) -> dict:
    out = {"commit": cases.commit(), "clock": "process_time (CPU s)", "cases": {}}
    print(f"commit {out['commit']}; CPU time (user+sys of this process)")
    print(f"{'case':<28} {'host I/Os':>10} {'CPU s':>8} {'I/Os per CPU-s':>15} "
          f"{'events/I/O':>10} {'peak RSS MB':>11}  note")
    for name, m in rows.items():
        print(f"{name:<28} {m.host_ios:>10,} {m.cpu_s:>8.2f} {m.ios_per_cpu_s:>15,.0f} "
              f"{m.events_per_io:>10.2f} {m.peak_rss_bytes / 2**20:>11.0f}  {m.note}")
        out["cases"][name] = {"host_ios": m.host_ios, "cpu_s": round(m.cpu_s, 4),
                              "ios_per_cpu_s": round(m.ios_per_cpu_s),
                              "events_per_host_io": round(m.events_per_io, 3),
                              "peak_rss_bytes": m.peak_rss_bytes, "note": m.note}
    bare = rows.get("bare compiled HDD loop")
    if bare is not None:
        if "fio hdd" in rows:
            r = rows["fio hdd"].ios_per_cpu_s / bare.ios_per_cpu_s
            out["fio hdd / bare"] = round(r, 4)
            print(f"fio hdd / bare loop: {r:.3f}x")
    if args.quick and "E5 hdd nr_requests=100000" in rows:
        print(f"--quick: E5 ran at run.scale={args.quick_scale}, not at full scale")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ios", type=int, default=100_000, help="I/Os per fio / bare-loop run")
    ap.add_argument("--quick", action="store_true", help="E5 at --quick-scale, not full scale")
    ap.add_argument("--quick-scale", type=float, default=0.05)
    ap.add_argument("--only", default="", help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--json", action="store_true", help="also print one JSON line")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    selected(args.only)    # check before any case runs
    if args.profile:
        cases.fio_run(cases.make_hdd, 2_000)
        prof = cProfile.Profile()
        prof.enable()
        cases.fio_run(cases.make_hdd, args.ios)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
        return
    out = report(run_all(args), args)
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
