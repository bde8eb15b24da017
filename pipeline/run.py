"""``python -m pipeline.run``: the Hydra app that simulates one configuration or a sweep.

    python -m pipeline.run                                  # one run of conf/config.yaml
    python -m pipeline.run experiment=aio_batch workload.bs=1m
    python -m pipeline.run -m experiment=aio_batch          # the experiment's sweep, on Ray
    python -m pipeline.run -m experiment=aio_batch hydra/launcher=serial
    python -m pipeline.run -m run.seed=1,2,3 block=noop,deadline
    python -m pipeline.run --cfg job experiment=aio_batch   # print the composed config
    python -m pipeline.run -m experiment=aio_batch --rerun  # also runs whose results exist
    python -m pipeline.run -m experiment=aio_batch --dry-run  # validate, say what would run

Every run lands as ``outputs/experiment=<name>/run=<config_hash>/summary.parquet``; a
DuckDB summary of the runs is printed at the end. A sweep (``-m``) resumes: runs whose
valid results exist (same config, same code version, status ok) are skipped, failed
ones run again; ``--rerun`` (= ``hydra.launcher.rerun=true``) runs everything. A
single run (no ``-m``) always runs. ``--dry-run`` (= ``hydra.launcher.dry_run=true``)
validates every job and runs none.

Errors in the configuration (unknown key, wrong type, value out of range, a RAID
member that does not exist, a group option that does not exist) print one line,
``error: <key>: <message>``, exit with status 2 and write nothing. A sweep with failed
runs writes every row (``status='failed'``, ``error``) and exits with status 1.
SIGTERM or Ctrl-C stop a sweep between results: exit status 128 + the signal, what
was written stays, the same command resumes. A result that cannot be written (disk
full, quota, a file system gone read-only) stops the sweep the same way, with one line
naming the directory and the error and exit status 74 (``EX_IOERR``).
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .errors import (EXIT_CONFIG, EXIT_FAILED, Abort, ConfigError, Interrupted, OutputError,
                     SweepFailed, describe, did_you_mean, one_line)

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
# A user's own experiments and device presets, kept out of git (.gitignore): searched
# after conf/ like a --config-dir (conf/local/experiment/mine.yaml is experiment=mine).
LOCAL_DIR = CONF_DIR / "local"


def searchpath_override(extra: list[Path] | tuple = ()) -> str | None:
    """``hydra.searchpath=[file://...]`` adding ``extra`` directories and ``conf/local/``
    (when it exists) after ``conf/``; None when there are none."""
    dirs = [Path(d).resolve() for d in extra] + ([LOCAL_DIR] if LOCAL_DIR.is_dir() else [])
    if not dirs:
        return None
    def quoted(d: Path) -> str:   # a path with spaces or commas stays one element
        return "'file://" + str(d).replace("\\", "\\\\").replace("'", "\\'") + "'"

    return "hydra.searchpath=[" + ",".join(quoted(d) for d in dirs) + "]"

# Flags of this app (not Hydra's): each is an override of the launcher's settings.
FLAGS = {"--rerun": "hydra.launcher.rerun=true", "--dry-run": "hydra.launcher.dry_run=true"}
# Hydra's own command-line options (hydra/_internal/utils.py get_args_parser)
HYDRA_FLAGS = ("--help", "-h", "--hydra-help", "--version", "--cfg", "-c", "--resolve",
               "--package", "-p", "--run", "-r", "--multirun", "-m", "--shell-completion",
               "-sc", "--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd",
               "--experimental-rerun", "--info", "-i")


# Hydra's options that take a value as the next argument, and --info's optional one
VALUE_FLAGS = ("--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name",
               "-cn", "--config-dir", "-cd", "--experimental-rerun")
INFO_VALUES = ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath")


def hoist_flags(argv: list[str]) -> list[str]:
    """The options (with their values) before the overrides, in their order: Hydra's
    parser takes the overrides as one run of positional arguments, so ``key=v -m
    key2=a,b`` would end in argparse's usage and "unrecognized arguments"."""
    flags, overrides = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-"):
            flags.append(a)
            takes = a in VALUE_FLAGS or (a in ("--info", "-i") and i + 1 < len(argv)
                                         and argv[i + 1] in INFO_VALUES)
            if takes and i + 1 < len(argv):
                flags.append(argv[i + 1])
                i += 1
        else:
            overrides.append(a)
        i += 1
    return flags + overrides


def check_flags(argv: list[str]) -> None:
    """``ConfigError`` naming an option that is neither Hydra's nor this app's, with the
    closest known one (argparse would print its whole usage)."""
    known = (*FLAGS, *HYDRA_FLAGS)
    for a in argv:
        if a.startswith("-") and a.split("=", 1)[0] not in known:
            flag = a.split("=", 1)[0]
            raise ConfigError(flag, "unknown option" + did_you_mean(
                flag, [k for k in known if k.startswith("--")]))


def task(cfg) -> None:
    """Hydra task function: one run, in this process (always run; no resume)."""
    from hydra.core.hydra_config import HydraConfig

    from .fanout import prepare_run, sweep
    from .sweep import experiment_name
    from .version import code_version

    try:
        hydra_cfg = HydraConfig.get()
        spec = prepare_run(cfg, experiment_name(hydra_cfg), code_version())
        if hydra_cfg.launcher.get("dry_run", False):
            print(f"dry run: 1 run valid ({spec.experiment}, {spec.config_hash})")
            return
        sweep([spec], None, rerun=True, label=f"{spec.experiment}: run")
    except SweepFailed as ex:
        raise Abort(EXIT_FAILED, f"error: {ex}") from None
    except (Interrupted, OutputError) as ex:
        raise Abort(ex.code, f"error: {ex}") from None
    except Exception as ex:
        err = describe(ex)
        if err is None:
            raise
        raise Abort(EXIT_CONFIG, f"error: {err}") from None


def name_group_override(argv: list[str], err: ConfigError) -> ConfigError:
    """An error without a key (Hydra: "Config group override must be a string...") is
    pinned on the override that gives a config group something other than an option
    name, listing the group's options."""
    if err.key:
        return err
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for a in argv:
        if a.startswith("-") or "=" not in a:
            continue
        try:
            o = parser.parse_override(a)
            group, value, key = o.key_or_group, o.value(), o.get_key_element().lstrip("+~")
        except Exception:
            continue
        if (CONF_DIR / group).is_dir() and not isinstance(value, (str, list)):
            options = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
            return ConfigError(key, f"must name an option of the group ({', '.join(options)}), "
                               f"got {a.partition('=')[2]!r}")
    return err


_KERNEL_CHOICE = re.compile(r"(kernel=)([0-9][0-9.]*(?:,[0-9][0-9.]*)*)")


def quote_kernel(arg: str) -> str:
    """``kernel=3.10`` names the option ``conf/kernel/3.10.yaml``; Hydra would read 3.10
    as the number 3.1 (and refuse a number as a group choice), so release names on the
    command line are quoted for it: ``kernel='3.10'`` (a sweep ``kernel=3.10,5.15``
    element by element)."""
    m = _KERNEL_CHOICE.fullmatch(arg)
    if m is None:
        return arg
    return m.group(1) + ",".join(f"'{v}'" for v in m.group(2).split(","))


def main(argv: list[str] | None = None) -> int:
    """Run the Hydra app with ``argv``; returns the exit status."""
    import hydra

    from .schema import register

    # Let every exception reach this function (Hydra would print its own report and
    # exit 1); configuration errors are reported below in one line.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    register()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        check_flags(argv)
    except ConfigError as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_CONFIG
    argv = hoist_flags([a for a in argv if a not in FLAGS]) + [FLAGS[a] for a in dict.fromkeys(argv)
                                                               if a in FLAGS]
    argv = [quote_kernel(a) for a in argv]
    local = searchpath_override()
    if local and not any(a.startswith("hydra.searchpath") for a in argv):
        argv.append(local)
    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(task)
    saved = sys.argv
    sys.argv = [saved[0] if saved else "pipeline.run"] + argv
    try:
        app()
    except Abort as ex:
        print(one_line(ex.message), file=sys.stderr)
        return ex.code
    except SystemExit as ex:  # --help, argparse errors
        return ex.code if isinstance(ex.code, int) else (0 if ex.code is None else EXIT_CONFIG)
    except SweepFailed as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return EXIT_FAILED
    except (Interrupted, OutputError) as ex:
        print(one_line(f"error: {ex}"), file=sys.stderr)
        return ex.code
    except Exception as ex:
        err = describe(ex)
        if err is None:
            raise
        print(one_line(f"error: {name_group_override(argv, err)}"), file=sys.stderr)
        return EXIT_CONFIG
    finally:
        sys.argv = saved
    return 0


if __name__ == "__main__":
    sys.exit(main())
