"""Where a table's rows live: the B+trees of a table as a bulk load leaves them.

A table of ``TableDef.rows`` rows with primary keys 1..rows, loaded in key order (as
sysbench's ``prepare`` does), then its secondary indexes built by a sorted merge (5.6
``CREATE INDEX``; sysbench creates ``k`` after the load): every index is a compact
B+tree - leaves filled to ``15/16`` (``dict_index_get_space_reserve``: an insert at the
right end leaves ``UNIV_PAGE_SIZE / 16`` free), upper levels to capacity, records per
page from ``btree.records_per_page``. Pages of the .ibd: 0..2 the file-space header,
insert-buffer bitmap and inode page, 3 the clustered root, 4.. the secondary roots, then
each index's leaves in key order followed by its upper levels.

Record sizes: clustered ``row_bytes`` + 5 (compact header) + 13 (``DB_TRX_ID``,
``DB_ROLL_PTR``); secondary ``key_bytes`` + the 4-byte primary key + 5; node pointers
key + ``NODE_PTR_EXTRA_BYTES``.

``k`` of a row (the secondary value sysbench draws uniformly in 1..table_size) is a
fixed hash of the primary key; an entry's position in the secondary index is its value.

Rows inserted beyond the loaded key range go to new leaves appended to the file (the
right-most leaf splits at the end; upper levels are not grown). A table whose key is
(group, sequence) (``TableDef.groups`` > 1: TPC-C's ORDERS, ORDER_LINE, NEW_ORDER, one
group per district) grows at the right end of every group: the rows a group gains
after the load fill new leaves of their own, allocated at the end of the file when the
first row of one is inserted (``grow``; InnoDB's split at the last record of a page
moves nothing and starts an empty right sibling, ``btr_page_split_and_insert`` with
``btr_page_get_split_rec_to_right``), and reached through the group's last loaded
leaf's parent. Simplified: the group's last loaded leaf is not filled first, a new
leaf holds ``per_leaf`` rows (the 15/16 fill), deleted rows (NEW_ORDER's delivered
orders) free no page. Deliberately not modelled: page splits inside the key range and fill changes from inserts / deletes
(the layout builder of ``table.py`` / ``btree_insert.py`` grows the E1 table; running it
at run time is a later step), BLOB pages. A new leaf past the file's free limit
extends the file first (``autoextend``, called by the server where pages are allocated).
"""
from __future__ import annotations

from ..btree import NODE_PTR_EXTRA_BYTES, PAGE_USABLE_BYTES
from ..ops import PRIMARY, TableDef, secondary_row
from .files import SPACE_SHIFT

REC_HEADER_BYTES = 5
CLUST_HIDDEN_BYTES = 13
PK_BYTES = 4
FSP_FIRST_INDEX_PAGE = 3


def _per_page(rec_bytes: int, fill: float) -> int:
    return max(2, int(PAGE_USABLE_BYTES * fill // rec_bytes))


class IndexLayout:
    """One compact B+tree: ``n`` entries, ``per_leaf`` per leaf, ``fanout`` per node page."""

    def __init__(self, space: int, root: int, first_page: int, n: int, rec_bytes: int,
                 key_bytes: int) -> None:
        self.space = space << SPACE_SHIFT
        self.n = max(1, n)
        self.per_leaf = _per_page(rec_bytes, 15 / 16)
        self.fanout = _per_page(key_bytes + NODE_PTR_EXTRA_BYTES, 1.0)
        counts = [-(-self.n // self.per_leaf)]
        while counts[-1] > 1:
            counts.append(-(-counts[-1] // self.fanout))
        self.level_pages = counts              # leaves first, the root level last
        self.height = len(counts)
        bases = []
        p = first_page
        for c in counts[:-1]:
            bases.append(p)
            p += c
        self.base = bases + [root]             # the root level's one page is ``root``
        if self.height == 1:
            self.base = [root]
        self.end_page = p                      # first page after this index's pages
        self.extra: dict[int, int] = {}        # leaf index beyond the load -> page_no
        # the root's page id, and (first page id, leaves per page) of each level below
        # it down to the one above the leaves: ``path`` on ints, no power per level
        self._root = self.space | self.base[-1]
        self._inner = [(self.space | self.base[lvl], self.fanout ** lvl)
                       for lvl in range(self.height - 2, 0, -1)]

    @property
    def n_leaves(self) -> int:
        return self.level_pages[0]

    def leaf_index(self, pos: int) -> int:
        return max(0, pos) // self.per_leaf

    def path(self, pos: int) -> list[int]:
        """Page ids root to leaf of entry ``pos`` (0-based, in key order); a position
        beyond the loaded range ends at its appended leaf if there is one, else at the
        last leaf."""
        leaf = (pos if pos > 0 else 0) // self.per_leaf
        last = self.level_pages[0] - 1
        beyond = None
        if leaf > last:
            beyond = self.extra.get(leaf)
            leaf = last
        out = [self._root]
        for first, span in self._inner:
            out.append(first + leaf // span)
        if self.height > 1:
            out.append(self.space | (self.base[0] + leaf))
        if beyond is not None:
            out[-1] = self.space | beyond
        return out

    def leaves(self, pos: int, count: int) -> list[int]:
        """Page ids of the leaves holding entries ``pos .. pos + count - 1``."""
        first, last = self.leaf_index(pos), self.leaf_index(pos + count - 1)
        sp, base, n = self.space, self.base[0], self.n_leaves
        out = []
        for i in range(first, last + 1):
            if i < n:
                out.append(sp | (base + i))
            elif i in self.extra:
                out.append(sp | self.extra[i])
        return out


class TableLayout:
    """The clustered index and the secondary indexes of one table in ``space``."""

    def __init__(self, space: int, tdef: TableDef) -> None:
        self.space = space
        self.tdef = tdef
        self.rows = tdef.rows
        nsec = len(tdef.secondary)
        first = FSP_FIRST_INDEX_PAGE + 1 + nsec
        self.primary = IndexLayout(space, FSP_FIRST_INDEX_PAGE, first, tdef.rows,
                                   tdef.row_bytes + REC_HEADER_BYTES + CLUST_HIDDEN_BYTES,
                                   PK_BYTES)
        self.indexes = {PRIMARY: self.primary}
        p = self.primary.end_page
        for i, name in enumerate(tdef.secondary):
            ix = IndexLayout(space, FSP_FIRST_INDEX_PAGE + 1 + i, p, tdef.rows,
                             tdef.key_bytes + PK_BYTES + REC_HEADER_BYTES, tdef.key_bytes)
            self.indexes[name] = ix
            p = ix.end_page
        self.n_pages = p
        self.next_free_page = p

        self.grown: dict[tuple[int, int], int] = {}   # (group, new leaf) -> page_no

    def _new_leaf_key(self, pk: int):
        """``(group, n)``: the n-th leaf group ``group`` gained, of grouped key ``pk``
        beyond the load; None for a loaded row."""
        g, s = self.tdef.group_seq(pk)
        per = self.rows // self.tdef.groups
        return None if s <= per else (g, (s - per - 1) // self.primary.per_leaf)

    def grow(self, pk: int) -> int | None:
        """Allocate the clustered leaf an insert of ``pk`` beyond the load needs, if it
        does not exist yet: its page id (a page never written), else None."""
        prim = self.primary
        if self.tdef.groups == 1:
            leaf = prim.leaf_index(pk - 1)
            if leaf >= prim.n_leaves and leaf not in prim.extra:
                return self.new_leaf(PRIMARY, leaf)
            return None
        key = self._new_leaf_key(pk)
        if key is None or key in self.grown:
            return None
        page = self.grown[key] = self.next_free_page
        self.next_free_page += 1
        return prim.space | page

    def primary_path(self, pk: int) -> list[int]:
        """Clustered pages root to leaf of primary key ``pk``."""
        prim = self.primary
        if self.tdef.groups == 1 or pk <= self.rows:
            return prim.path(pk - 1)
        key = self._new_leaf_key(pk)
        per = self.rows // self.tdef.groups
        path = prim.path(key[0] * per + per - 1)     # below the group's last loaded leaf
        page = self.grown.get(key)
        if page is not None:
            path[-1] = prim.space | page
        return path

    def primary_pages(self, pk: int, count: int) -> list[int]:
        """The path to ``pk``, then the further leaves of the ``count`` rows from it (a
        grouped table: the next rows of the same group)."""
        prim = self.primary
        if self.tdef.groups == 1:
            path = prim.path(pk - 1)
            return path + prim.leaves(pk - 1, count)[1:] if count > 1 else path
        out = self.primary_path(pk)
        if count == 1:
            return out
        tdef, sp, last = self.tdef, prim.space, out[-1]
        g, s = tdef.group_seq(pk)
        per, per_leaf, base = self.rows // tdef.groups, prim.per_leaf, prim.base[0]
        for s2 in range(s + 1, s + count):
            if s2 <= per:
                page = sp | (base + (g * per + s2 - 1) // per_leaf)
            else:
                p = self.grown.get((g, (s2 - per - 1) // per_leaf))
                if p is None:
                    break                 # past the group's last row
                page = sp | p
            if page != last:
                out.append(page)
                last = page
        return out

    def sec_value(self, pk: int) -> int:
        """The secondary value of row ``pk`` (a fixed hash, uniform over 1..rows)."""
        return (pk * 2654435761 + 12345) % self.rows + 1

    def new_leaf(self, index: str, leaf: int) -> int:
        """Page id of a leaf beyond the loaded range, allocated at the end of the file."""
        ix = self.indexes[index]
        page = ix.extra.get(leaf)
        if page is None:
            page = ix.extra[leaf] = self.next_free_page
            self.next_free_page += 1
        return ix.space | page

    def read_pages(self, op) -> list[int]:
        """The pages a read ``op`` on the table gets, in order: a point select root to
        leaf, a range the leaf chain after the first leaf, a read through a secondary
        index one primary lookup per row."""
        rows = op.rows
        if op.index == PRIMARY:
            return self.primary_pages(op.key, rows)
        ix = self.indexes[op.index]
        pos = op.key - 1
        pages = ix.path(pos)
        if rows > 1:
            pages += ix.leaves(pos, rows)[1:]
        # each entry leads to its row in the clustered index
        for j in range(rows):
            pages += self.primary.path(secondary_row(op.key, j, self.rows) - 1)
        return pages

    def change_pages(self, op, buffer=None) -> tuple[list[int], list[int]]:
        """``(pages, changed)`` of a row change ``op`` on the table: the pages it gets,
        in order (the clustered path, then each secondary index's), and the leaves it
        dirties (the clustered leaf, the secondary leaves an index change touches). A
        secondary leaf change ``buffer(index name, leaf, op)`` takes (the change buffer:
        ``delete_mark`` of the old entry, ``insert`` of the new) is neither got nor
        dirtied here."""
        path = self.primary_path(op.key)
        pages = list(path)
        changed = [path[-1]]
        kind = op.kind
        if kind != "update_non_index":
            k = self.sec_value(op.key)
            op1 = "insert" if kind == "insert" else "delete_mark"
            for name in self.tdef.secondary:
                sec = self.indexes[name]
                sp = sec.path(k - 1)
                pages += sp[:-1]
                if kind == "update_index":          # the entry moves from k to k + 1
                    sops = ((sp[-1], "delete_mark"), (sec.path(k)[-1], "insert"))
                else:
                    sops = ((sp[-1], op1),)
                for leaf, sop in sops:
                    if buffer is not None and buffer(name, leaf, sop):
                        continue
                    if pages[-1] != leaf:
                        pages.append(leaf)
                        changed.append(leaf)
        return pages, changed
