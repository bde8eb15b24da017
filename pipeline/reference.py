"""Reference tables: published (or your own measured) figures the simulator must
reproduce, one row per figure, read by ``python -m pipeline.validate``.

A reference file is CSV (``data/reference/published.csv`` is the project's; any number
of others in the same format can be added with ``--reference``). Lines starting with
``#`` are comments. Columns (header row required, any order):

=============  ====================================================================
``id``         unique across all files loaded together, e.g. ``E1.aio.16k_x1.MB_s``
``experiment`` ``conf/experiment/<name>.yaml``; a name with no such file yet makes
               the row *skipped* (reported with its reason, never a failure)
``case``       optional: a short human label (``16 KB x 1 per io_submit``)
``overrides``  Hydra overrides of the case, space-separated (shell quoting), on top
               of ``experiment=<experiment>``; no sweeps (``a=1,2``), no
               ``experiment=``/``hydra.`` keys
``metric``     the summary column to read (``iostat.sda.rMB_s``), or
               ``ratio(ID_A, ID_B)``: simulated A / simulated B of two other rows
``published``  the published number (empty only when ``tolerance`` is ``info``)
``unit``       optional: unit of ``published`` for tables and plots (``MB/s``)
``tolerance``  ``25%`` (simulated within 25 % of published, either way), ``<=2x``
               (at most twice published), ``>=0.5x`` (at least half), ``info``
               (shown, never checked)
``source``     where the number comes from (paper/blog, table or figure)
``kind``       what the row can tell: ``prediction`` (nothing was fitted to it),
               ``calibration`` (a parameter was chosen with this figure in view) or
               ``development`` (the mechanism was built while watching it); the
               column is optional - a file without it (your own measurements) is
               all ``prediction`` -, but where it is present every row sets it
``calibrated`` the parameter(s) chosen with the figure in view, as config keys
               separated by spaces (``fs.wakeup_ns device.sda.controller_latency_us``;
               the README's Calibrations table gives value and how it was chosen);
               required for ``calibration``, empty for ``prediction``, optional for
               ``development``
=============  ====================================================================

``pipeline.validate`` counts each kind apart: a figure met by a calibration shows the
parameter can be chosen, not that the model predicts it.

Errors name the file, line and row id: ``published.csv:7 (E1.aio.16k_x1.MB_s):
tolerance: expected N%, <=Nx, >=Nx or info, got '25'``. This module only reads and
checks the table's own syntax; ``pipeline.validate`` checks the overrides against the
configs (composing them) and the metrics against the runs.
"""
from __future__ import annotations

import csv
import fnmatch
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .columns import PARAM_SECTIONS

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO / "data" / "reference"
COLUMNS = ("id", "experiment", "case", "overrides", "metric", "published", "unit",
           "tolerance", "source", "kind", "calibrated")
REQUIRED = ("id", "experiment", "overrides", "metric", "published", "tolerance", "source")
CONFIG_SECTIONS = PARAM_SECTIONS + ("results", "hydra")
KINDS = ("prediction", "calibration", "development")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
_KEY = re.compile(r"^(?:%s)(\.[A-Za-z0-9_]+)+$" % "|".join(PARAM_SECTIONS))
_RATIO = re.compile(r"^ratio\(\s*([^,\s()]+)\s*,\s*([^,\s()]+)\s*\)$")
_TOL = re.compile(r"^(?:(?P<pct>\d+(?:\.\d+)?)\s*%|(?P<op><=|>=)\s*(?P<x>\d+(?:\.\d+)?)\s*x|(?P<info>info))$")


class ReferenceError(ValueError):
    """A malformed reference row (or file); the message is one line naming it."""


@dataclass(frozen=True)
class Tolerance:
    """How a simulated value is compared with the published one."""

    kind: str          # "rel" | "max" | "min" | "info"
    value: float = 0.0

    @classmethod
    def parse(cls, text: str) -> "Tolerance":
        m = _TOL.match(text.strip().lower())
        if not m:
            raise ValueError(f"expected N%, <=Nx, >=Nx or info, got {text!r}")
        if m.group("info"):
            return cls("info")
        if m.group("pct"):
            return cls("rel", float(m.group("pct")) / 100.0)
        x = float(m.group("x"))
        if x <= 0:
            raise ValueError(f"the factor must be > 0, got {text!r}")
        return cls("max" if m.group("op") == "<=" else "min", x)

    @property
    def checked(self) -> bool:
        return self.kind != "info"

    def within(self, simulated: float, published: float) -> bool | None:
        """True/False, or None for ``info`` rows and missing values."""
        if not self.checked or simulated is None or published is None:
            return None
        if not (math.isfinite(simulated) and math.isfinite(published)):
            return False
        if self.kind == "rel":
            # a hair of slack for the decimal representation of the bound itself
            return abs(simulated - published) <= self.value * abs(published) * (1 + 1e-12)
        if self.kind == "max":
            return simulated <= self.value * published
        return simulated >= self.value * published

    def __str__(self) -> str:
        if self.kind == "info":
            return "info"
        if self.kind == "rel":
            return f"{self.value * 100:g}%"
        return f"{'<=' if self.kind == 'max' else '>='}{self.value:g}x"


@dataclass(frozen=True)
class Reference:
    """One row of a reference table."""

    id: str
    experiment: str
    overrides: tuple[str, ...]
    metric: str
    published: float | None
    tolerance: Tolerance
    source: str
    case: str = ""
    unit: str = ""
    file: str = ""
    line: int = 0
    operands: tuple[str, ...] = field(default=())   # ratio(A, B): (A, B)
    kind: str = "prediction"                        # one of KINDS
    calibrated: tuple[str, ...] = field(default=())  # config keys chosen with it in view

    @property
    def derived(self) -> bool:
        return bool(self.operands)

    @property
    def where(self) -> str:
        """``file:line (id)`` - how errors name the row."""
        return f"{Path(self.file).name}:{self.line} ({self.id})" if self.file else self.id

    @property
    def label(self) -> str:
        return self.case or self.id

    def error(self, column: str, message: str) -> ReferenceError:
        return ReferenceError(f"{self.where}: {column}: {message}")


def _error(path: Path, line: int, rid: str, column: str, message: str) -> ReferenceError:
    where = f"{path.name}:{line}" + (f" ({rid})" if rid else "")
    return ReferenceError(f"{where}: {column}: {message}" if column else f"{where}: {message}")


def _number(text: str) -> float:
    v = float(text.replace(",", "").replace("_", ""))
    if not math.isfinite(v):
        raise ValueError("not a finite number")
    return v


def check_overrides(items: list[str]) -> None:
    """Hydra's own override grammar; one case per row (no sweeps); no keys the
    validation sets itself."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    try:
        parsed = OverridesParser.create().parse_overrides(items)
    except OverrideParseException as ex:
        raise ValueError(" ".join(str(ex).split())) from None
    for o in parsed:
        key = o.key_or_group
        if o.is_sweep_override():
            raise ValueError(f"{o.input_line!r} is a sweep; one case per row")
        if key == "experiment" or key.split("@")[0] == "experiment":
            raise ValueError("the experiment goes in the 'experiment' column")
        if key.startswith("hydra") or key.startswith("results"):
            raise ValueError(f"{key!r}: hydra and results settings are set by the validation")


def _row(path: Path, line: int, raw: dict) -> Reference:
    rid = (raw.get("id") or "").strip()
    if not rid:
        raise _error(path, line, "", "id", "empty")
    if not _ID.match(rid):
        raise _error(path, line, rid, "id", "letters, digits and _ . + - only")

    def bad(column: str, message: str) -> ReferenceError:
        return _error(path, line, rid, column, message)

    experiment = (raw.get("experiment") or "").strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", experiment):
        raise bad("experiment", f"expected an experiment name, got {experiment!r}")

    metric = (raw.get("metric") or "").strip()
    operands: tuple[str, ...] = ()
    m = _RATIO.match(metric)
    if m:
        operands = (m.group(1), m.group(2))
        if rid in operands:
            raise bad("metric", "a ratio cannot use its own row")
    elif not _COLUMN.match(metric):
        raise bad("metric", f"expected a column such as iostat.sda.r_s or ratio(ID_A, ID_B), "
                  f"got {metric!r}")
    elif metric.split(".", 1)[0] in CONFIG_SECTIONS:
        raise bad("metric", f"{metric!r} is a parameter column, not a metric")

    try:
        items = shlex.split(raw.get("overrides") or "")
    except ValueError as ex:
        raise bad("overrides", str(ex)) from None
    if operands and items:
        raise bad("overrides", "a ratio row has no overrides (its operands have)")
    try:
        check_overrides(items)
    except ValueError as ex:
        raise bad("overrides", str(ex)) from None

    try:
        tol = Tolerance.parse(raw.get("tolerance") or "")
    except ValueError as ex:
        raise bad("tolerance", str(ex)) from None

    text = (raw.get("published") or "").strip()
    published = None
    if text:
        try:
            published = _number(text)
        except ValueError:
            raise bad("published", f"not a number: {text!r}") from None
    elif tol.checked:
        raise bad("published", "empty (allowed only with tolerance 'info')")
    if published == 0 and tol.checked:
        raise bad("published", "0 cannot carry a relative tolerance")

    source = (raw.get("source") or "").strip()
    if not source:
        raise bad("source", "empty: say where the number comes from")
    kind, calibrated = _kind(raw, bad)
    return Reference(rid, experiment, tuple(items), metric, published, tol, source,
                     (raw.get("case") or "").strip(), (raw.get("unit") or "").strip(),
                     str(path), line, operands, kind, calibrated)


def _kind(raw: dict, bad) -> tuple[str, tuple[str, ...]]:
    """The row's kind and calibrated parameters (see the module docstring)."""
    kinds = ", ".join(KINDS)
    if "kind" in raw:
        kind = (raw.get("kind") or "").strip()
        if not kind:
            raise bad("kind", f"empty: one of {kinds}")
        if kind not in KINDS:
            raise bad("kind", f"expected one of {kinds}, got {kind!r}")
    else:
        kind = "prediction"
    keys = tuple((raw.get("calibrated") or "").split())
    for k in keys:
        if not _KEY.match(k):
            raise bad("calibrated", f"expected config keys such as device.sda.controller_latency_us "
                      f"(sections {', '.join(PARAM_SECTIONS)}), got {k!r}")
    if kind == "calibration" and not keys:
        raise bad("calibrated", "empty: a calibration row names the parameter(s) chosen "
                  "with its figure in view")
    if kind == "prediction" and keys:
        raise bad("calibrated", f"a prediction has no calibrated parameter (kind calibration?), "
                  f"got {' '.join(keys)!r}")
    return kind, keys


def read(path: str | Path) -> list[Reference]:
    """The rows of one reference file (raises ``ReferenceError``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as ex:
        raise ReferenceError(f"{path}: cannot read: {ex.strerror or ex}") from None
    except UnicodeDecodeError as ex:
        raise ReferenceError(f"{path}: not a CSV text file (byte {ex.start} is not UTF-8)") from None
    if "\0" in text:
        raise ReferenceError(f"{path}: not a CSV text file (it contains NUL bytes)")
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines())
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ReferenceError(f"{path.name}: no header row")
    reader = csv.reader([ln for _, ln in lines], skipinitialspace=True)
    header = [h.strip() for h in next(reader)]
    head_line = lines[0][0]
    for h in header:
        if h not in COLUMNS:
            raise _error(path, head_line, "", "", f"unknown column {h!r} (columns: {', '.join(COLUMNS)})")
    if len(set(header)) != len(header):
        raise _error(path, head_line, "", "", "a column appears twice")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise _error(path, head_line, "", "", f"missing column(s) {', '.join(missing)}")
    rows = []
    for (line, _), cells in zip(lines[1:], reader):
        if len(cells) != len(header):
            rid = cells[0].strip() if cells and "id" == header[0] else ""
            raise _error(path, line, rid, "", f"{len(cells)} cells, the header has {len(header)}")
        rows.append(_row(path, line, dict(zip(header, cells))))
    if not rows:
        raise ReferenceError(f"{path.name}: no rows (only the header)")
    return rows


def load(paths: list[str | Path]) -> list[Reference]:
    """Rows of several files, ids unique across them, ratio operands resolved."""
    rows: list[Reference] = []
    seen: dict[str, Reference] = {}
    for p in paths:
        for r in read(p):
            if r.id in seen:
                raise r.error("id", f"duplicate of {seen[r.id].where}")
            seen[r.id] = r
            rows.append(r)
    for r in rows:
        for op in r.operands:
            if op not in seen:
                raise r.error("metric", f"ratio operand {op!r} is no row id")
    _no_cycles(rows, seen)
    return rows


def _no_cycles(rows: list[Reference], by_id: dict[str, Reference]) -> None:
    state: dict[str, int] = {}

    def visit(r: Reference) -> None:
        if state.get(r.id) == 2:
            return
        if state.get(r.id) == 1:
            raise r.error("metric", "ratio operands form a cycle")
        state[r.id] = 1
        for op in r.operands:
            visit(by_id[op])
        state[r.id] = 2

    for r in rows:
        visit(r)


def default_files() -> list[Path]:
    return sorted(DEFAULT_DIR.glob("*.csv"))


def select(rows: list[Reference], patterns: list[str]) -> list[Reference]:
    """Rows whose id matches one of ``patterns`` (exact ids or shell patterns such as
    ``E1.aio.*``), plus every row a selected ratio needs; table order kept."""
    if not patterns:
        return list(rows)
    by_id = {r.id: r for r in rows}
    want: set[str] = set()
    for p in patterns:
        hits = [r.id for r in rows if fnmatch.fnmatchcase(r.id, p)]
        if not hits:
            raise ReferenceError(f"--only: {p!r} matches no row id")
        want.update(hits)
    stack = list(want)
    while stack:
        for op in by_id[stack.pop()].operands:
            if op not in want:
                want.add(op)
                stack.append(op)
    return [r for r in rows if r.id in want]
