"""Import a DiskSim drive description as a device config for the HDD model.

    python -m pipeline.import_disksim data/disksim-valid/atlas10k.diskspecs \
        [--out conf/device/disksim_atlas10k.yaml]

Reads ``NAME.diskspecs`` and the ``.model`` / ``.seek`` / ``.parv`` files beside it
(``pipeline.disksim``) and writes YAML whose keys are exactly the fields of
``models.device.hdd.HDDConfig``, after ``type: hdd`` (the pipeline's device type: the
file is a ``conf/device/`` option). Every value comes from the drive's own files; the
mapping (DiskSim parameter -> field) is ``pipeline.disksim.mapping``'s; what the files
hold that HDDConfig cannot express is listed by ``unmapped(spec)`` and written as
comments at the top of the YAML.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import yaml

from .errors import EXIT_CONFIG, ConfigError, check_output_file, one_line
from .disksim import DATA_DIR, DRIVES, DiskSpec, read_diskspecs
from .disksim.mapping import to_hdd_dict, unmapped

REPO = Path(__file__).resolve().parent.parent
CONF_DIR = REPO / "conf" / "device"
# libyaml's loader and dumper when PyYAML has them (the same documents, ~3-6x faster on
# a drive's zone and seek tables than the pure-Python ones); else the pure-Python ones
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(data, **kw) -> str:
    return yaml.dump(data, Dumper=_DUMPER, **kw)


def _load(text: str):
    return yaml.load(text, Loader=_LOADER)


def render_yaml(spec: DiskSpec, src: Path) -> str:
    d = to_hdd_dict(spec)
    head = [
        f"# {spec.name}: imported from DiskSim {src.name} (+ .model/.seek/.parv) by",
        f"#   python -m pipeline.import_disksim {src.as_posix()}",
        "# `type: hdd` is the pipeline's device type; the other keys are",
        "# models.device.hdd.HDDConfig fields, and their values come only from the drive's files.",
        "# DiskSim parameters HDDConfig cannot express (not modelled for this drive):",
    ]
    head += [f"#  - {line}" for line in unmapped(spec)] or ["#  (none)"]
    flow_lists = {"seek_curve_cyl", "seek_curve_ms"}
    lines = ["type: hdd"]
    for k, v in d.items():
        if k == "zones":
            lines.append("zones:")
            for z in v:
                lines.append("  - " + _dump(z, default_flow_style=True, width=10**9,
                                            sort_keys=False).strip())
        elif k in flow_lists:
            lines.append(f"{k}: " + _dump(v, default_flow_style=True, width=100).strip()
                         .replace("\n", "\n  "))
        else:
            lines.append(_dump({k: v}, default_flow_style=False, sort_keys=False).strip())
    return "\n".join(head + lines) + "\n"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def import_drive(diskspecs: str | Path, out: str | Path | None = None) -> Path:
    """Import one drive; returns the path written (default conf/device/disksim_NAME.yaml)."""
    src = Path(diskspecs)
    spec = read_diskspecs(src)
    out = Path(out) if out else CONF_DIR / f"disksim_{src.stem}.yaml"
    try:
        shown = src.resolve().relative_to(REPO)
    except ValueError:
        shown = src
    text = render_yaml(spec, shown)
    _as_hdd_config(_load(text))   # the model's own range checks, before writing
    write_atomic(out, text)
    return out


def _as_hdd_config(d: dict):
    from models.device.hdd import HDDConfig

    d = dict(d)
    if d.pop("type", "hdd") != "hdd":
        raise ValueError("type: expected hdd")
    d["zones"] = tuple(d["zones"])
    for k in ("seek_curve_cyl", "seek_curve_ms"):
        d[k] = tuple(d.get(k, ()))
    return HDDConfig(**d)


def load_hdd_config(path: str | Path):
    """Read an imported YAML back as an HDDConfig (what a replay uses); the pipeline's
    ``type`` key is not a field and is dropped."""
    try:
        return _as_hdd_config(_load(Path(path).read_text()))
    except ValueError as ex:
        raise ValueError(f"{path}: {ex}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.import_disksim",
                                 description="DiskSim .diskspecs -> HDD device config YAML")
    ap.add_argument("diskspecs", nargs="?", help="PATH/NAME.diskspecs")
    ap.add_argument("--out", help="output YAML (default conf/device/disksim_NAME.yaml)")
    ap.add_argument("--all", action="store_true",
                    help="import the seven validation drives of data/disksim-valid")
    a = ap.parse_args(argv)
    if a.all:
        for name in DRIVES:
            print(import_drive(DATA_DIR / f"{name}.diskspecs"))
        return 0
    if not a.diskspecs:
        ap.error("give NAME.diskspecs or --all")
    try:
        if a.out:
            check_output_file(a.out, "--out")
        path = import_drive(a.diskspecs, a.out)
    except ConfigError as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_CONFIG
    except OSError as ex:
        print(one_line(f"error: {ex.filename or a.diskspecs}: cannot read: {ex.strerror or ex}"),
              file=sys.stderr)
        return EXIT_CONFIG
    except (ValueError, KeyError, IndexError) as ex:
        what = f"missing parameter {ex}" if isinstance(ex, KeyError) else str(ex).splitlines()[0]
        print(one_line(f"error: {a.diskspecs}: {what}"), file=sys.stderr)
        return EXIT_CONFIG
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
