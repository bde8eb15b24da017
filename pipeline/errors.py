"""Configuration errors and how they reach the user: one line, the key's name, exit 2.

Every way a config can be wrong - an unknown key, a wrong type, a value out of range
(a model's ``__post_init__`` raising ``ValueError("<key>: ...")``), a RAID naming a
device that does not exist, a group option that does not exist - ends up as a
``ConfigError(key, message)`` and is printed as::

    error: device.hdd0.rpm: must be > 0, got -1

``describe`` turns the exceptions Hydra and OmegaConf raise into that form.
``check_output_dir`` / ``check_output_file`` do the same for where a command will
write (``results.dir``, ``--out``), before anything runs or is written.
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from pathlib import Path

EXIT_CONFIG = 2   # like argparse: the command line / config was wrong, nothing ran
EXIT_FAILED = 1   # runs were attempted and some failed
EXIT_OUTPUT = 74  # sysexits.h EX_IOERR: results could not be written (disk full, read-only)


class ConfigError(ValueError):
    """A config value that cannot be run; ``key`` is the full dotted key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


class SweepFailed(RuntimeError):
    """Some runs of a sweep failed; their rows (status=failed) were still written."""


class Interrupted(Exception):
    """SIGTERM / Ctrl-C stopped a sweep between results; what was written stays."""

    def __init__(self, signum: int, ok: int, failed: int, not_run: int) -> None:
        super().__init__(f"interrupted by {signal_name(signum)}: {ok} ok, {failed} failed, "
                         f"{not_run} not run; run the same command again to resume")
        self.signum = signum
        self.code = 128 + signum


class OutputError(Exception):
    """Writing a result failed (disk full, quota, file system gone read-only) in the
    middle of a sweep: the sweep stops, what was written before stays whole, and the
    same command resumes once there is room. Exit status ``EXIT_OUTPUT``."""

    code = EXIT_OUTPUT

    def __init__(self, directory: str | os.PathLike, error: OSError, ok: int = 0,
                 failed: int = 0, not_run: int = 0) -> None:
        self.directory, self.error = str(directory), error
        self.ok, self.failed, self.not_run = ok, failed, not_run
        what = error.strerror or str(error)
        code = f" [{errno_name(error.errno)}]" if error.errno else ""
        super().__init__(f"results.dir: cannot write results under {self.directory!r}: "
                         f"{what}{code}; {ok} ok, {failed} failed, {not_run} not run; "
                         "make room (or fix the directory) and run the same command "
                         "again to resume")

    def counted(self, ok: int, failed: int, not_run: int) -> "OutputError":
        return OutputError(self.directory, self.error, ok, failed, not_run)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose mistakes are one line (``error: ...``, exit 2) instead of the
    usage text; an unknown option is named with the closest known one."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        m = re.match(r"unrecognized arguments: (\S+)", message)
        if m:
            flag = m.group(1).split("=", 1)[0]
            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            message = f"{flag}: unknown option" + did_you_mean(flag, known)
        print(one_line(f"error: {message}"), file=sys.stderr)
        raise SystemExit(EXIT_CONFIG)


def did_you_mean(word: str, candidates) -> str:
    """`` (did you mean 'x'?)`` naming the closest of ``candidates`` (difflib), or ``""``."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def yaml_error(ex: BaseException) -> "ConfigError | None":
    """A YAML syntax error (``yaml.YAMLError`` with a position) as ``<file>: line L,
    column C: <problem>``; the key is the file."""
    import yaml

    if not isinstance(ex, yaml.YAMLError):
        return None
    mark = getattr(ex, "problem_mark", None) or getattr(ex, "context_mark", None)
    problem = getattr(ex, "problem", None) or _first_line(str(ex))
    if mark is None:
        return ConfigError("", f"YAML syntax error: {_tidy(problem)}")
    return ConfigError(str(mark.name), f"YAML syntax error at line {mark.line + 1}, column "
                       f"{mark.column + 1}: {_tidy(problem)}")


def errno_name(code: int) -> str:
    return errno.errorcode.get(code, str(code))


def check_output_dir(path: str | os.PathLike, key: str) -> None:
    """``ConfigError(key, ...)`` unless ``path`` is a directory this process can write
    in, or one it can create: its nearest existing ancestor is a writable directory."""
    target = Path(os.path.abspath(path))
    probe = target
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        where = "" if probe == target else f"cannot create {str(target)!r}: "
        raise ConfigError(key, f"{where}{str(probe)!r} is not a directory")
    _check_writable(probe, key)


def png_path(path: str | os.PathLike) -> Path:
    """A figure's ``--out``: ``.png`` appended when the name has no suffix (matplotlib
    would write a PNG under the bare name); another suffix is the format asked for, and
    a directory stays one (``check_output_file`` says so)."""
    p = Path(path)
    return p if p.suffix or p.is_dir() else p.with_name(p.name + ".png")


def check_output_file(path: str | os.PathLike, key: str) -> None:
    """``ConfigError(key, ...)`` unless ``path`` can be written as a file: not a
    directory, in a directory that exists or can be created (``check_output_dir``)."""
    target = Path(os.path.abspath(path))
    if target.is_dir():
        raise ConfigError(key, f"{str(target)!r} is a directory; give a file name")
    check_output_dir(target.parent, key)
    if target.exists():
        _check_writable(target, key)


def _check_writable(path: Path, key: str) -> None:
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        raise ConfigError(key, f"cannot write to {str(path)!r}: read-only file system")
    mode = os.W_OK | (os.X_OK if path.is_dir() else 0)
    if not os.access(path, mode):
        raise ConfigError(key, f"cannot write to {str(path)!r}: permission denied")
    if path.is_dir():
        _probe_dir(path, key)


def _probe_dir(path: Path, key: str) -> None:
    """Create and remove an entry in ``path``: what permission bits and mount flags do
    not tell (root may write anywhere the bits say; ``/proc`` and ``/sys`` refuse new
    files whatever their modes, a full disk refuses even a directory)."""
    import tempfile

    try:
        probe = tempfile.mkdtemp(prefix=".dbio-write-check-", dir=path)
    except OSError as ex:
        what = ex.strerror or str(ex)
        if ex.errno == errno.ENOENT:   # /proc: the directory exists but takes no entries
            what = f"it accepts no new entries ({what}; a pseudo file system?)"
        raise ConfigError(key, f"cannot write to {str(path)!r}: {what}") from None
    try:
        os.rmdir(probe)
    except OSError:
        pass


def signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Abort(BaseException):
    """Ends the program with ``code`` after printing ``message`` (from ``main``).

    A BaseException, so that Hydra's job runner - which records an ``Exception`` from
    the task and prints its own "Error executing job" line - lets it through."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


_KEY_MSG = re.compile(r"^([A-Za-z_][\w.\[\]]*): (.*)$", re.S)


def from_value_error(prefix: str, ex: ValueError) -> ConfigError:
    """A model's ``ValueError("<key>: what")`` raised for the component at ``prefix``."""
    if isinstance(ex, ConfigError):
        key = f"{prefix}.{ex.key}" if prefix and ex.key else (prefix or ex.key)
        return ConfigError(key, ex.message)
    text = _first_line(str(ex))
    m = _KEY_MSG.match(text)
    if m:
        return ConfigError(f"{prefix}.{m.group(1)}" if prefix else m.group(1), m.group(2))
    return ConfigError(prefix, text)


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def describe(ex: BaseException) -> ConfigError | None:
    """The ``ConfigError`` an exception from Hydra/OmegaConf/validation stands for, or
    None if it is not a configuration problem (a bug or a failed simulation)."""
    from hydra.errors import (ConfigCompositionException, MissingConfigException,
                              OverrideParseException, SearchPathException)
    from omegaconf.errors import OmegaConfBaseException

    seen = set()
    chain = []
    cur: BaseException | None = ex
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__

    for e in chain:
        if isinstance(e, ConfigError):
            return e
    for e in chain:
        err = yaml_error(e)
        if err is not None:
            return err
    for e in chain:
        if isinstance(e, SearchPathException):   # --config-dir that does not exist
            m = re.search(r"directory '([^']*)'", str(e))
            return ConfigError("--config-dir", f"{m.group(1)!r} is not a directory" if m
                               else _tidy(_first_line(str(e))))
    for e in chain:
        if isinstance(e, OmegaConfBaseException):
            key = getattr(e, "full_key", None) or ""
            msg = _tidy(_first_line(getattr(e, "msg", None) or str(e)))
            if msg.startswith("Key '") and " not in " in msg:
                msg += did_you_mean(msg.split("'")[1], _known_keys(e))
            return ConfigError(key, msg)
    for e in chain:
        if isinstance(e, MissingConfigException):
            text = str(e).split("Config search path")[0]
            text = re.sub(r"^In '[^']*': ", "", text.strip())
            text = re.sub(r"\s*\nAvailable options", ". Available options", text)
            return ConfigError(_missing_key(e), _tidy(text) + _option_hint(e))
        if isinstance(e, OverrideParseException):
            override = getattr(e, "override", "") or ""
            key = override.partition("=")[0] if "=" in override else override
            return ConfigError(one_line(key), one_line(_tidy(_first_line(e.message))))
        if isinstance(e, ConfigCompositionException):
            text = str(e)
            m = re.search(r"'([^']+)'", _first_line(text))
            return ConfigError(m.group(1) if m else "", _tidy(text))
    for e in chain:
        # Hydra's own checks of an override that raise plain ValueError/TypeError (a
        # config group given a number: ``block=0``); the key is found by the caller.
        if isinstance(e, (ValueError, TypeError)) and _raised_in(e, ("/hydra/", "/omegaconf/")):
            return ConfigError("", _tidy(_first_line(str(e))))
    return None


def _raised_in(ex: BaseException, parts: tuple[str, ...]) -> bool:
    import traceback

    tb = traceback.extract_tb(ex.__traceback__)
    return bool(tb) and any(p in tb[-1].filename for p in parts)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with control and line-break characters escaped (``\\n``), so that an
    error about a value containing them is still one line."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode(), str(text))


def _missing_key(e: BaseException) -> str:
    """The group of a ``Could not find 'device/foo'`` / ``In 'x': Could not load 'g/o'``."""
    text = str(e)
    m = re.search(r"Could not (?:find|load) '([^']+)'", text)
    if m:
        return m.group(1).rsplit("/", 1)[0].lstrip("/") if "/" in m.group(1) else m.group(1)
    return getattr(e, "missing_cfg_file", "") or ""


def _known_keys(e: BaseException) -> list[str]:
    """The keys the node of an OmegaConf "Key 'x' not in 'Cls'" error does have."""
    import dataclasses

    cls = getattr(e, "object_type", None)
    if cls is not None and dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    parent = getattr(e, "parent_node", None)
    try:
        return [str(k) for k in parent.keys()] if parent is not None else []
    except Exception:  # noqa: BLE001 - only the hint is lost
        return []


def _option_hint(e: BaseException) -> str:
    """`` (did you mean 'x'?)`` for ``Could not find 'group/opton'``."""
    m = re.search(r"Could not (?:find|load) '([^']+)'", str(e))
    options = getattr(e, "options", None) or []
    if not m or not options:
        return ""
    return did_you_mean(m.group(1).rsplit("/", 1)[-1], options)


def _tidy(msg: str) -> str:
    return " ".join(msg.split())
