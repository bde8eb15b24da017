"""The measured interval's end: a connection still in a transaction at the deadline
keeps the run going until it returns (its latency is not counted), but the server's
per-second series ends with the interval - the seconds after it, in which no
connection starts a transaction, are not a stall."""
import numpy as np

from models.workload.tpcc import TpccConfig
from models.workload.tpcc.workload import Tpcc

from ...engine.innodb.server.stack import build


def test_the_series_ends_at_the_deadline_while_a_late_transaction_finishes():
    sim, srv, _, _ = build(tables=(), innodb_buffer_pool_size="16M")
    w = Tpcc(sim, TpccConfig(warehouses=1, connections=2, duration=2), srv,
             np.random.default_rng(5))
    run = srv.run

    def slow(thd, trx):                 # connection 0's last transaction takes 3 s
        if thd == 0 and sim.now_ns > 1_900_000_000:
            yield 3_000_000_000
        return (yield from run(thd, trx))
    srv.run = slow
    w.start()
    sim.run()
    assert w.finished_ns > 4_000_000_000
    t = [r["t_s"] for r in srv.series.rows]
    assert t == [1.0, 2.0]
    assert w.results()["notpm"] > 0
