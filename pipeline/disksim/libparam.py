"""DiskSim's libparam syntax: ``TYPE NAME { Key words = value, ... }`` with nested
blocks, ``[ lists ]``, ``# comments``, ``source FILE`` includes, ``instantiate`` and
``topology`` statements (the format of .diskspecs, .model and .parv files).
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r"[{}\[\],=]|[^\s{}\[\],=]+")


class ParamBlock(dict):
    """A ``TYPE { ... }`` block: a dict of its keys plus the block's ``type`` words."""

    def __init__(self, type_: str = "") -> None:
        super().__init__()
        self.type = type_


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, line) tokens; kind is 'p' (punctuation) or 'w' (word)."""
    out: list[tuple[str, str, int]] = []
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        for tx in _TOKEN.findall(line):
            out.append(("p" if tx in "{}[],=" and len(tx) == 1 else "w", tx, ln))
    return out


def _scalar(words: list[str]):
    s = " ".join(words)
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", 0)

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def expect(self, p: str) -> None:
        t = self.take()
        if t[1] != p:
            raise ValueError(f"libparam: expected {p!r} at line {t[2]}, got {t[1]!r}")

    def words_on_line(self) -> list[str]:
        """Words up to punctuation or the end of the first word's line."""
        words: list[str] = []
        line = None
        while True:
            kind, tx, ln = self.peek()
            if kind != "w" or (line is not None and ln != line):
                return words
            line = ln
            words.append(tx)
            self.i += 1

    def value(self):
        words = self.words_on_line()
        kind, tx, _ = self.peek()
        if kind == "p" and tx == "{":
            self.take()
            return self.block(" ".join(words))
        if kind == "p" and tx == "[":
            self.take()
            lst = self.list_()
            return lst if not words else {"type": " ".join(words), "children": lst}
        return _scalar(words)

    def list_(self) -> list:
        out: list = []
        while True:
            kind, tx, _ = self.peek()
            if kind == "eof":
                raise ValueError("libparam: unterminated list")
            if tx == "]":
                self.take()
                return out
            if tx == ",":
                self.take()
                continue
            out.append(self.value())

    def block(self, type_: str) -> ParamBlock:
        blk = ParamBlock(type_)
        while True:
            kind, tx, ln = self.peek()
            if kind == "eof":
                raise ValueError(f"libparam: unterminated block {type_!r}")
            if tx == "}":
                self.take()
                return blk
            if tx == ",":
                self.take()
                continue
            key: list[str] = []
            while self.peek()[0] == "w":
                key.append(self.take()[1])
            if self.peek()[1] != "=":
                # a bare word list without '=' (tolerated, ignored)
                if self.peek()[1] in ("}", ","):
                    continue
                raise ValueError(f"libparam: expected '=' after {' '.join(key)!r} at line {ln}")
            self.take()
            blk[" ".join(key)] = self.value()

    def top(self) -> list[tuple]:
        """Top-level items: ('block', type_words, ParamBlock), ('source', file),
        ('instantiate', [names], as_name), ('topology', tree)."""
        items: list[tuple] = []
        while self.peek()[0] != "eof":
            kind, tx, ln = self.peek()
            if kind == "w" and tx == "source":
                self.take()
                items.append(("source", self.take()[1]))
                continue
            if kind == "w" and tx == "instantiate":
                self.take()
                self.expect("[")
                names = [str(v) for v in self.list_()]
                if self.peek()[1] == "as":
                    self.take()
                items.append(("instantiate", names, self.take()[1]))
                continue
            if kind == "w" and tx == "topology":
                self.take()
                items.append(("topology", self.value()))
                continue
            words = []
            while self.peek()[0] == "w":
                words.append(self.take()[1])
            kind, tx, ln = self.take()
            if tx == "{":
                items.append(("block", " ".join(words), self.block(" ".join(words))))
            elif tx == "[":
                items.append(("list", " ".join(words), self.list_()))
            elif kind == "eof":
                break
            else:
                raise ValueError(f"libparam: unexpected {tx!r} at line {ln}")
        return items


def parse_params(text: str) -> list[tuple]:
    """Parse libparam text into top-level items (see ``_Parser.top``)."""
    return _Parser(text).top()


def _first_block(items: list[tuple], type_prefix: str) -> tuple[str, ParamBlock]:
    for it in items:
        if it[0] == "block" and it[1].split()[0] == type_prefix:
            return it[1], it[2]
    raise ValueError(f"no {type_prefix} block found")
