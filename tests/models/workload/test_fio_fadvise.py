"""fio advises each file it opens (ioengines.c ``td_io_open_file``, ``fadvise_hint=1``
by default): POSIX_FADV_RANDOM for a random mode - the kernel then reads what each read
asks for, no read-ahead -, POSIX_FADV_SEQUENTIAL otherwise - read-ahead windows up to
twice ``read_ahead_kb`` (mm/fadvise.c: ``ra_pages = bdi->ra_pages * 2``).
``fadvise_hint=0`` advises nothing: windows up to ``read_ahead_kb``. Checked on the
reads the device serves (``FixedDevice.served``: time, op, offset, bytes)."""
import pytest

from models.device.request import READ
from models.workload.fio import FioConfig
from tests.models.workload.test_fio_buffered import _device, _run

KB = 1024


def _reads(**fio):
    cfg = FioConfig(**{"direct": False, "size": "8m", "number_ios": 1000,
                       "time_based": False, "runtime_s": 60, **fio})
    job, dev = _run(cfg)
    return job, [r[3] for r in _device(dev, READ)]


@pytest.mark.parametrize("hint, largest_kb", [("1", 256), ("sequential", 256), ("0", 128)])
def test_a_sequential_reader_reads_ahead_twice_as_far_when_fio_advises_sequential(hint,
                                                                                   largest_kb):
    job, sizes = _reads(rw="read", fadvise_hint=hint)
    assert max(sizes) == largest_kb * KB
    assert job.files[0].ra_pages == (None if hint == "0" else 64)


@pytest.mark.parametrize("hint", ["1", "random"])
def test_a_random_reader_advised_random_reads_only_its_own_pages(hint):
    job, sizes = _reads(rw="randread", fadvise_hint=hint)
    assert set(sizes) == {4 * KB}
    assert job.files[0].ra_pages == 0


def test_without_advice_a_random_read_that_looks_sequential_starts_a_window():
    # 8 MB, 1,000 random 4 KB reads: some land on page 0 or right after the last read,
    # which the kernel reads ahead from
    _, sizes = _reads(rw="randread", fadvise_hint="0")
    assert max(sizes) > 4 * KB


def test_a_bad_fadvise_hint_is_an_error_naming_it():
    with pytest.raises(ValueError, match="^fadvise_hint: "):
        FioConfig(fadvise_hint="often")
