"""E5: MyISAM inserts with random keys through ext3 + deadline: nr_requests decides
whether the journal commit's random index writes reach the disk sorted.

The mechanism (models/fs/ext3.py, models/workload/myisam_insert.py): every INSERT
dirties ~4 random 1 KB key blocks through the page cache; ext3's 5 s commit writes the
dirty pages in the order they were dirtied. With nr_requests=128 the elevator sorts
128 of them at a time - 4 KB random writes, each at the cost of a seek - and the
inserter, landing on pages the commit has not written yet, writes them itself and
waits behind the queue. With nr_requests=100000 the whole list is in the elevator at
once: sorted sweeps, adjacent pages merged, and the inserter no longer waits.
"""
from functools import lru_cache

import pytest

from models.workload.myisam_insert import MyisamInsert, MyisamInsertConfig
from tests.models.workload.fs_stack import hdd_fs


@lru_cache(maxsize=None)
def _run(nr_requests: int, runtime_s: float = 12.0, initial_rows: int = 1_500_000):
    sim, fs = hdd_fs("ext3", nr_requests=nr_requests, scheduler="deadline", memory="1g")
    wl = MyisamInsert(sim, MyisamInsertConfig(runtime_s=runtime_s, initial_rows=initial_rows),
                      fs)
    snap = fs.queue.snapshot()
    wl.start()
    sim.run(until_ns=int((runtime_s + 1) * 1e9))
    r = wl.results()
    r.update({f"iostat_{k}": v for k, v in fs.queue.iostat(snap).items()})
    return r


def test_short_queue_sends_random_4k_writes_and_the_inserter_waits_behind_it():
    r = _run(128)
    assert r["finished"]
    assert r["iostat_avgrq_sz"] == pytest.approx(8.0, abs=0.3)      # single 4 KB pages
    assert r["iostat_wrqm_s"] < 0.05 * r["iostat_w_s"]
    assert r["fs_ordered_sync_writes"] > 20                         # collisions ...
    assert r["stmt_lat_max_ms"] > 50                                # ... each a wait


def test_deep_queue_sorts_and_merges_the_commit_and_inserts_run_faster():
    short, deep = _run(128), _run(100_000)
    assert deep["iostat_avgrq_sz"] > 2 * short["iostat_avgrq_sz"]    # adjacent pages merged
    assert deep["iostat_wrqm_s"] > deep["iostat_w_s"]
    assert deep["iostat_avgqu_sz"] > 128 > short["iostat_avgqu_sz"]  # more than 128 queued
    assert deep["fs_ordered_sync_writes"] < 0.2 * short["fs_ordered_sync_writes"]
    assert deep["rows_per_s"] > 1.5 * short["rows_per_s"]


def test_rows_and_blocks_are_accounted():
    r = _run(128)
    assert r["rows"] == r["stmt_lat_count"]
    assert r["rows"] <= r["rows_total"] - 1_500_000 <= r["rows"] + 1  # + the one in flight
    assert r["rows_per_s"] == pytest.approx(r["rows"] / r["runtime_s"])
    assert r["index_bytes"] > 1_500_000 * 4 * 10 / 1024 * 1024 * 0.9   # 4 indexes, 10-byte entries


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="runtime_s"):
        MyisamInsertConfig(runtime_s=0)
    with pytest.raises(ValueError, match="myisam_block_size"):
        MyisamInsertConfig(myisam_block_size=1000)
    with pytest.raises(ValueError, match="key_buffer_size"):
        MyisamInsertConfig(key_buffer_size="2q")
