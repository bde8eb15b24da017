"""Inserts at the right end of a clustered index keyed on an increasing key: a table
without a primary key (InnoDB's hidden ``DB_ROW_ID``) or with an AUTO_INCREMENT key
(``TableDef.clustered_key``), mysqlslap's ``t1`` (experiment E2).

Every such insert goes to the same right-most leaf, so its latches are the statement's
hot spot; they are ``latches.InnoDBLatches``' (``row_insert``: the row id under
``dict_sys->mutex`` or the ``autoinc_mutex``, ``index->lock`` S for the descent, the
leaf's ``block->lock`` X for the record-lock check, the undo record, the page insert or
the split, and the mini-transaction commit). The statement, on one core: the server's
``stmt_cycles`` (receive, parse, open the table, reply - as for every statement), the
transaction start and the table's IX lock under ``kernel_mutex`` (``trx_start``,
``lock_table_ix``), then ``row_insert``. Pages, through the buffer pool: the right-most
leaf is fixed before the insert; when ``row_insert`` splits it, the new leaf is created
at the end of the file (``TableLayout.new_leaf``, ``buf_page_create``: no read), inside
the split (``index->lock`` X held): a file extension it needs (``autoextend``) stalls
every inserter. The
leaf and the undo page are dirtied at the LSN the insert's redo reached.

Record sizes (compact format): the record is ``row_bytes`` + the 5-byte header + the
hidden ``DB_TRX_ID`` / ``DB_ROLL_PTR`` (13 bytes) and, without a key, ``DB_ROW_ID`` (6).
Its redo: an ``MLOG_COMP_REC_INSERT`` of the record (~25 bytes of page / offset / index
info besides it), the undo-insert record in its ``MLOG_UNDO_INSERT`` wrapper (~30) and
the page-header updates (~30).

Deliberately not modelled: several right-most leaves (the latches model one: one such
table per server), the tree growing a level (the new leaves hang off the root), the
insert-intention record lock (no other transaction locks a record beyond the end).
"""
from __future__ import annotations

from ..commit_base import Statement, Trx

REC_HEADER_BYTES = 5
CLUST_HIDDEN_BYTES = 13          # DB_TRX_ID 6 + DB_ROLL_PTR 7
ROW_ID_BYTES = 6                 # DB_ROW_ID, without a primary key
REC_INSERT_REDO_BYTES = 25       # MLOG_COMP_REC_INSERT's page / offset / index info
UNDO_INSERT_REDO_BYTES = 30      # the undo-insert record in its MLOG_UNDO_INSERT wrapper
PAGE_HEADER_REDO_BYTES = 30      # PAGE_N_RECS, PAGE_LAST_INSERT, ... updates
UNDO_INSERT_BYTES = 30           # the undo-insert record itself (in the undo page)


def insert_statement(tdef, sql_bytes: int) -> Statement:
    """The ``Statement`` ``latches.row_insert`` and the binary log see for one row of
    ``tdef`` (``sql_bytes``: the text of the INSERT)."""
    hidden = CLUST_HIDDEN_BYTES + (ROW_ID_BYTES if tdef.clustered_key == "row_id" else 0)
    rec = tdef.row_bytes + hidden + REC_HEADER_BYTES
    redo = rec + REC_INSERT_REDO_BYTES + UNDO_INSERT_REDO_BYTES + PAGE_HEADER_REDO_BYTES
    return Statement("insert", sql_bytes, tdef.row_bytes, redo,
                     undo_redo_bytes=UNDO_INSERT_REDO_BYTES, rec_bytes=rec,
                     clustered_key=tdef.clustered_key)


class RightEndInserts:
    """The right-most leaf of the one table keyed on an increasing key, on ``server``."""

    def __init__(self, server) -> None:
        self.server = server
        self.leaf: dict[str, int] = {}           # table -> page id of its right-most leaf
        self._stmts: dict[tuple[str, int], Statement] = {}

    def _split(self, tbl):
        """Generator: ``btr_page_split_and_insert``'s new leaf, allocated at the end of
        the file (``btr_page_alloc``; the file may have to grow first: ``autoextend``)."""
        srv = self.server
        prim = tbl.primary
        leaf = tbl.new_leaf("PRIMARY", prim.n_leaves + len(prim.extra))
        self.leaf[tbl.tdef.name] = leaf
        srv.fresh.add(leaf)
        yield from srv.autoextend.allocate(leaf)

    def insert(self, thd: int, t, tbl, op):
        """Generator: one row into ``tbl`` for the server transaction ``t``."""
        srv = self.server
        cp, cpu, pool = srv.commit_path, srv.cpu, srv.pool
        latches = cp.latches
        key = (op.table, op.sql_bytes)
        stmt = self._stmts.get(key)
        if stmt is None:
            stmt = self._stmts[key] = insert_statement(tbl.tdef, op.sql_bytes)
        yield from cpu.run(srv.cfg.stmt_cycles)
        if t.ctrx is None:
            t.ctrx = Trx(t.id, thd, stmt, cp._trx_binlog_bytes(stmt))
            yield from latches.trx_start(t.ctrx)
        yield from latches.lock_table_ix(t.ctrx)
        leaf = self.leaf.get(op.table)
        if leaf is None:
            leaf = self.leaf[op.table] = tbl.primary.path(tbl.rows - 1)[-1]
        yield from srv._fix((leaf,))
        yield from latches.row_insert(t.ctrx, stmt, lambda: self._split(tbl))
        leaf = self.leaf[op.table]
        undo = srv._undo_page(UNDO_INSERT_BYTES)
        yield from srv._fix((leaf, undo))
        lsn = srv.redo.lsn
        pool.modify(leaf, lsn)
        pool.modify(undo, lsn)
        t.writes += 1
        srv.rows_inserted += 1
