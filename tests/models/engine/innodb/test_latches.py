"""InnoDB's shared latches on the statement path: the right-most leaf filling and
splitting, the table-lock queue walks under kernel_mutex, and what the latches do to
throughput when no fsync limits it."""
import pytest

from models.engine.innodb.commit_base import CommitConfig, Trx
from models.engine.innodb.latches import PAGE_DATA_BYTES, PAGE_SPACE_RESERVE
from models.engine.innodb.server.append import insert_statement
from models.workload.mysqlslap import MysqlslapConfig, table_for
from tests.models.engine.stack import build, run_slap


def test_mysqlslap_rows_fill_the_right_most_leaf_and_split_it():
    stmt = insert_statement(*table_for(MysqlslapConfig()))
    # 5-byte header, NULL flags, DB_ROW_ID / DB_TRX_ID / DB_ROLL_PTR, INT, VARCHAR(128)
    assert stmt.rec_bytes == 5 + 1 + 19 + 4 + 129
    per_page = int((PAGE_DATA_BYTES - PAGE_SPACE_RESERVE) // (stmt.rec_bytes + 2 / 6))
    assert per_page == 96            # a 16 KB page minus the 1/16 kept free
    r, eng, *_ = run_slap(1, 1000, commit_protocol="innodb_plugin_104")
    lt = eng.latches
    assert lt.leaf_inserts == 1000
    assert lt.leaf_splits == len(range(per_page + 1, 1001, per_page))   # rows 97, 193, ...
    assert lt.index_lock.x_acquisitions == lt.leaf_splits
    assert lt.table_locks == {}      # every IX lock released at commit


def test_table_lock_queue_walk_grows_with_active_transactions():
    """lock_table_other_has_incompatible steps over every lock in t1's queue;
    lock_table_dequeue at commit over the ones queued behind."""
    sim, dev, q, fs, cpu, eng = build(commit_protocol="mysql51_builtin")
    cfg, lt = eng.cfg, eng.latches
    stmt = insert_statement(*table_for(MysqlslapConfig()))
    trxs = [Trx(i + 1, 0, stmt, 0) for i in range(3)]
    took = []

    def proc():
        for t in trxs:
            t0 = sim.now_ns
            yield from lt.lock_table_ix(t)
            took.append(sim.now_ns - t0)
        t0 = sim.now_ns
        yield from lt.commit_begin(trxs[0], 60)
        took.append(sim.now_ns - t0)

    sim.spawn(proc())
    sim.run()
    step = cfg.lock_queue_step_cycles
    assert took[:3] == [cpu.ns(cfg.lock_table_cycles + k * step) for k in range(3)]
    k = cfg.kernel_mutex_cycles
    assert took[3] == (cpu.ns(k) + cpu.ns(cfg.commit_cycles) + cpu.ns(cfg.mtr_commit_cycles)
                       + cpu.ns(cfg.lock_release_cycles + 2 * step))   # 2 behind; no undo yet
    assert list(lt.table_locks) == [2, 3]


def test_without_durability_the_shared_latches_cap_throughput():
    """No binlog, innodb_flush_log_at_trx_commit=0: no fsync bounds the inserts, the
    CPUs stay mostly idle, yet throughput stops growing beyond a few clients and falls
    at 50: every insert X-latches the same leaf, and the waits turn into sleeps and
    wake-ups (a convoy) once they exceed the spin window."""
    tps, util = {}, {}
    for c in (1, 4, 16, 50):
        r, eng, sim, *_ = run_slap(c, 2000, commit_protocol="innodb_plugin_104",
                                   log_bin=False, innodb_flush_log_at_trx_commit=0)
        tps[c] = r["tps"]
        util[c] = eng.cpu.stats(sim.now_ns)["util_pct"]
        if c == 50:
            s = eng.stats()
    assert tps[4] > 3 * tps[1]                      # a few clients still scale
    assert tps[16] < 1.3 * tps[4] and tps[50] < tps[16]
    assert max(util.values()) < 50
    assert s["leaf_latch.contended"] > 0.5 * s["leaf.inserts"]
    assert s["leaf_latch.wait_s"] > s["kernel_mutex.wait_s"]


def test_autoinc_lock_mode_0_is_refused():
    with pytest.raises(ValueError, match="^innodb_autoinc_lock_mode:"):
        CommitConfig(innodb_autoinc_lock_mode=0)
    CommitConfig(innodb_autoinc_lock_mode=2)


@pytest.mark.parametrize("key", ["row_id_cycles", "autoinc_cycles", "lock_queue_step_cycles", "page_split_cycles",
                                 "mtr_commit_cycles", "kernel_mutex_cycles"])
def test_config_rejects_negative_cycles(key):
    with pytest.raises(ValueError, match=f"^{key}: must be >= 0"):
        CommitConfig(**{key: -1})
