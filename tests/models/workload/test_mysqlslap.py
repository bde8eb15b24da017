"""mysqlslap workload: query division, iterations, statement shapes, reported columns."""
import pytest

from models.workload.mysqlslap import Mysqlslap, MysqlslapConfig, statement_for
from tests.models.engine.stack import build, run_slap


def test_queries_divided_among_clients_and_iterations_repeat():
    r, eng, sim, fs, q = run_slap(3, 10, iterations=2, commit_protocol="innodb_plugin_104")
    assert r["transactions"] == 20 and eng.trx_committed == 20
    assert r["iterations_done"] == 2
    assert r["queries_per_iteration"] == 10
    assert r["statement_lat_count"] == 20
    assert r["seconds"] > 0 and r["tps"] == pytest.approx(20 / (sim.now_ns / 1e9))


def test_write_statement_shape():
    s = statement_for(MysqlslapConfig(load_type="write"))
    assert s.kind == "insert"
    # INSERT INTO t1 VALUES (1804289383,'<128 chars>')
    assert s.text_len == len("INSERT INTO t1 VALUES (") + 10 + 1 + 130 + 1
    assert s.row_bytes == 4 + 129
    wide = statement_for(MysqlslapConfig(load_type="write", number_char_cols=3))
    assert wide.redo_bytes - s.redo_bytes == 2 * 129


def test_add_autoincrement_keys_the_table_on_id():
    plain = statement_for(MysqlslapConfig())
    s = statement_for(MysqlslapConfig(auto_generate_sql_add_autoincrement=True))
    assert (plain.clustered_key, s.clustered_key) == ("row_id", "auto_increment")
    assert s.text_len - plain.text_len == len("NULL,")
    assert s.rec_bytes - plain.rec_bytes == 8 - 6        # id BIGINT, no DB_ROW_ID
    for autoinc in (False, True):
        sim, dev, q, fs, c, eng = build(commit_protocol="innodb_plugin_104")
        slap = Mysqlslap(sim, MysqlslapConfig(concurrency=4, number_of_queries=200,
                                              auto_generate_sql_add_autoincrement=autoinc), eng)
        slap.start()
        sim.run()
        lt = eng.latches
        assert lt.leaf_inserts == 200                        # the right-most leaf either way
        assert (lt.autoinc_mutex.acquisitions, lt.dict_sys_mutex.acquisitions) == \
            ((200, 0) if autoinc else (0, 200))


def test_update_key_load_runs_updates():
    r, eng, *_ = run_slap(4, 40, load_type="update_key", commit_protocol="mysql51_builtin")
    assert statement_for(MysqlslapConfig(load_type="update_key")).kind == "update"
    assert r["transactions"] == 40 and r["fsyncs_per_trx_redo"] == pytest.approx(2.0)


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
    ("load_type", {"load_type": "mixed"}),
    ("number_int_cols", {"number_int_cols": 0, "number_char_cols": 0}),
])
def test_config_rejects_bad_values(key, kw):
    with pytest.raises(ValueError, match=f"^{key}:"):
        MysqlslapConfig(**kw)
