"""A buffered fio job's files are bounded by the page cache's per-page state
(``models.fs.file.MAX_PAGES``): a bigger ``size`` is a config error naming ``size``
before anything is allocated, not an out-of-memory in ``File.ensure``. A direct=1 job
keeps no per-page state and runs on a region of any size."""
import tracemalloc

import numpy as np
import pytest

import models.workload.fio.buffered as fio_buffered
from models.block import BlockConfig, BlockQueue
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.fs.file import ARRAYS, MAX_PAGES, STATE_BYTES_PER_PAGE, File
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.fakes import FixedDevice

TIB = 2**40


def _fs(capacity_bytes=8 * TIB):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=capacity_bytes)
    fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig(
        scheduler="noop")), PageCache(sim, PageCacheConfig(memory_bytes="16m")))
    return sim, fs


def test_the_bound_is_128_gib_of_files_about_a_gigabyte_of_page_state():
    assert STATE_BYTES_PER_PAGE == 33 and MAX_PAGES == 2**25
    f = File(None, "f", 1)
    assert [(a, getattr(f, a).dtype) for a, _, _ in ARRAYS] == [(a, np.dtype(t))
                                                                  for a, t, _ in ARRAYS]


def test_a_4_tib_buffered_job_is_a_one_line_error_naming_size_before_any_allocation():
    sim, fs = _fs()
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as ex:
            FioBufferedJob(sim, FioConfig(direct=False, size="4t"), fs, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(ex.value) == (
        "size: numjobs x (offset + size) (4398046511104 bytes) is 1073741824 pages of "
        "page-cache state (33.0 GiB); the model holds at most 33554432 pages (128 GiB of "
        "files): give a smaller size, or direct=1")
    assert peak < 16 * 2**20
    assert fs.files == {}                           # no file was laid out


@pytest.mark.parametrize("kw, ok", [
    ({"size": "4m"}, True),                         # 1024 pages: at the bound
    ({"size": "4100k"}, False),                     # 1025
    ({"size": "2m", "numjobs": 2}, True),           # every job's file counts
    ({"size": "2m", "numjobs": 3}, False),
    ({"size": "4m", "offset": "4k"}, False),        # a file holds offset + size
])
def test_the_bound_counts_every_jobs_file_offset_included(monkeypatch, kw, ok):
    monkeypatch.setattr(fio_buffered, "MAX_PAGES", 1024)
    sim, fs = _fs(2**34)
    cfg = FioConfig(direct=False, runtime_s=0.01, **kw)
    if not ok:
        with pytest.raises(ValueError, match=r"^size: numjobs x \(offset \+ size\) .* at most "
                                             r"1024 pages \(0 GiB of files\)"):
            FioBufferedJob(sim, cfg, fs, np.random.default_rng(0))
        return
    job = FioBufferedJob(sim, cfg, fs, np.random.default_rng(0))
    job.start()
    sim.run()
    assert job.results()["read_iops"] > 0


def test_a_direct_job_on_a_4_tib_region_keeps_no_per_page_state():
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=8 * TIB)
    tracemalloc.start()
    try:
        job = FioJob(sim, FioConfig(rw="randread", iodepth=8, size="4t", runtime_s=0.01),
                     BlockQueue(sim, dev, BlockConfig(scheduler="noop")), np.random.default_rng(0))
        job.start()
        sim.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    res = job.results()
    # 100 us each, one at a time: 100 in the 10 ms, and the 7 queued at its end reaped
    assert res["read_clat_count"] == pytest.approx(107, abs=1)
    assert max(off for _, _, off, _ in dev.served) > TIB            # spread over the region
    assert peak < 16 * 2**20
