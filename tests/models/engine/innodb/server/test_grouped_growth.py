"""Tables keyed (group, sequence) - TPC-C's ORDERS / ORDER_LINE / NEW_ORDER - grow at
the right end of every group: exact keys, and the leaves the layout allocates."""
import pytest

from models.engine.innodb.ops import TableDef
from models.engine.innodb.server.files import SPACE_SHIFT
from models.engine.innodb.server.layout import TableLayout


def test_keys_of_a_grouped_table_round_trip_and_keep_the_load_contiguous():
    t = TableDef("orders", 30, 24, groups=3)          # 10 loaded rows per group
    assert [t.key(0, 1), t.key(0, 10), t.key(1, 1), t.key(2, 10)] == [1, 10, 11, 30]
    # rows after the load: above rows, interleaved by group
    assert [t.key(0, 11), t.key(1, 11), t.key(2, 11), t.key(0, 12)] == [31, 32, 33, 34]
    for g in range(3):
        for s in range(1, 40):
            assert t.group_seq(t.key(g, s)) == (g, s)
    with pytest.raises(ValueError, match="multiple of groups"):
        TableDef("x", 31, 24, groups=3)


def test_each_group_gains_its_own_leaves_at_the_end_of_the_file():
    tdef = TableDef("order_line", 2 * 1000, 54, groups=2)
    lay = TableLayout(1, tdef)
    per_leaf, end = lay.primary.per_leaf, lay.next_free_page
    sp = 1 << SPACE_SHIFT
    # the first insert after group 1's load opens a new leaf; the next ones fill it
    first = lay.grow(tdef.key(1, 1001))
    assert first == sp | end
    assert all(lay.grow(tdef.key(1, 1001 + i)) is None for i in range(1, per_leaf))
    assert lay.grow(tdef.key(0, 1001)) == sp | (end + 1)          # group 0's own leaf
    assert lay.grow(tdef.key(1, 1001 + per_leaf)) == sp | (end + 2)
    # a row of the new leaf is reached below group 1's last loaded leaf's parent
    last_loaded = lay.primary_path(tdef.key(1, 1000))
    path = lay.primary_path(tdef.key(1, 1002))
    assert path[:-1] == last_loaded[:-1] and path[-1] == first
    # a range from the last loaded rows into the grown ones: loaded leaf, then new leaves
    pages = lay.primary_pages(tdef.key(1, 1000), per_leaf + 2)
    assert pages[-3:] == [last_loaded[-1], first, sp | (end + 2)]


def test_an_ungrouped_table_appends_as_before():
    tdef = TableDef("history", 1000, 46)
    lay = TableLayout(1, tdef)
    prim = lay.primary
    # the loaded last leaf takes rows up to its capacity, then a new leaf opens
    assert lay.grow(prim.n_leaves * prim.per_leaf) is None
    page = lay.grow(prim.n_leaves * prim.per_leaf + 1)
    assert page == (1 << SPACE_SHIFT) | lay.n_pages
    assert lay.primary_path(prim.n_leaves * prim.per_leaf + 1)[-1] == page
