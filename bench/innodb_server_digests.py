"""Result digests of five fixed-seed sysbench runs on the InnoDB server: the check that a
speed change leaves results alone (the same digests before and after).

Each case is ``workload=sysbench engine=innodb_server_56``, 16 threads, 2 tables x
200,000 rows, 0.5 simulated seconds, ``run.seed=3``, through ``pipeline.build.simulate``;
the digest is a SHA-256 (16 hex digits) of the summary columns, the detail tables and
the simulated time. Cases: the RAM device with a 12 MB pool (single-page flushes, the
page cleaner), the same on 5.5 with ``innodb_flush_method=fsync`` and no doublewrite
(buffered data files, the master thread), the X25-E with a 5 MB pool and a 4 MB log
(checkpoint stalls), a read-only run with a 64 MB pool, and ``oltp_write_only`` on the
default HDD with ``innodb_flush_neighbors=2``. Prints one line per case::

    python -m bench.innodb_server_digests

(CPU seconds are printed too, build included: not a speed measurement.)
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

BASE = ["workload=sysbench", "engine=innodb_server_56", "workload.threads=16",
        "workload.tables=2", "workload.table_size=200000", "workload.time=0.5", "run.seed=3"]
CASES = {
    "ram_rw": ["device@device.sda=tmpfs", "engine.innodb_buffer_pool_size=12m"],
    "ram_rw_55_fsync": ["device@device.sda=tmpfs", "engine.innodb_buffer_pool_size=12m",
                        "engine.version=5.5", "engine.innodb_flush_method=fsync",
                        "engine.innodb_doublewrite=false"],
    "ssd_small": ["device@device.sda=ssd_x25e", "engine.innodb_buffer_pool_size=5m",
                  "engine.innodb_log_file_size=4m", "workload.rand_type=uniform"],
    "ram_ro": ["device@device.sda=tmpfs", "engine.innodb_buffer_pool_size=64m",
               "workload.test=oltp_read_only"],
    "hdd_wo": ["engine.innodb_buffer_pool_size=8m", "workload.test=oltp_write_only",
               "engine.innodb_flush_neighbors=2"],
}


def main() -> None:
    from hydra import compose, initialize_config_dir

    from pipeline.build import simulate
    from pipeline.schema import register
    from pipeline.spec import validate

    conf = Path(__file__).resolve().parents[1] / "conf"
    register()
    for name, overrides in CASES.items():
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            cfg = compose("config", overrides=BASE + overrides, return_hydra_config=True)
        c0 = time.process_time()
        r = simulate(validate(cfg, "digest"))
        cpu = time.process_time() - c0
        blob = json.dumps([r.summary, r.details, r.sim_ns], sort_keys=True, default=str)
        print(name, hashlib.sha256(blob.encode()).hexdigest()[:16], f"events={r.events}",
              f"cpu_s={cpu:.2f}", f"tps={r.summary.get('sysbench.tps', 0):.1f}", flush=True)


if __name__ == "__main__":
    main()
