"""Transactions: deadlock victim rolled back and retried, innodb_thread_concurrency
admission, tables inside ibdata1 without innodb_file_per_table, inserts beyond the
loaded keys."""
from models.engine.innodb.ops import Op, Transaction
from tests.models.engine.innodb.server.stack import build


def _run_all(sim, srv, trxs, until_s=1.0):
    done = []

    def client(i, t):
        yield from srv.run(i, t)
        done.append((i, sim.now_ns))
    srv.preload()
    srv.start()
    for i, t in enumerate(trxs):
        sim.spawn(client(i, t))
    sim.run(until_ns=int(until_s * 1e9))
    return done


def test_deadlock_victim_is_rolled_back_and_retried():
    sim, srv, fs, q = build()
    a = Transaction((Op("update_non_index", "sbtest1", 1), Op("update_non_index", "sbtest1", 2)))
    b = Transaction((Op("update_non_index", "sbtest1", 2), Op("update_non_index", "sbtest1", 1)))
    done = _run_all(sim, srv, [a, b])
    st = srv.status()
    assert len(done) == 2                                 # both committed in the end
    assert st["Innodb_deadlocks"] == 1 and st["Com_rollback"] == 1
    assert st["Innodb_row_lock_waits"] >= 1 and st["Innodb_row_lock_current_waits"] == 0
    # disjoint rows: no deadlock, no wait
    sim, srv, fs, q = build()
    c = Transaction((Op("update_non_index", "sbtest1", 3), Op("update_non_index", "sbtest1", 4)))
    _run_all(sim, srv, [a, c])
    assert srv.status()["Innodb_deadlocks"] == 0 and srv.status()["Innodb_row_lock_waits"] == 0


def test_thread_concurrency_admits_that_many_threads():
    trxs = [Transaction(tuple(Op("point_select", "sbtest1", 1 + 97 * i + j) for j in range(50)))
            for i in range(8)]

    def finish_times(conc):
        sim, srv, fs, q = build(innodb_thread_concurrency=conc)
        return sorted(t for _, t in _run_all(sim, srv, trxs))

    free = finish_times(0)
    one = finish_times(1)
    assert len(free) == len(one) == 8
    # one thread inside InnoDB at a time: the last finishes ~8 transactions' CPU later
    assert one[-1] > 4 * free[-1]


def test_tables_inside_ibdata_without_file_per_table():
    sim, srv, fs, q = build(innodb_file_per_table=False, innodb_buffer_pool_size="8M")
    assert "sbtest1.ibd" not in fs.files
    done = _run_all(sim, srv, [Transaction((Op("update_non_index", "sbtest1", 5),))])
    assert done and fs.files["ibdata1"].size_bytes > 256 * 16384
    sim, srv, fs, q = build(innodb_buffer_pool_size="8M")
    assert "sbtest1.ibd" in fs.files


def test_insert_beyond_the_loaded_keys_creates_a_leaf_without_reading_it():
    sim, srv, fs, q = build()
    rows = srv.tables["sbtest1"].rows
    reads0 = srv.pool.reads
    done = _run_all(sim, srv, [Transaction((Op("insert", "sbtest1", rows + 1000),))])
    assert done and srv.status()["Innodb_rows_inserted"] == 1
    assert srv.pool.pages_created >= 2                  # the new leaf and an undo page
    assert srv.pool.reads == reads0                     # warm pool: nothing read


def test_a_log_buffer_too_small_for_the_records_makes_appends_wait():
    from tests.models.engine.innodb.server.stack import clients, updates

    def waits(buf):
        # appends that arrive while a log write + fsync is in progress cannot write
        # the buffer out (one writer at a time): a small buffer fills
        sim, srv, fs, q = build(innodb_log_buffer_size=buf, log_bin=False, ram_MBps=20.0)
        clients(sim, srv, 8, updates(n=8), 0.05, preload=True)
        return srv.status()["Innodb_log_waits"], srv.status()["Com_commit"]

    small, n_small = waits("8K")
    large, n_large = waits("8M")
    assert small > 10 and large == 0 and n_small > 0 and n_large > 0


def test_thread_concurrency_is_left_for_the_commit_and_for_row_lock_waits():
    from tests.models.engine.innodb.server.stack import clients, updates

    def run(conc):
        # commit-bound updates of distinct rows by 8 clients: the log flush groups
        # the commits of every thread waiting in it, whatever the concurrency limit
        # (a slow log device: the log write + fsync dominates)
        sim, srv, fs, q = build(innodb_thread_concurrency=conc, log_bin=False, ram_MBps=20.0)
        clients(sim, srv, 8, updates(n=2), 0.1, preload=True)
        st = srv.status()
        return st["Com_commit"], st["Innodb_os_log_fsyncs"]

    free, fsyncs_free = run(0)
    two, fsyncs_two = run(2)
    # a slot held through the log fsync lets at most 2 commits share each fsync (it
    # gave 107 commits, 107 fsyncs against 352 and 89)
    assert fsyncs_two < two / 3 and two > 0.9 * free


def test_a_thread_waiting_for_a_row_lock_holds_no_concurrency_slot():
    # a holds row 1 and sleeps in a long scan; b waits for row 1; c needs only a slot:
    # with one slot, c runs while b waits (b left InnoDB), not after a and b
    a = Transaction((Op("update_non_index", "sbtest1", 1),)
                    + tuple(Op("point_select", "sbtest1", 100 + j) for j in range(200)))
    b = Transaction((Op("update_non_index", "sbtest1", 1),))
    c = Transaction((Op("point_select", "sbtest1", 5000),))
    sim, srv, fs, q = build(innodb_thread_concurrency=2)
    done = dict(_run_all(sim, srv, [a, b, c]))
    assert done[2] < done[0] < done[1]


def test_a_client_rollback_commits_nothing_with_or_without_a_concurrency_limit():
    # New-Order's 1 %: ROLLBACK after the changes - no commit, no log flush
    for conc in (0, 4):
        sim, srv, fs, q = build(innodb_thread_concurrency=conc)
        t = Transaction((Op("update_non_index", "sbtest1", 7),), rollback=True)
        assert len(_run_all(sim, srv, [t])) == 1
        st = srv.status()
        assert (st["Com_rollback"], st["Com_commit"], st["Handler_commit"]) == (1, 0, 0)
        assert st["Innodb_os_log_fsyncs"] == 0
