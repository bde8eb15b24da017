"""The statements of sysbench 1.0's OLTP tests (``oltp_common.lua`` and ``oltp_*.lua``),
as the row operations of ``models.engine.innodb.ops``.

One event (sysbench's transaction) of each test, in order:

- ``oltp_point_select``: 1 ``SELECT c FROM sbtestN WHERE id=?`` (the script sets
  ``point_selects=1``), autocommitted.
- ``oltp_read_only``: ``BEGIN``; ``point_selects`` point selects; then, with
  ``range_selects``, ``simple_ranges`` ``SELECT c ... WHERE id BETWEEN ? AND ?``,
  ``sum_ranges`` ``SELECT SUM(k) ...``, ``order_ranges`` ``... ORDER BY c``,
  ``distinct_ranges`` ``SELECT DISTINCT c ... ORDER BY c`` (each ``range_size`` rows
  from a random id); ``COMMIT``.
- ``oltp_read_write``: the reads of ``oltp_read_only``, then ``index_updates``
  ``UPDATE sbtestN SET k=k+1 WHERE id=?``, ``non_index_updates`` ``UPDATE sbtestN SET
  c=? WHERE id=?``, ``delete_inserts`` pairs ``DELETE FROM sbtestN WHERE id=?`` +
  ``INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ...)`` of the same id, in one
  ``BEGIN`` ... ``COMMIT``.
- ``oltp_write_only``: the writes of ``oltp_read_write`` only.
- ``oltp_update_index`` / ``oltp_update_non_index``: ``index_updates`` /
  ``non_index_updates`` updates, autocommitted (the scripts issue no ``BEGIN``).
- ``oltp_insert``: 1 ``INSERT`` into a random table, autocommitted: with ``auto_inc``
  (the default) the table's AUTO_INCREMENT counter gives the id (the next one after
  the largest, ``table_size + 1`` first); without it ``sysbench.rand.unique()`` does,
  into tables that ``prepare`` left empty.
- ``oltp_delete``: 1 ``DELETE ... WHERE id=?``, autocommitted.

``skip_trx`` drops ``BEGIN``/``COMMIT``: every statement of the event autocommits
(``Transaction.autocommit``). Each group of statements (all the point selects of an
event, all its simple ranges, ...) goes to one table, ``sysbench.rand.uniform(1,
tables)``; every id is ``sysbench.rand.default(1, table_size)`` (``--rand-type``).

Counted as sysbench counts them (``db_driver.c``): SELECTs are reads; UPDATE, DELETE and
INSERT writes; BEGIN and COMMIT other.

Not carried to the server (the ops contract has no field for them): the values the
statements write (``k`` of an insert, the random ``c`` strings); an ``oltp_delete`` of
an id already deleted deletes nothing, as in sysbench - the server decides.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...engine.innodb.ops import PRIMARY, Op, TableDef, Transaction

# sbtest<N>: id INT, k INT, c CHAR(120), pad CHAR(60) (oltp_common.lua create_table);
# sysbench fills c and pad with digits and dashes, one byte each in any charset.
SBTEST_ROW_BYTES = 4 + 4 + 120 + 60
SBTEST_SECONDARY = ("k",)    # KEY k_<N> (k)

# statement group -> (Op kind, range variant, is a range)
STATEMENTS = {
    "point_selects": ("point_select", "", False),
    "simple_ranges": ("range_select", "", True),
    "sum_ranges": ("range_select", "sum", True),
    "order_ranges": ("range_select", "order", True),
    "distinct_ranges": ("range_select", "distinct", True),
    "index_updates": ("update_index", "", False),
    "non_index_updates": ("update_non_index", "", False),
    "delete_inserts": ("delete", "", False),          # + the insert of the same id
}
READS = ("point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges")
WRITES = ("index_updates", "non_index_updates", "delete_inserts")
RANGES = READS[1:]


def groups_of(test: str, range_selects: bool = True) -> tuple[str, ...]:
    """The statement groups an event of ``test`` issues, in order (``oltp_insert`` and
    ``oltp_delete`` are single statements of their own)."""
    reads = READS if range_selects else READS[:1]
    return {
        "oltp_point_select": ("point_selects",),
        "oltp_read_only": reads,
        "oltp_read_write": reads + WRITES,
        "oltp_write_only": WRITES,
        "oltp_update_index": ("index_updates",),
        "oltp_update_non_index": ("non_index_updates",),
        "oltp_insert": (),
        "oltp_delete": (),
    }[test]


def plan(cfg) -> tuple[tuple[str, int], ...]:
    """``(group, statements)`` per group of an event of ``cfg.test`` with a count > 0;
    ``(("insert", 1),)`` / ``(("delete", 1),)`` for the single-statement tests."""
    if cfg.test == "oltp_insert":
        return (("insert", 1),)
    if cfg.test == "oltp_delete":
        return (("delete", 1),)
    counts = {g: getattr(cfg, g) for g in STATEMENTS}
    if cfg.test == "oltp_point_select":
        counts["point_selects"] = 1
    return tuple((g, counts[g]) for g in groups_of(cfg.test, cfg.range_selects) if counts[g])


def explicit_trx(cfg) -> bool:
    """Whether an event runs inside ``BEGIN`` ... ``COMMIT``."""
    return cfg.test in ("oltp_read_only", "oltp_read_write", "oltp_write_only") \
        and not cfg.skip_trx


@dataclass(frozen=True)
class Mix:
    """Statements per event by sysbench's counters."""
    reads: int
    writes: int
    other: int

    @property
    def queries(self) -> int:
        return self.reads + self.writes + self.other


def mix(cfg) -> Mix:
    reads = writes = 0
    for g, n in plan(cfg):
        if g in READS:
            reads += n
        elif g == "delete_inserts":
            writes += 2 * n
        else:
            writes += n
    return Mix(reads, writes, 2 if explicit_trx(cfg) else 0)


def table_name(n: int) -> str:
    return f"sbtest{n}"


def table_defs(cfg) -> tuple[TableDef, ...]:
    """``sbtest1`` .. ``sbtest<tables>`` as ``prepare`` leaves them: ``table_size`` rows
    (none for ``oltp_insert --auto_inc=off``, whose ``prepare`` creates them empty)."""
    rows = 0 if cfg.test == "oltp_insert" and not cfg.auto_inc else cfg.table_size
    return tuple(TableDef(table_name(i), rows, SBTEST_ROW_BYTES, SBTEST_SECONDARY)
                 for i in range(1, cfg.tables + 1))


class EventBuilder:
    """Builds each event's ``Transaction`` from a thread's ``SbRand``.

    ``next_id``: the AUTO_INCREMENT counter of each table (shared by all threads, as the
    server's is), ``unique``: the run's ``UniqueSequence`` (``oltp_insert`` without
    ``auto_inc``)."""

    def __init__(self, cfg, next_id: dict[str, int] | None = None, unique=None) -> None:
        self.cfg = cfg
        self.plan = plan(cfg)
        self.autocommit = not explicit_trx(cfg)
        self.names = tuple(table_name(i) for i in range(1, cfg.tables + 1))
        self.next_id = next_id if next_id is not None else {
            n: cfg.table_size + 1 for n in self.names}
        self.unique = unique
        self.mix = mix(cfg)
        # per table, the statements of each group with key 1 (validated here, once)
        self.templates: dict[tuple[str, str], tuple[Op, ...]] = {}
        for name in self.names:
            for group, _ in self.plan:
                if group in ("insert", "delete"):
                    ops = (Op(group, name, 1),)
                elif group == "delete_inserts":
                    ops = (Op("delete", name, 1), Op("insert", name, 1))
                else:
                    kind, variant, is_range = STATEMENTS[group]
                    ops = (Op(kind, name, 1, cfg.range_size if is_range else 1, PRIMARY,
                              variant),)
                self.templates[(name, group)] = ops

    def build(self, rnd) -> Transaction:
        names, size, templates = self.names, self.cfg.table_size, self.templates
        n_tables = len(names)
        next_id = rnd.next_id
        ops: list[Op] = []
        for group, count in self.plan:
            table = names[rnd.uniform(1, n_tables) - 1]
            tpl = templates[(table, group)]
            if group == "insert":
                ops.append(tpl[0].with_key(self._insert_id(table)))
                continue
            if len(tpl) == 2:                           # delete_inserts: one id for both
                for _ in range(count):
                    key = next_id(1, size)
                    ops.append(tpl[0].with_key(key))
                    ops.append(tpl[1].with_key(key))
                continue
            t = tpl[0]
            for _ in range(count):
                ops.append(t.with_key(next_id(1, size)))
        return Transaction(tuple(ops), self.autocommit)

    def _insert_id(self, table: str) -> int:
        if self.cfg.auto_inc:
            key = self.next_id[table]
            self.next_id[table] = key + 1
            return key
        return self.unique.next() - 2**31      # sysbench converts it to a signed INT
