"""TPC-C's transactions as row operations, the mix, NURand, and the sizes of the tables."""
from collections import Counter

import numpy as np
import pytest

from models.engine.innodb.server.layout import TableLayout
from models.engine.innodb.tablespace import PAGE_SIZE
from models.workload.tpcc import TpccConfig, nurand, schema
from models.workload.tpcc.txns import MIX_PCT, TYPES, TpccState, TxnBuilder


class FixedRand:
    """Uniform draws from a list (NURand's formula checked by hand)."""

    def __init__(self, values, c):
        self.values = list(values)
        self.c = c

    def uniform(self, x, y):
        v = self.values.pop(0)
        assert x <= v <= y
        return v

    nurand = nurand.TpccRand.nurand


def test_nurand_is_the_specifications_formula():
    r = FixedRand([0b1010, 0b0101, 200, 3000], {1023: 7, 255: 0, 8191: 0})
    assert r.nurand(1023, 1, 3000) == ((0b1010 | 0b0101) + 7) % 3000 + 1
    assert r.nurand(1023, 1, 3000) == ((200 | 3000) + 7) % 3000 + 1
    g = nurand.TpccRand(np.random.default_rng(1), nurand.run_constants(np.random.default_rng(2)))
    ids = np.array([g.nurand(8191, 1, 100_000) for _ in range(20_000)])
    assert ids.min() >= 1 and ids.max() <= 100_000
    # non-uniform: the most frequent 10 % of ids take far more than 10 % of the draws
    top = np.sort(np.bincount(ids))[::-1][:10_000].sum() / ids.size
    assert top > 0.3


def test_the_mix_is_45_43_4_4_4():
    b = TxnBuilder(2)
    g = nurand.TpccRand(np.random.default_rng(3), nurand.run_constants(np.random.default_rng(4)))
    n = 5000
    kinds = Counter(b.build(g)[0] for _ in range(n))
    for t, pct in zip(TYPES, MIX_PCT):
        p = pct / 100
        assert abs(kinds[t] / n - p) < 4 * (p * (1 - p) / n) ** 0.5, t


def _rand(seed=5):
    return nurand.TpccRand(np.random.default_rng(seed), nurand.run_constants(np.random.default_rng(6)))


def test_new_order_rows_and_growth_at_the_districts_right_end():
    st = TpccState(1)
    b = TxnBuilder(1, st)
    g = _rand()
    trx = b.new_order(g, 1, 3)
    kinds = Counter((op.kind, op.table) for op in trx.ops)
    items = kinds[("insert", "order_line")]
    assert 5 <= items <= 15 or trx.rollback
    assert kinds[("point_select", "warehouse")] == kinds[("update_non_index", "district")] == 1
    assert kinds[("insert", "orders")] == kinds[("insert", "new_order")] == 1
    assert kinds[("point_select", "item")] == kinds[("update_non_index", "stock")] + trx.rollback
    orders = st.defs["orders"]
    ins = [op.key for op in trx.ops if op.table == "orders"]
    assert orders.group_seq(ins[0]) == (2, 3001)            # district 3's order 3001
    assert st.next_o_id[2] == 3002 and st.next_o_id[0] == 3001
    lines = [orders.group_seq(op.key) for op in trx.ops if op.table == "order_line"]
    assert lines == [(2, 30001 + i) for i in range(items)]


def test_rollbacks_are_one_percent_of_new_orders_and_reuse_the_order_number():
    b = TxnBuilder(1)
    g = _rand(7)
    trxs = [b.new_order(g, 1, 1) for _ in range(3000)]
    rb = sum(t.rollback for t in trxs)
    assert abs(rb / 3000 - 0.01) < 4 * (0.01 * 0.99 / 3000) ** 0.5
    assert b.state.next_o_id[0] == 3001 + 3000 - rb
    t = next(t for t in trxs if t.rollback)
    assert t.ops[-1].kind == "point_select" and t.ops[-1].key == schema.ITEMS


def test_delivery_takes_the_oldest_new_order_of_each_district_once():
    st = TpccState(1)
    b = TxnBuilder(1, st)
    trx = b.delivery(_rand(), 1, 1)
    deletes = [st.defs["new_order"].group_seq(op.key) for op in trx.ops if op.kind == "delete"]
    assert deletes == [(d, 1) for d in range(10)]            # o_id 2101 of each district
    assert sum(op.table == "order_line" and op.kind == "update_non_index"
               for op in trx.ops) == 10 * schema.LINES_PER_LOADED_ORDER
    assert st.oldest_new == [2102] * 10


def test_stock_level_reads_the_stock_of_the_last_20_orders_items():
    st = TpccState(1)
    b = TxnBuilder(1, st)
    g = _rand(8)
    for _ in range(25):
        b.new_order(g, 1, 1)
    trx = b.stock_level(g, 1, 1)
    ol = [op for op in trx.ops if op.table == "order_line"]
    assert len(ol) == 1 and ol[0].rows == sum(len(t) for t in st.items[0])
    stock = {op.key for op in trx.ops if op.table == "stock"}
    assert stock == {schema.stock_key(1, i) for t in st.items[0] for i in t}


def test_the_database_is_about_9_gb_at_100_warehouses():
    """~9.5 GB of data files at 100 warehouses (EXPERIMENTS.md E3; the 9.5 includes
    ibdata1 and the files' extension slack, not modelled): the loaded .ibd pages."""
    pages = sum(TableLayout(i + 1, t).n_pages for i, t in enumerate(schema.table_defs(100)))
    assert pages * PAGE_SIZE == pytest.approx(9.5e9, rel=0.1)
    rows = {t.name: t.rows for t in schema.table_defs(100)}
    assert rows == {"warehouse": 100, "district": 1000, "customer": 3_000_000,
                    "history": 3_000_000, "new_order": 900_000, "orders": 3_000_000,
                    "order_line": 30_000_000, "item": 100_000, "stock": 10_000_000}


def test_options_take_both_tools_names():
    assert TpccConfig(threads=8).clients == 8 and TpccConfig(connections=4).clients == 4
    with pytest.raises(ValueError, match="threads: is another name for connections"):
        TpccConfig(connections=4, threads=8)
    with pytest.raises(ValueError, match="warehouses"):
        TpccConfig(warehouses=0)


def test_payment_by_name_updates_the_middle_customer_it_found():
    from models.engine.innodb.ops import secondary_row
    b = TxnBuilder(2)
    g = _rand(21)
    rows = b.defs["customer"].rows
    by_name = by_id = 0
    for _ in range(200):
        ops = b.payment(g, 1, 1).ops
        cust = [op for op in ops if op.table == "customer"]
        if cust[0].kind == "range_select":
            by_name += 1
            found = [secondary_row(cust[0].key, j, rows) for j in range(cust[0].rows)]
            assert len(cust) == 2 and cust[1].key == found[len(found) // 2]
        else:
            by_id += 1
            assert len(cust) == 1 and cust[0].kind == "update_non_index"
    assert by_name > 80 and by_id > 50
