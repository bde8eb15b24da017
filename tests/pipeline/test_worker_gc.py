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


class _Cycle:
    def __init__(self):
        self.me = self


def test_after_the_run_its_cycles_are_freed_by_a_young_collection_not_a_full_one():
    """``gc_paused`` ends with one collection of the young generations: a reference
    cycle the run made is freed, and the heap that was alive before the run is not
    walked again (a full collection of a worker's heap costs more than a short run)."""
    import weakref

    collected = []

    def note(phase, info):
        if phase == "start":
            collected.append(info["generation"])

    with worker.gc_paused():
        ref = weakref.ref(_Cycle())              # the run's garbage: a cycle
        gc.callbacks.append(note)
    try:
        assert ref() is None                     # freed by the collection after the run
    finally:
        gc.callbacks.remove(note)
    assert collected and max(collected) <= 1, collected
