"""mysqlslap workload on the InnoDB server: query division, iterations, the table and
statement it gives the server, reported columns."""
import pytest

from models.engine.innodb.server.append import insert_statement
from models.workload.mysqlslap import Mysqlslap, MysqlslapConfig, table_for
from tests.models.engine.stack import build_server, run_slap


def test_queries_divided_among_clients_and_iterations_repeat():
    r, eng, sim, fs, q = run_slap(3, 10, iterations=2, commit_protocol="innodb_plugin_104")
    assert r["transactions"] == 20 and eng.trx_committed == 20
    assert r["iterations_done"] == 2
    assert r["queries_per_iteration"] == 10
    assert r["statement_lat_count"] == 20
    assert r["seconds"] > 0 and r["tps"] == pytest.approx(20 / (sim.now_ns / 1e9))


def test_write_statement_shape():
    tdef, text_len = table_for(MysqlslapConfig(load_type="write"))
    # INSERT INTO t1 VALUES (1804289383,'<128 chars>')
    assert text_len == len("INSERT INTO t1 VALUES (") + 10 + 1 + 130 + 1
    assert (tdef.name, tdef.rows, tdef.secondary, tdef.clustered_key) == ("t1", 0, (), "row_id")
    assert tdef.row_bytes == 4 + 129 + 1                  # + the NULL-flags byte
    s = insert_statement(tdef, text_len)
    assert s.kind == "insert" and s.rec_bytes == tdef.row_bytes + 13 + 6 + 5
    wide, _ = table_for(MysqlslapConfig(load_type="write", number_char_cols=3))
    assert insert_statement(wide, 0).redo_bytes - s.redo_bytes == 2 * 129


def test_add_autoincrement_keys_the_table_on_id():
    plain, plain_len = table_for(MysqlslapConfig())
    tdef, text_len = table_for(MysqlslapConfig(auto_generate_sql_add_autoincrement=True))
    assert (plain.clustered_key, tdef.clustered_key) == ("row_id", "auto_increment")
    assert text_len - plain_len == len("NULL,")
    assert insert_statement(tdef, 0).rec_bytes - insert_statement(plain, 0).rec_bytes == 8 - 6
    for autoinc in (False, True):
        sim, dev, q, fs, srv = build_server(commit_protocol="innodb_plugin_104")
        slap = Mysqlslap(sim, MysqlslapConfig(concurrency=4, number_of_queries=200,
                                              auto_generate_sql_add_autoincrement=autoinc), srv)
        slap.start()
        sim.run()
        lt = srv.commit_path.latches
        assert lt.leaf_inserts == 200                        # the right-most leaf either way
        assert (lt.autoinc_mutex.acquisitions, lt.dict_sys_mutex.acquisitions) == \
            ((200, 0) if autoinc else (0, 200))


def test_rows_fill_the_right_most_leaf_and_its_splits_create_pages():
    """Each split of the right-most leaf (the latches' count) creates one new page in the
    pool without reading it; the empty table's root is created, not read; the leaves and
    the undo pages are dirty."""
    sim, dev, q, fs, srv = build_server(commit_protocol="innodb_plugin_104")
    slap = Mysqlslap(sim, MysqlslapConfig(concurrency=4, number_of_queries=500), srv)
    slap.start()
    sim.run()
    st = srv.status()
    splits = srv.commit_path.latches.leaf_splits
    assert splits == 500 // 96                       # 96 records of 158 bytes per leaf
    assert st["Innodb_buffer_pool_reads"] == 0
    undo_pages = srv.undo_seq                   # 30 bytes of undo per row
    assert st["Innodb_pages_created"] == 1 + splits + undo_pages
    assert st["Innodb_rows_inserted"] == 500 and st["Handler_commit"] == 500
    assert st["Com_commit"] == 0                     # autocommit: no COMMIT statement
    dirty = set(srv.pool.flush_list)
    assert len(dirty) == 1 + splits + undo_pages


def test_reports_per_file_fsyncs_and_rates():
    r, *_ = run_slap(5, 200, commit_protocol="mysql51_builtin", sync_binlog=1)
    assert r["fsyncs_per_trx_redo"] == pytest.approx(2.0)
    assert r["fsyncs_per_trx_binlog"] == pytest.approx(1.0)
    assert r["fsyncs_per_trx"] == pytest.approx(3.0)
    assert r["fsyncs_redo_s"] == pytest.approx(2 * r["tps"], rel=1e-6)


@pytest.mark.parametrize("key,kw", [
    ("concurrency", {"concurrency": 0}),
    ("number_of_queries", {"concurrency": 10, "number_of_queries": 5}),
    ("iterations", {"iterations": 0}),
    ("load_type", {"load_type": "update_key"}),
    ("number_int_cols", {"number_int_cols": 0, "number_char_cols": 0}),
])
def test_config_rejects_bad_values(key, kw):
    with pytest.raises(ValueError, match=f"^{key}:"):
        MysqlslapConfig(**kw)
