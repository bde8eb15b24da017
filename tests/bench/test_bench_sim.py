"""bench.bench_sim's cases measure what they say: host I/Os, one event per I/O on the
fio event path, the bare loop on the drive's own kernels; a bad --only is one line and
exit code 2."""
import subprocess
import sys

import numpy as np

from bench import cases
from bench.bare_hdd import bare_hdd_run
from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.device.hdd.state import C_SEEKS
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob


def test_fio_event_path_counts_one_host_io_and_one_completion_event_per_read():
    m = cases.fio_run(cases.make_hdd, 500)
    assert m.host_ios == 500
    assert 500 <= m.events <= 502        # + fio's own start-of-measurement event
    assert m.cpu_s > 0 and m.peak_rss_bytes > 0


def test_bare_loop_runs_the_drive_kernels_at_the_event_paths_simulated_rate():
    """Same drive, same closed QD32 loop of 4 KB random reads over 8 GB: the simulated
    IOPS of the bare loop within 5 % of the event path's (only the random draws differ)."""
    n = 3000
    dev = HDD(Simulator(), "sda", default_15k_sas())
    bare_iops = n / (bare_hdd_run(dev, n) / 1e9)
    assert dev.S[C_SEEKS] > 0.9 * n          # the reads went to the media
    sim = Simulator()
    blk = BlockQueue(sim, HDD(sim, "sda", default_15k_sas()), BlockConfig(scheduler="noop"))
    job = FioJob(sim, FioConfig(rw="randread", bs="4k", iodepth=32, size="8g", runtime_s=1e6,
                                number_ios=n), blk, np.random.default_rng(1))
    job.start()
    sim.run()
    event_iops = n / (sim.now_ns / 1e9)
    assert abs(bare_iops / event_iops - 1) < 0.05, (bare_iops, event_iops)


def test_unknown_case_is_one_line_and_exit_code_2():
    p = subprocess.run([sys.executable, "-m", "bench.bench_sim", "--only", "hdd,nvme"],
                       capture_output=True, text=True, cwd=str(cases.ROOT))
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "--only" in p.stderr and "nvme" in p.stderr
    assert p.stdout == ""


def test_nvme_rw_case_mixes_reads_and_writes_and_keeps_the_flash_calendars_deep():
    """The case bench_sim names nvme_rw: 16 KB at 70 % reads, its writes outrunning
    the programs, so the channels' calendars hold many future transfers (what makes
    the flash kernels costly) and reads cut in ahead of them."""
    make, job = cases.FIO_CASES["nvme_rw"]
    sim = Simulator()
    dev = make(sim)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="noop", nr_requests=128))
    fio = FioJob(sim, FioConfig(**{"iodepth": 32, "size": "8g", "runtime_s": 1e6,
                                   "number_ios": 6000, **job}), blk, np.random.default_rng(1))
    fio.start()
    sim.run()
    reads, writes = blk.counters.ios[0], blk.counters.ios[1]
    assert reads + writes == 6000
    assert 0.65 < reads / 6000 < 0.75
    assert dev.ftl.iv_n[:-1].max() > 100          # channels booked far ahead
