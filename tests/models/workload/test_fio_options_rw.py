"""fio's ``rw=`` values as fio's options.c lists them (the ``posval`` of option ``rw``):
read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite,
randtrimwrite. ``rw`` is ``readwrite`` (both TD_DDIR_RW); every mode that reads or
writes is modelled, the trim ones are refused as not modelled."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.request import READ, WRITE
from models.fs import Filesystem, FsConfig, PageCache, PageCacheConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from models.workload.fio.buffered import FioBufferedJob
from tests.models.fakes import FixedDevice

MS = 1_000_000


@pytest.mark.parametrize("rw, mode", [
    ("read", "read"), ("write", "write"), ("randread", "randread"), ("randwrite", "randwrite"),
    ("rw", "readwrite"), ("readwrite", "readwrite"), ("randrw", "randrw"),
])
def test_every_fio_rw_value_that_reads_or_writes_is_accepted(rw, mode):
    cfg = FioConfig(rw=rw)
    assert (cfg.rw, cfg.mode) == (rw, mode)


@pytest.mark.parametrize("rw", ["trim", "randtrim", "trimwrite", "randtrimwrite"])
def test_the_trim_modes_are_refused_as_not_modelled(rw):
    with pytest.raises(ValueError, match=rf"^rw: '{rw}' is a fio mode that is not modelled "
                                         r"here \(no trims are issued\); modelled: read, write, "
                                         r"randread, randwrite, randrw, readwrite, rw$"):
        FioConfig(rw=rw)


@pytest.mark.parametrize("rw", ["scan", "RW", "scan:8", ""])
def test_a_value_fio_does_not_have_is_unknown(rw):
    with pytest.raises(ValueError, match=r"^rw: must be one of read, write, randread, "
                                         r"randwrite, randrw, readwrite, rw \(with fio's "
                                         r"optional :<postfix>\), got "):
        FioConfig(rw=rw)


def _direct(rw, **kw):
    sim = Simulator()
    dev = FixedDevice(sim, service_ns=MS, queue_depth=32)
    job = FioJob(sim, FioConfig(rw=rw, iodepth=4, size="1m", runtime_s=0.1, **kw),
                 BlockQueue(sim, dev, BlockConfig(scheduler="noop")), np.random.default_rng(2))
    job.start()
    sim.run()
    return job.results(), dev.served


@pytest.mark.parametrize("kw", [{}, {"rwmixread": 30}, {"rate_iops": "300,100"}])
def test_rw_rw_runs_exactly_as_readwrite(kw):
    # the same seed, the same I/Os: sequential, reads and writes mixed by rwmixread
    # (a rate cap takes the paced job's per-direction caps: fio.pace.RateCap)
    res, served = _direct("rw", **kw)
    assert (res, served) == _direct("readwrite", **kw)
    ops = [op for _, op, _, _ in served]
    assert READ in ops and WRITE in ops
    for op in (READ, WRITE):      # each direction its own sequential stream
        offs = [off for _, o, off, _ in served if o == op][:4]
        assert offs == [i * 4096 for i in range(4)]


def test_rw_rw_runs_exactly_as_readwrite_through_the_page_cache():
    def run(rw):
        sim = Simulator()
        dev = FixedDevice(sim, service_ns=100_000, queue_depth=32, capacity_bytes=2**34)
        fs = Filesystem(sim, FsConfig(type="ext4"), BlockQueue(sim, dev, BlockConfig(
            scheduler="noop")), PageCache(sim, PageCacheConfig(memory_bytes="16m")))
        job = FioBufferedJob(sim, FioConfig(rw=rw, direct=False, size="1m", runtime_s=0.05),
                             fs, np.random.default_rng(3))
        job.start()
        sim.run()
        return job.results(), dev.served

    res, served = run("rw")
    assert (res, served) == run("readwrite")
    assert res["read_iops"] > 0 and res["write_iops"] > 0
