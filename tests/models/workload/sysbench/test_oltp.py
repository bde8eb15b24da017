"""sysbench's OLTP tests: each event's statements, as oltp_common.lua issues them."""
from collections import Counter

import numpy as np
import pytest

from models.engine.innodb.ops import Op
from models.workload.sysbench import SysbenchConfig
from models.workload.sysbench.oltp import EventBuilder, mix, table_defs
from models.workload.sysbench.rand import SbRand, UniqueSequence


def _event(**kw):
    cfg = SysbenchConfig(**kw)
    rnd = SbRand(cfg, np.random.default_rng(1))
    b = EventBuilder(cfg, unique=UniqueSequence(np.random.default_rng(2)))
    return cfg, b, rnd, b.build(rnd)


def _shape(trx):
    return Counter((op.kind, op.variant, op.rows) for op in trx.ops)


def test_read_write_is_oltp_commons_mix():
    cfg, b, rnd, trx = _event(test="oltp_read_write", tables=4, table_size=1000)
    assert not trx.autocommit
    assert _shape(trx) == Counter({("point_select", "", 1): 10, ("range_select", "", 100): 1,
                                   ("range_select", "sum", 100): 1,
                                   ("range_select", "order", 100): 1,
                                   ("range_select", "distinct", 100): 1,
                                   ("update_index", "", 1): 1, ("update_non_index", "", 1): 1,
                                   ("delete", "", 1): 1, ("insert", "", 1): 1})
    kinds = [op.kind for op in trx.ops]
    assert kinds[:10] == ["point_select"] * 10 and kinds[-2:] == ["delete", "insert"]
    assert trx.ops[-1].key == trx.ops[-2].key and trx.ops[-1].table == trx.ops[-2].table
    # all point selects of an event go to one table
    assert len({op.table for op in trx.ops[:10]}) == 1
    m = mix(cfg)
    assert (m.reads, m.writes, m.other, m.queries) == (14, 4, 2, 20)   # sysbench's 20 qpt


@pytest.mark.parametrize("test,shape,autocommit,rwo", [
    ("oltp_point_select", {("point_select", "", 1): 1}, True, (1, 0, 0)),
    ("oltp_read_only", {("point_select", "", 1): 10, ("range_select", "", 100): 1,
                        ("range_select", "sum", 100): 1, ("range_select", "order", 100): 1,
                        ("range_select", "distinct", 100): 1}, False, (14, 0, 2)),
    ("oltp_write_only", {("update_index", "", 1): 1, ("update_non_index", "", 1): 1,
                         ("delete", "", 1): 1, ("insert", "", 1): 1}, False, (0, 4, 2)),
    ("oltp_update_index", {("update_index", "", 1): 1}, True, (0, 1, 0)),
    ("oltp_update_non_index", {("update_non_index", "", 1): 1}, True, (0, 1, 0)),
    ("oltp_insert", {("insert", "", 1): 1}, True, (0, 1, 0)),
    ("oltp_delete", {("delete", "", 1): 1}, True, (0, 1, 0)),
])
def test_each_test_issues_its_scripts_statements(test, shape, autocommit, rwo):
    cfg, b, rnd, trx = _event(test=test, table_size=1000)
    assert _shape(trx) == Counter(shape)
    assert trx.autocommit is autocommit
    m = mix(cfg)
    assert (m.reads, m.writes, m.other) == rwo


def test_counts_range_size_skip_trx_and_range_selects():
    cfg, b, rnd, trx = _event(test="oltp_read_only", point_selects=3, range_size=7,
                              simple_ranges=2, table_size=100)
    assert _shape(trx)[("point_select", "", 1)] == 3
    assert _shape(trx)[("range_select", "", 7)] == 2
    cfg, b, rnd, trx = _event(test="oltp_read_write", skip_trx=True, range_selects=False,
                              index_updates=3, delete_inserts=2)
    assert trx.autocommit and not any(op.kind == "range_select" for op in trx.ops)
    assert _shape(trx)[("update_index", "", 1)] == 3
    assert (mix(cfg).reads, mix(cfg).writes, mix(cfg).other) == (10, 3 + 1 + 2 * 2, 0)
    # oltp_point_select ignores point_selects (the script sets it to 1)
    assert len(_event(test="oltp_point_select", point_selects=10)[3].ops) == 1


def test_ids_within_the_table_and_tables_uniform():
    cfg = SysbenchConfig(test="oltp_read_only", tables=3, table_size=500, rand_type="uniform")
    rnd = SbRand(cfg, np.random.default_rng(3))
    b = EventBuilder(cfg)
    tables = Counter()
    for _ in range(600):
        for op in b.build(rnd).ops:
            assert 1 <= op.key <= 500
            tables[op.table] += 1
    assert set(tables) == {"sbtest1", "sbtest2", "sbtest3"}
    assert min(tables.values()) > 0.8 * max(tables.values())


def test_insert_ids_come_from_each_tables_auto_increment():
    cfg, b, rnd, first = _event(test="oltp_insert", tables=2, table_size=100)
    assert first.ops[0].key == 101
    keys = {"sbtest1": [], "sbtest2": []}
    keys[first.ops[0].table].append(101)
    for _ in range(50):
        op = b.build(rnd).ops[0]
        keys[op.table].append(op.key)
    for ks in keys.values():
        assert ks == list(range(101, 101 + len(ks)))
    assert {t.rows for t in table_defs(cfg)} == {100}


def test_insert_without_auto_inc_uses_unique_ids_into_empty_tables():
    cfg, b, rnd, _ = _event(test="oltp_insert", auto_inc=False, table_size=100)
    ks = [b.build(rnd).ops[0].key for _ in range(2000)]
    assert len(set(ks)) == len(ks)
    assert all(-2**31 <= k < 2**31 for k in ks)
    assert table_defs(cfg)[0].rows == 0


def test_table_defs_are_sbtest():
    defs = table_defs(SysbenchConfig(tables=3, table_size=1234))
    assert [d.name for d in defs] == ["sbtest1", "sbtest2", "sbtest3"]
    assert all(d.rows == 1234 and d.row_bytes == 188 and d.secondary == ("k",) for d in defs)


def test_built_ops_equal_validated_ops():
    """The events' ops are copies of templates: equal (and hashing equal) to Op(...)."""
    cfg, b, rnd, trx = _event(test="oltp_read_write", tables=2)
    for op in trx.ops:
        same = Op(op.kind, op.table, op.key, op.rows, op.index, op.variant)
        assert op == same and hash(op) == hash(same)
