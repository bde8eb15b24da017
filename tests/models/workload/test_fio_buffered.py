"""fio with direct=0: the job's I/O goes through the filesystem and the page cache
(``models.workload.fio.buffered``); direct=1 stays on the block device."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, WRITE
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.fakes import FixedDevice

US = 1000


def _run(cfg, memory="16m", fs_type="ext4", **cache_kw):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100 * US, queue_depth=32, capacity_bytes=2**34)
    q = BlockQueue(sim, dev, BlockConfig(scheduler="noop"))
    fs = Filesystem(sim, FsConfig(type=fs_type), q, PageCache(sim, PageCacheConfig(
        memory_bytes=memory, **cache_kw)))
    job = FioBufferedJob(sim, cfg, fs, np.random.default_rng(3))
    job.start()
    sim.run()
    return job, dev


def _device(dev, op):
    return [s for s in dev.served if s[1] == op]


def test_random_reads_of_a_file_that_fits_the_cache_stop_reaching_the_device():
    # 4 MB file (1024 pages), 16 MB of page cache: every page is read from the device
    # once, then every read is a hit
    job, dev = _run(FioConfig(rw="randread", direct=False, size="4m", number_ios=20_000,
                              runtime_s=60))
    reads = _device(dev, READ)
    assert sum(r[3] for r in reads) <= 4 << 20            # no page read twice
    assert len({r[2] for r in reads}) == len(reads)
    last_miss = max(r[0] for r in reads)
    res = job.results()
    assert res["read_clat_count"] == 20_000
    lat = np.frombuffer(job.lat[READ].samples, dtype=np.int64)
    t = np.cumsum(lat)
    after = lat[t > last_miss + 1000 * US]                 # after the first pass
    assert after.size > 10_000 and after.max() < 100 * US  # cache copies, no device read


def test_random_reads_of_a_file_four_times_the_cache_miss_three_times_in_four():
    # 32 MB file, 8 MB of cache, uniform random 4k reads: LRU keeps ~1/4 of the pages
    job, dev = _run(FioConfig(rw="randread", direct=False, size="32m", number_ios=24_000,
                              runtime_s=60), memory="8m")
    lat = np.frombuffer(job.lat[READ].samples, dtype=np.int64)[-16_000:]   # cache full
    misses = int((lat >= 100 * US).sum())      # a miss waits for the device's 100 us
    assert misses / lat.size == pytest.approx(0.75, abs=0.02)
    assert len(_device(dev, READ)) > 24_000 * 0.6
    assert job.fs.cache.evicted_pages > 0


def test_buffered_writes_are_written_back_by_the_kernel_and_fsync_n_syncs_every_n():
    job, dev = _run(FioConfig(rw="randwrite", direct=False, size="8m", number_ios=3000,
                              fsync=100, runtime_s=60))
    res = job.results()
    assert res["sync_count"] == 30
    writes = _device(dev, WRITE)
    assert writes, "fsync writes the dirty pages"
    # a write() only dirties the page cache: no write waits for the device
    assert res["write_clat_max_ms"] < 0.1 and res["sync_lat_mean_ms"] > 0.1
    # without fsync: under dirty_background_ratio (10 % of 1 GB) and younger than
    # dirty_expire_centisecs (30 s) nothing is written within a 2 s run; 8 MB dirty in
    # a 16 MB cache is over the background threshold, so the flusher writes
    for memory, written in (("1g", False), ("16m", True)):
        job, dev = _run(FioConfig(rw="randwrite", direct=False, size="8m", runtime_s=2.0,
                                  time_based=True, thinktime_us=100), memory=memory)
        assert job.results()["write_iops"] > 1000
        assert bool(_device(dev, WRITE)) is written, memory


def test_direct_1_is_the_block_device_job_and_direct_0_the_buffered_one():
    sim = Simulator()
    q = BlockQueue(sim, FixedDevice(sim), BlockConfig(scheduler="noop"))
    with pytest.raises(ValueError, match="^direct: the block-device fio job is direct=1"):
        FioJob(sim, FioConfig(direct=False), q, np.random.default_rng(0))
    fs = Filesystem(sim, FsConfig(type="ext4"), q, PageCache(sim))
    with pytest.raises(ValueError, match="^direct: a buffered fio job is direct=0"):
        FioBufferedJob(sim, FioConfig(direct=True), fs, np.random.default_rng(0))
