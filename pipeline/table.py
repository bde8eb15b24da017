"""Tables for a terminal, a pipe or a log: every table this project prints
(the end-of-sweep summary, ``pipeline.query``, ``best``, ``pipeline.validate``).

- The first ``key`` columns name the run: parameter values as written (``100000``).
- Numbers are right-aligned, never split across lines, and a column's numbers share
  one number of decimals (enough for three significant digits of its smallest
  non-zero value, at most 4; integers with thousands separators).
- A header longer than its column's values is wrapped at its dots and underscores
  (``mysqlslap.`` / ``fsyncs_per_trx_redo``), never inside a word or a number.
- The table fits the width: the terminal's, else ``$COLUMNS``, else 120 (a pipe, a
  CI log). Columns after ``optional_from`` that do not fit are left out (said in a
  note); if the rest is still too wide, the table is printed as several, each
  repeating the first ``key`` columns (the run's name), so nothing is ever cut.
- Text (a run's name, ``best``'s ``config``) wraps at its spaces when the width is
  short; text longer than 200 characters (an error message) is elided with ``…``.
"""
from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Sequence

PIPE_WIDTH = 120
MAX_TEXT = 200
MIN_TEXT = 24    # a text column is not squeezed below this (or its longest word)
GAP = 2          # characters between two columns


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def format_column(values: Sequence[Any]) -> list[str]:
    """The cells of one column, numbers formatted alike (see the module docstring)."""
    nums = [v for v in values if is_number(v) and math.isfinite(v)]
    if not nums or len(nums) < sum(1 for v in values if v is not None and not
                                   (isinstance(v, float) and math.isnan(v))):
        return [_text(v) for v in values]       # text, or mixed: as they are
    if all(float(v).is_integer() for v in nums) and max(abs(v) for v in nums) < 1e15:
        decimals = 0
    else:
        small = min((abs(v) for v in nums if v), default=1.0)
        decimals = max(0, min(4, 2 - math.floor(math.log10(small))))
    out = []
    for v in values:
        if v is None:
            out.append("")
        elif not math.isfinite(v):
            out.append(str(v))
        else:
            out.append(f"{v:,.{decimals}f}")
    return out


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def header_tokens(name: str) -> list[str]:
    """``mysqlslap.fsyncs_per_trx`` -> ``mysqlslap.``, ``fsyncs_``, ``per_``, ``trx``
    (``within tolerance`` -> ``within ``, ``tolerance``)."""
    return [t for t in re.findall(r"[^._ ]*[._ ]?", name) if t]


def wrap_header(name: str, width: int) -> list[str]:
    """``name`` in lines of at most ``width`` characters, broken after dots first,
    then after underscores (a token longer than ``width`` keeps its line)."""
    lines: list[str] = []
    for part in [p for p in re.findall(r"[^.]*\.?", name) if p]:
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
            continue
        if len(part) <= width:
            lines.append(part)
            continue
        for tok in header_tokens(part):
            if lines and len(lines[-1]) + len(tok.rstrip()) <= width and not lines[-1].endswith("."):
                lines[-1] += tok
            else:
                lines.append(tok)
    return [ln.rstrip() for ln in lines] or [""]


@dataclass
class _Col:
    name: str
    cells: list[str]
    numeric: bool
    width: int = 0
    group: str = ""     # a prefix shared with its neighbours, printed once above them

    @property
    def head(self) -> str:
        return self.name[len(self.group):]

    @property
    def min_width(self) -> int:
        head = max(len(t.rstrip()) for t in header_tokens(self.head) or [""])
        if self.numeric:
            return max([len(c) for c in self.cells] + [head])
        words = max([len(w) for c in self.cells for w in c.split()] + [0])
        return max(head, words, min(MIN_TEXT, max([len(c) for c in self.cells] + [0])))

    def lines(self, r: int) -> list[str]:
        """Row ``r``'s cell in lines of the column's width (text wraps at spaces)."""
        cell = self.cells[r]
        if self.numeric or len(cell) <= self.width:
            return [cell]
        import textwrap

        return textwrap.wrap(cell, self.width, break_long_words=False) or [""]

    @property
    def full_width(self) -> int:
        return max([len(c) for c in self.cells] + [len(self.head)])


def output_width(out) -> int:
    """The width to fit: the terminal's, else ``$COLUMNS``, else ``PIPE_WIDTH``."""
    try:
        if out.isatty():
            return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return PIPE_WIDTH


def _columns(names: Sequence[str], rows: Sequence[Sequence[Any]], key: int = 0) -> list[_Col]:
    cols = []
    for i, n in enumerate(names):
        values = [r[i] for r in rows]
        # a run's name shows parameter values as written (nr_requests=100000)
        cells = [_text(v) for v in values] if i < key else format_column(values)
        numeric = any(is_number(v) for v in values) and all(
            v is None or is_number(v) for v in values)
        if not numeric:
            cells = [c if len(c) <= MAX_TEXT else c[:MAX_TEXT - 1] + "…" for c in cells]
        cols.append(_Col(str(n), cells, numeric))
    return cols


def _group(cols: Sequence[_Col]) -> None:
    """Neighbouring columns with one first dotted part (``mysqlslap.tps``,
    ``mysqlslap.fsyncs_redo_s``) print it once, above them."""
    i = 0
    while i < len(cols):
        prefix = cols[i].name.split(".", 1)[0] + "." if "." in cols[i].name else ""
        j = i
        while prefix and j < len(cols) and cols[j].name.startswith(prefix) and len(cols[j].name) > len(prefix):
            j += 1
        for c in cols[i:j] if j - i > 1 else ():
            c.group = prefix
        i = max(j, i + 1)


def _total(cols: Sequence[_Col], attr: str = "width") -> int:
    return sum(getattr(c, attr) for c in cols) + GAP * max(0, len(cols) - 1)


def _fit(cols: list[_Col], width: int) -> None:
    """Each column's width: its minimum, then widened (fewer header lines) while the
    table still fits."""
    for c in cols:
        c.width = c.min_width
    spare = width - _total(cols)
    # first unwrap text cells, then headers; the smallest needs first
    for target in (lambda c: max([len(x) for x in c.cells] + [c.width]), lambda c: c.full_width):
        for c in sorted(cols, key=lambda c: target(c) - c.width):
            more = min(spare, target(c) - c.width)
            if more > 0:
                c.width += more
                spare -= more


def layout(names: Sequence[str], rows: Sequence[Sequence[Any]], width: int, key: int = 0,
           optional_from: int | None = None) -> tuple[list[list[_Col]], list[str]]:
    """The tables to print (lists of sized columns) and the names of columns left out."""
    cols = _columns(names, rows, key)
    dropped: list[str] = []
    if optional_from is not None:
        while len(cols) > optional_from and _total(cols, "min_width") > width:
            dropped.insert(0, cols.pop().name)
    keys, rest = cols[:key], cols[key:]
    _group(rest)
    tables: list[list[_Col]] = []
    while rest or not tables:
        part = list(keys)
        while rest and (len(part) == len(keys) or _total(part + rest[:1], "min_width") <= width):
            part.append(rest.pop(0))
        _fit(part, width)
        tables.append(part)
        if not rest:
            break
    return tables, dropped


def render(names: Sequence[str], rows: Sequence[Sequence[Any]], width: int, title: str | None = None,
           key: int = 0, optional_from: int | None = None) -> str:
    """The text of the table(s), lines of at most ``width`` characters (unless one
    column alone is wider)."""
    tables, dropped = layout(names, rows, width, key, optional_from)
    lines: list[str] = []
    if title:
        import textwrap

        lines += textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False)
    for t in tables:
        spans = _spans(t)
        if spans.strip():
            lines.append(spans)
        heads = [wrap_header(c.head, c.width) for c in t]
        depth = max(len(h) for h in heads)
        for i in range(depth):
            # the header's last line sits just above the rule
            cells = [(h[i - (depth - len(h))] if i >= depth - len(h) else "") for h in heads]
            lines.append(_line(t, cells))
        lines.append("  ".join("-" * c.width for c in t))
        for r in range(len(rows)):
            cells = [c.lines(r) for c in t]
            for i in range(max(len(x) for x in cells)):
                lines.append(_line(t, [x[i] if i < len(x) else "" for x in cells]))
        lines.append("")
    if dropped:
        import textwrap

        lines += textwrap.wrap(f"(not shown, too wide: {', '.join(dropped)})", width,
                               break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).rstrip("\n") + "\n"


def _spans(cols: Sequence[_Col]) -> str:
    """The line of group labels: ``mysqlslap. ------`` over the group's columns."""
    out, i = [], 0
    while i < len(cols):
        g = cols[i].group
        j = i + 1
        while g and j < len(cols) and cols[j].group == g:
            j += 1
        span = sum(c.width for c in cols[i:j]) + GAP * (j - i - 1)
        text = (g + " " + "-" * max(0, span - len(g) - 1))[:span] if g else ""
        out.append(text.ljust(span))
        i = j
    return (" " * GAP).join(out).rstrip()


def _line(cols: Sequence[_Col], cells: Sequence[str]) -> str:
    return (" " * GAP).join(s.rjust(c.width) if c.numeric else s.ljust(c.width)
                            for c, s in zip(cols, cells)).rstrip()


def print_table(names: Sequence[str], rows: Sequence[Sequence[Any]], out=None,
                title: str | None = None, key: int = 0, optional_from: int | None = None,
                width: int | None = None) -> None:
    out = out or sys.stdout
    text = render(names, rows, width or output_width(out), title, key, optional_from)
    out.write(text)
    out.flush()
