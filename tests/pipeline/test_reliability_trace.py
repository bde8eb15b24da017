"""Huge traces: a run that replays the first N requests (``workload.number_ios``) reads
only those, so its memory does not grow with the file.

The test writes a 5-million-line DiskSim validate trace (~100 MB, ~1 s), replays its
first 1,000 requests through the CLI in a subprocess and measures the process's peak
resident memory (its ``VmHWM`` at exit): under 300 MB. ~10 s
on the 2-core CI machine, most of it the interpreter's and libraries' start-up.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pyarrow.parquet as pq

from pipeline.trace_job import read_trace_head

from .helpers import ROOT

LINE = "R 0 1000 8 1.5 0.1\n"           # read 8 sectors at lbn 1000; 1.5 ms, 0.1 ms gap


# The CLI, then its own peak resident memory (VmHWM: since exec, so not counting the
# pages a fork shares with the parent, which wait4's ru_maxrss would include).
_MAIN = """import sys
from pipeline.run import main
code = main(sys.argv[1:])
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0]
print("peak_kb", hwm.split()[1], file=sys.stderr)
sys.exit(code)
"""


def _peak_rss_mb(args, cwd) -> tuple[int, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", _MAIN, *args], cwd=cwd, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    peak = [ln.split()[1] for ln in r.stderr.splitlines() if ln.startswith("peak_kb ")]
    return r.returncode, (int(peak[0]) / 1024 if peak else float("inf")), r.stderr


def test_replaying_the_head_of_a_5_million_line_trace_stays_under_300_mb(tmp_path):
    trace = tmp_path / "huge.trace"
    with open(trace, "w") as f:
        block = LINE * 100_000
        for _ in range(50):
            f.write(block)
    root = tmp_path / "out"
    code, peak_mb, err = _peak_rss_mb(
        ["workload=trace", f"workload.iolog={trace}", "workload.number_ios=1000",
         f"results.dir={root}", "results.summary=false"], tmp_path)
    assert code == 0, err[-2000:]
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"
    (summary,) = root.glob("**/summary.parquet")
    assert pq.read_table(summary).column("trace.requests")[0].as_py() == 1000


def test_the_head_is_what_a_whole_read_gives_with_the_same_line_numbers(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("time_us,op,offset_bytes,size_bytes\n# a comment\n\n"
                   "10,R,0,4096\n5,W,4096,4096\n20,R,8192,512\n30,W,0,x\n")
    head = read_trace_head(csv, "auto", 3)          # the bad 4th request is not read
    assert head.time_ns.tolist() == [5000, 10000, 20000] and head.lines.tolist() == [5, 4, 6]
    val = tmp_path / "t.trace"
    val.write_text("\nR 0 10 8 1.0 0.5\nW 0 20 8 1.0 0.5\nR 0 -1 8 1 1\n")
    assert read_trace_head(val, "validate", 2).lines.tolist() == [2, 3]
