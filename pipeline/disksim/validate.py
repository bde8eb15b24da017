"""The real-disk check: replay each validation trace closed loop on the HDD model built
from the drive's imported config and compare the service-time CDFs (the demerit).

    python -m pipeline.disksim [DRIVE ...] [--n N] [--png DIR]
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import EXIT_CONFIG, ConfigError, check_output_dir, one_line
from .traces import Trace, read_validate_trace

REPO = Path(__file__).resolve().parent.parent.parent
DATA_DIR = REPO / "data" / "disksim-valid"

#: DiskSim's own published demerit (ms) for each validation drive
#: (data/disksim-valid/README.md).
DISKSIM_DEMERIT_MS = {
    "atlas_III": 0.378, "barracuda": 0.349, "cheetah4LP": 0.318, "cheetah9LP": 0.107,
    "ibm18es": 0.135, "atlas10k": 0.268, "hp_c2247a": 0.090,
}
DRIVES = tuple(DISKSIM_DEMERIT_MS)


def config_path(name: str) -> Path:
    """The committed device config of a validation drive."""
    return REPO / "conf" / "device" / f"disksim_{name}.yaml"


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

    from ..demerit import error_columns
    from ..import_disksim import load_hdd_config

    t0 = time.perf_counter()
    trace = read_validate_trace(DATA_DIR / f"{name}.trace")
    if n_requests:
        trace = trace.head(n_requests)
    cfg = cfg if cfg is not None else load_hdd_config(config_path(name))
    rp = replay_trace(cfg, trace)
    measured = trace.measured_ns / 1e6
    simulated = rp.response_ns / 1e6
    cols = error_columns(measured, simulated, sim="simulated")
    out = {"drive": name, "requests": int(len(trace)), "demerit_ms": cols.pop("demerit_ms"),
           "disksim_demerit_ms": DISKSIM_DEMERIT_MS.get(name, float("nan")), **cols}
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

    from ..demerit import PROBS, quantiles

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
    try:
        fig.savefig(tmp)
        tmp.replace(path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
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


def _check_args(a) -> None:
    """Drive names, ``--n`` and ``--png`` (``ConfigError`` naming the option)."""
    import difflib

    for d in a.drives:
        if d not in DRIVES:
            close = difflib.get_close_matches(d, DRIVES, n=1, cutoff=0.6)
            raise ConfigError("drives", f"unknown drive {d!r} ("
                              + (f"did you mean {close[0]!r}? " if close else "")
                              + f"drives: {', '.join(DRIVES)})")
    if a.n < 0:
        raise ConfigError("--n", f"must be >= 0 (0 = every request), got {a.n}")
    if a.png:
        check_output_dir(a.png, "--png")


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.disksim [DRIVE ...] [--n N] [--png DIR]``: the table."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m pipeline.disksim",
                                 description="replay the DiskSim validation traces")
    ap.add_argument("drives", nargs="*", default=list(DRIVES))
    ap.add_argument("--n", type=int, default=0, help="first N requests only")
    ap.add_argument("--png", default="", help="write one CDF plot per drive into DIR")
    a = ap.parse_args(argv)
    try:
        _check_args(a)
    except ConfigError as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_CONFIG
    results = []
    for d in a.drives:
        r = validate_drive(d, a.n)
        results.append(r)
        if a.png:
            plot_cdfs(r, Path(a.png) / f"{d}_cdf.png")
    print(format_table(results))
    return 0
