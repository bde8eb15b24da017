"""The InnoDB server's per-second series reaches Parquet as the detail table `engine`
(results.details=true) and its burst / sustained columns the summary row."""
from __future__ import annotations

import glob

import pyarrow.parquet as pq

from pipeline.run import main


def test_server_series_is_the_engine_detail_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code = main([f"results.dir={out}", "hydra/launcher=serial", "workload=sysbench",
                 "engine=innodb_server_56", "engine.version=percona_5.1",
                 "engine.commit_protocol=innodb_plugin_104",
                 "engine.innodb_adaptive_flushing=false",
                 "engine.innodb_adaptive_checkpoint=keep_average",
                 "engine.innodb_buffer_pool_size=8M", "workload.test=oltp_write_only",
                 "workload.table_size=5000", "workload.threads=2", "workload.time=3",
                 "results.details=true"])
    assert code == 0
    (engine,) = glob.glob(f"{out}/**/_details/engine.parquet", recursive=True)
    rows = pq.read_table(engine).to_pylist()
    assert [r["t_s"] for r in rows] == [1.0, 2.0, 3.0]
    for col in ("trx", "checkpoint_age", "max_modified_age_async", "max_modified_age_sync",
                "pages_dirty", "flushed_list", "flushed_lru", "flushed_single", "wait_free"):
        assert col in rows[0]
    (summary,) = glob.glob(f"{out}/**/summary.parquet", recursive=True)
    row = pq.read_table(summary).to_pylist()[0]
    assert row["innodb.flushing_algorithm"] == "keep_average"
    # the commits of the last second's unfinished transactions (one per thread) come after
    assert 0 <= row["innodb.Com_commit"] - sum(r["trx"] for r in rows) <= 2
    assert row["innodb.burst_tps"] > 0 and row["innodb.sustained_tps"] > 0
