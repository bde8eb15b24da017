"""What a client asks of the InnoDB server: tables, and transactions as lists of row
operations. The contract between OLTP workloads (sysbench, TPC-C) and the engine that
runs them (``InnoDBServer``); neither side imports the other's internals.

Modelled: the row operations sysbench 1.0's ``oltp_*`` tests and TPC-C issue, each on a
named table through a named index (``PRIMARY`` - the clustered index - or a secondary
index such as sysbench's ``k``), with the key it starts at and how many rows it reads
(a range). ``variant`` says how the server finishes a range read: ``""`` (rows
returned), ``"sum"`` (``SELECT SUM(k)``), ``"order"`` (``ORDER BY c``, a filesort),
``"distinct"`` (``SELECT DISTINCT c ... ORDER BY c``). An ``insert`` carries the key of
the new row - except into a table keyed on InnoDB's hidden row id or an
AUTO_INCREMENT column (``TableDef.clustered_key``, mysqlslap's ``t1``), where the
server assigns it (the key passed is ignored); a ``delete`` the key it removes.
``sql_bytes``: the statement's text length, the size of its STATEMENT-format binary
log event (0: the server's estimate).

The server's side (``yield from server.run(thd, trx)`` in a simulated client thread):
each operation costs CPU, descends its index through the buffer pool (reads on misses,
dirties pages on changes, takes row locks), and the transaction commits through the
commit protocol. ``Transaction.autocommit``: every operation is its own transaction
(sysbench ``--skip_trx``); otherwise ``BEGIN`` ... ``COMMIT`` around all of them.

Growing tables (TPC-C's ORDERS, ORDER_LINE, NEW_ORDER): ``TableDef.groups`` > 1 says
the primary key is (group, sequence) - TPC-C's (warehouse, district) then the order
number - and every group grows at its own right end; ``TableDef.key(group, seq)`` is
the integer key of such a row (``rows // groups`` loaded per group keep keys 1..rows in
key order; rows inserted after the load take keys above ``rows``, interleaved by
group). A range read on such a table reads the next rows of the same group.
``Transaction.rollback``: the client ends the transaction with ``ROLLBACK`` (TPC-C's
New-Order with an unused item number) instead of ``COMMIT``.

Deliberately not here: SQL text, the optimiser, joins (a TPC-C statement that joins is
issued as the row operations it performs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

OP_KINDS = ("point_select", "range_select", "update_index", "update_non_index",
            "insert", "delete")
RANGE_VARIANTS = ("", "sum", "order", "distinct")
WRITE_KINDS = frozenset(("update_index", "update_non_index", "insert", "delete"))  # row changes
PRIMARY = "PRIMARY"
CLUSTERED_KEYS = ("primary", "row_id", "auto_increment")


@dataclass(frozen=True)
class TableDef:
    """One table: ``rows`` rows of ``row_bytes`` each (the clustered record, without
    InnoDB's hidden columns), keyed by an integer primary key 1..rows, with secondary
    indexes on integer columns (``secondary``: their names, e.g. sysbench's ``("k",)``),
    each entry ``key_bytes`` long. ``clustered_key``: what the clustered index is keyed
    on - ``primary`` (that integer key), ``row_id`` (no primary key: InnoDB's hidden
    ``DB_ROW_ID`` from the server-wide counter) or ``auto_increment`` (an AUTO_INCREMENT
    column); with the last two every insert goes to the right-most leaf. ``groups`` > 1:
    the key is (group, sequence) - TPC-C's ORDERS by district - and each group grows
    at its own right end (``key`` / ``group_seq``; ``server/layout.py``). ``unique``: the
    secondary indexes declared UNIQUE (the others are non-unique: the change buffer may
    buffer their changes)."""
    name: str
    rows: int
    row_bytes: int
    secondary: tuple[str, ...] = ()
    key_bytes: int = 4
    clustered_key: str = "primary"
    groups: int = 1
    unique: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.clustered_key not in CLUSTERED_KEYS:
            raise ValueError(f"TableDef.clustered_key: {self.clustered_key!r} is not one of "
                             f"{', '.join(CLUSTERED_KEYS)}")
        for name in self.unique:
            if name not in self.secondary:
                raise ValueError(f"TableDef {self.name}: unique index {name!r} is not one of "
                                 f"its secondary indexes {self.secondary}")
        if self.groups < 1 or self.rows % self.groups:
            raise ValueError(f"TableDef {self.name}: rows ({self.rows}) must be a multiple "
                             f"of groups ({self.groups})")

    def key(self, group: int, seq: int) -> int:
        """The primary key of row ``seq`` (1-based) of ``group`` (0-based)."""
        per = self.rows // self.groups
        if seq <= per:
            return group * per + seq
        return self.rows + 1 + group + self.groups * (seq - per - 1)

    def group_seq(self, key: int) -> tuple[int, int]:
        """``(group, seq)`` of primary key ``key`` (the inverse of ``key``)."""
        per = self.rows // self.groups
        if key <= self.rows:
            g, s = divmod(key - 1, per)
            return g, s + 1
        b = key - self.rows - 1
        return b % self.groups, per + 1 + b // self.groups


def secondary_row(key: int, j: int, rows: int) -> int:
    """The primary key of the ``j``-th row (0-based) a read through a secondary index
    at value ``key`` finds, in a table of ``rows`` rows: entries lead to rows the
    server places by a fixed hash (the contract's one mapping: a workload that then
    changes a row it found - TPC-C's Payment by last name - names it by this)."""
    return (key + j) * 7919 % rows + 1


class _OpFields(NamedTuple):
    kind: str
    table: str
    key: int
    rows: int = 1
    index: str = PRIMARY
    variant: str = ""
    sql_bytes: int = 0


_tuple_new = tuple.__new__


class Op(_OpFields):
    """One row operation. ``key``: the primary key (or, through a secondary ``index``,
    that index's value) the operation starts at; ``rows``: rows it reads (1 for a point
    operation, ``range_size`` for a range).

    An immutable named tuple (fields as above, equal and hashable by value), not a
    frozen dataclass: TPC-C builds ~30 a transaction, and a frozen dataclass's
    ``__init__`` (a ``object.__setattr__`` per field, then ``__post_init__``) cost ~4x
    this validating ``__new__``: ~8 % of E3's all-HDD run, most of it the warm replay."""
    __slots__ = ()

    def __new__(cls, kind: str, table: str, key: int, rows: int = 1, index: str = PRIMARY,
                variant: str = "", sql_bytes: int = 0):
        if kind not in OP_KINDS:
            raise ValueError(f"Op.kind: {kind!r} is not one of {', '.join(OP_KINDS)}")
        if variant not in RANGE_VARIANTS:
            raise ValueError(f"Op.variant: {variant!r} is not one of {RANGE_VARIANTS}")
        if rows < 1:
            raise ValueError(f"Op.rows: {rows} < 1")
        return _tuple_new(cls, (kind, table, key, rows, index, variant, sql_bytes))

    def with_key(self, key: int) -> "Op":
        """The same operation at another ``key`` (its other fields validated already)."""
        return _tuple_new(Op, (self[0], self[1], key, *self[3:]))


@dataclass(frozen=True)
class Transaction:
    """The operations of one client transaction, in order."""
    ops: tuple[Op, ...]
    autocommit: bool = False
    rollback: bool = False

    @property
    def read_only(self) -> bool:
        return all(op.kind in ("point_select", "range_select") for op in self.ops)
