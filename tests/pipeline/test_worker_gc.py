"""A run on a worker executes with the cyclic garbage collector off (what was alive
before it frozen), and the collector is back as it was afterwards."""
from __future__ import annotations

import gc

import pipeline.worker as worker
from pipeline.fanout import prepare_run


def test_a_run_executes_without_garbage_collection_and_restores_it(compose, tmp_path,
                                                                   monkeypatch):
    spec = prepare_run(compose(f"results.dir={tmp_path}", "workload.runtime_s=0.01"), "w", "v1")
    seen = {}
    real = worker.execute

    def execute(s):
        seen["enabled"] = gc.isenabled()
        seen["frozen"] = gc.get_freeze_count()
        return real(s)

    monkeypatch.setattr(worker, "execute", execute)
    assert gc.isenabled()
    out = worker.simulate_run(spec)
    assert out.status == "ok"
    assert seen["enabled"] is False and seen["frozen"] > 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
