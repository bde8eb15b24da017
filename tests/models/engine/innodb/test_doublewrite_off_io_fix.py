"""Without the doublewrite buffer a flush batch io-fixes each page as its own write is
submitted (5.6 ``buf_flush_page`` -> ``buf_flush_write_block_low`` -> ``fil_io``: one
``io_submit`` per page), and the flushing thread sleeps in ``io_submit`` while the block
queue has no free request: a batch holds at most ``nr_requests`` pages io-fixed, not
the whole batch, so user threads that change a page of the batch wait for one write,
not for a queue of a thousand. Turning the doublewrite buffer off (no copies, no
ibdata1 fsync per chunk) then costs no throughput."""
import pytest

from models.engine.innodb.ops import TableDef
from tests.experiments.helpers import run_point

from .server.stack import build

T100K = (TableDef("sbtest1", 100_000, 180, ("k",)),)


@pytest.mark.parametrize("version,doublewrite", [("5.6", False), ("5.6", True),
                                                 ("5.5", False), ("5.1", False)])
def test_a_batch_of_1000_pages_holds_at_most_the_queue_s_requests_io_fixed(version,
                                                                            doublewrite):
    """5.5 / 5.6 (native AIO): at most ``nr_requests`` pages fixed without doublewrite,
    a doublewrite chunk with it. 5.1 (simulated AIO: ``os_aio`` only queues the page in
    a slot of the write array, 4 x 256 here, for the I/O handler threads): all 1,000."""
    proto = "mysql56_binlog_group_commit" if version == "5.6" else "innodb_plugin_104"
    sim, srv, fs, q = build(tables=T100K, device="ssd", innodb_buffer_pool_size="32M",
                            innodb_doublewrite=doublewrite, innodb_flush_neighbors=0,
                            version=version, commit_protocol=proto)
    srv.files.open()                  # ibdata1 (doublewrite); no background threads
    srv.preload()
    pool, fl = srv.pool, srv.flusher
    lsn = srv.redo.flushed_lsn
    for p in list(pool.tail())[:1000]:
        pool.modify(p, lsn)
    assert len(pool.flush_list) == 1000
    fixed = []

    def batch():
        n = yield from fl.flush_list_batch(1000, 2**62)
        fixed.append(("written", n))

    def sample():
        while not fixed or fixed[-1][0] != "written":
            fixed.append(("fixed", len(pool.io_fixed)))
            yield 50_000
    sim.spawn(batch())
    sim.spawn(sample())
    sim.run(until_ns=5 * 10**9)        # the page cache's writeback timer never stops
    assert fixed[-1] == ("written", 1000) and not pool.flush_list
    most = max(n for what, n in fixed[:-1])
    if doublewrite:
        assert most == srv.dblwr.batch_pages              # one doublewrite chunk: 120
    elif version == "5.1":
        assert most == 1000
    else:
        assert q.nr_requests // 2 < most <= q.nr_requests   # 128, not 1,000
    assert fl.io_fixed_max == most
    # the tablespace's syncs: one per doublewrite chunk (buf_flush_buffered_writes /
    # 5.6 buf_dblwr_update), one at the batch's end without doublewrite (5.5 / 5.6
    # buf_flush_sync_datafiles), none in the 5.1 code base without it
    if doublewrite:
        assert fl.data_fsyncs == -(-1000 // srv.dblwr.batch_pages)          # 9
    else:
        assert fl.data_fsyncs == (0 if version == "5.1" else 1)


def test_doublewrite_off_is_not_slower_on_the_x25e_with_a_32m_pool():
    """sysbench oltp_write_only, 64 threads, a 32 MB pool, 6 s: one LRU batch of ~700
    pages (with doublewrite 3 of its 120-page chunks finish in the 6 s: each waits for
    ibdata1's and the tablespace's fsync, a drive cache FLUSH each on ext4). Before,
    without doublewrite the batch fixed all of them at once and the threads changing
    them waited behind the whole queue (174 tps against 216 with it)."""
    def run(dw):
        return run_point("sysbench_threads", "workload.test=oltp_write_only",
                         "workload.threads=64", "engine.innodb_buffer_pool_size=32M",
                         f"engine.innodb_doublewrite={dw}", "run.scale=0.1")
    on, off = run("true"), run("false")
    assert off["sysbench.Innodb_dblwr_writes"] == 0 < on["sysbench.Innodb_dblwr_writes"]
    assert on["innodb.flush.flushed_lru"] >= 3 * 120 and off["innodb.flush.flushed_lru"] > 500
    assert off["sysbench.tps"] >= on["sysbench.tps"]
    assert off["innodb.flush.io_fixed_max"] <= 128           # the X25-E's nr_requests
    assert on["innodb.flush.io_fixed_max"] <= 128            # a doublewrite chunk: 120
