"""The README's "Your own server, step by step": its commands, as written, run in an
empty directory (a clone's user keeps ``my_conf/`` beside it) at a tiny ``run.scale``
and serially - from the user's own experiment and device preset in a ``--config-dir``
to the ``best`` answer, a PNG and ``pipeline.validate`` against the user's own CSV -
and the answer the text explains holds at that scale: the redo log on the NVMe wins by
far because its FLUSH costs a fraction of the disk's, and the datacenter drive's
(power-loss protection) FLUSH is cheaper still and wins again.

Each ``python`` of the README is this interpreter with the project on its path; only
``pipeline.run`` gets ``run.scale=0.002 hydra/launcher=serial`` appended and
``pipeline.validate`` ``--scale 0.002 --serial``."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys

import pyarrow.parquet as pq

from .helpers import ROOT

SECTION = "## Your own server, step by step"
PRELUDE = r'''
python() {
  local extra=()
  case "$2" in
    pipeline.run) extra=(run.scale=0.002 hydra/launcher=serial) ;;
    pipeline.validate) extra=(--scale 0.002 --serial) ;;
  esac
  "$PY" "$@" "${extra[@]}"
  echo "::exit $? $2" >&2
}
'''


def _commands() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return "\n".join(re.findall(r"```bash\n(.*?)```", text[start:end], re.S))


def test_the_walkthrough_runs_from_config_to_best_and_a_png(tmp_path):
    script = _commands()
    assert "--config-dir my_conf" in script and "pipeline.query best" in script
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "RAY_ADDRESS")}
    env.update(PY=sys.executable, COLUMNS="88",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p]))
    proc = subprocess.run(["bash", "-c", PRELUDE + script], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    exits = re.findall(r"^::exit (\d+) (\S+)$", proc.stderr, re.M)
    assert [m for _, m in exits] == ["pipeline.run", "pipeline.query", "pipeline.report",
                                     "pipeline.run", "pipeline.query", "pipeline.validate"]
    # every command but validate succeeds; validate may find the tiny-scale run outside
    # the user's tolerance (exit 1), never bad input (2)
    assert all(code == "0" for code, m in exits[:-1]), proc.stderr[-3000:]
    assert exits[-1][0] in ("0", "1"), proc.stderr[-3000:]
    out = proc.stdout

    # the sweep landed under the user's experiment, the what-if under its own name
    results = tmp_path / "outputs"
    assert sorted(p.name for p in results.glob("experiment=*")) == [
        "experiment=my_server", "experiment=my_server_plp"]
    assert len(list(results.glob("experiment=my_server/run=*/summary.parquet"))) == 4

    # the end-of-sweep tables name runs by redo_log / concurrency, headline first:
    # tps, then each device's FLUSH latency (iostat f_await)
    # (the header's last line; how the names wrap above it depends on the numbers' widths)
    assert re.search(r"^redo_log\s+concurrency\s+(mysqlslap\.)?tps\s+ms\s+ms\s+redo\s", out, re.M), out
    rows = re.findall(r"^(sda|sdb)\s+(1|10)\s+([\d,.]+)\s+([\d.]+)\s+([\d.]+)\s", out, re.M)
    assert len(rows) == 8, out                          # 2 sweeps x 2 placements x 2
    sweep = {(r[0], r[1]): [float(v.replace(",", "")) for v in r[2:]] for r in rows[:4]}
    plp = {(r[0], r[1]): [float(v.replace(",", "")) for v in r[2:]] for r in rows[4:]}
    for c in ("1", "10"):
        tps_disk, flush_disk, _ = sweep["sda", c]
        tps_nvme, _, flush_nvme = sweep["sdb", c]
        tps_plp, _, flush_plp = plp["sdb", c]
        assert 0 < flush_nvme < flush_disk / 10            # the consumer NVMe's FLUSH is cheap
        assert flush_plp < flush_nvme                     # power-loss protection: cheaper still
        assert tps_nvme > 10 * tps_disk and tps_plp > tps_nvme, (sweep, plp)

    # best answers per concurrency: both placements ranked, with the ratio to the baseline
    ranked = re.findall(r"^\s+(1|10)\s+([12])\s+redo_log=(sda|sdb)\s+([\d,.]+)\s+1\s+([\d.]+)",
                        out, re.M)
    # each best prints the ranking, then the same per dollar (the devices have prices)
    assert len(ranked) == 16, out       # 2 best commands x 2 rankings x 2 concurrencies x 2
    assert out.count("mysqlslap.tps per USD (storage.cost_usd)") == 2, out
    answers = ranked[0:4] + ranked[8:12]                # the rankings by tps
    # the answer of the text: the redo log on the NVMe, by more than 10x, in both sweeps
    assert [a[2] for a in answers if a[1] == "1"] == ["sdb"] * 4, out
    assert all(float(a[4]) > 10 for a in answers if a[1] == "1"), out
    # the what-if ranks higher than the user's own NVMe, concurrency by concurrency
    assert all(float(p[3].replace(",", "")) > float(s[3].replace(",", ""))
               for s, p in zip(answers[:4], answers[4:]) if s[1] == "1"), out

    # the user's device preset (a shipped one with one key changed) reached the runs
    lanes = pq.read_table(next(results.glob("experiment=my_server/run=*/summary.parquet")),
                          columns=["device.sdb.preset", "device.sdb.pcie_lanes"]).to_pylist()
    assert lanes == [{"device.sdb.preset": "samsung_970_evo_plus_1tb", "device.sdb.pcie_lanes": 2}]

    # the PNG, within 2000 px each way
    png = results / "report" / "my_server.png"
    with open(png, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(0 < v <= 2000 for v in struct.unpack(">II", head[16:24]))

    # validate checked the user's own row against the user's experiment
    assert re.search(r"^mine\.redo_on_disk\.c10\s", out, re.M), out
    assert list(results.glob("validation/*/report.md"))
