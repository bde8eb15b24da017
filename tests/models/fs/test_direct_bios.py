"""O_DIRECT bios: the one-run fast path (``contiguous_block``, Python ints) builds the
same bios as the general path over the block map's runs (``run_bios``), for block maps
with holes, unwritten extents, discontiguities and runs longer than a bio."""
from __future__ import annotations

import numpy as np
import pytest

from models.device.request import READ, WRITE
from models.fs.direct import P, contiguous_block, direct_bios, run_bios
from models.fs.file import UNWRITTEN, File
from models.fs.writeback import BIO_MAX_PAGES


def _file(rng, pages: int) -> File:
    f = File(None, "t", 1)
    f.ensure(pages)
    b = 1000 + rng.integers(0, 50)
    for p in range(pages):                      # mostly contiguous, with breaks
        r = rng.random()
        f.block[p] = -1 if r < 0.05 else b
        if r > 0.9:
            b += int(rng.integers(2, 40))
        else:
            b += 1
        if rng.random() < 0.05:
            f.state[p] |= UNWRITTEN
    return f


def _key(bios):
    return [(b.op, b.offset_bytes, b.size_bytes) for b in bios]


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_path_builds_the_bios_of_the_general_path(seed):
    rng = np.random.default_rng(seed)
    pages = 3 * BIO_MAX_PAGES
    f = _file(rng, pages)
    fast = 0
    for _ in range(400):
        op = READ if rng.random() < 0.5 else WRITE
        n_pages = int(rng.choice([1, 2, 4, 8, 64, BIO_MAX_PAGES, BIO_MAX_PAGES + 1]))
        p0 = int(rng.integers(0, pages - n_pages))
        off = p0 * P + 512 * int(rng.integers(0, 8))
        n = max(512, n_pages * P - 512 * int(rng.integers(0, 8)))
        fast += contiguous_block(f, off // P, -(-(off + n) // P), op) >= 0
        assert _key(direct_bios(None, f, op, off, n, 0)) == _key(run_bios(f, op, off, n, 0))
    assert 50 < fast < 400          # both paths taken


def test_one_run_is_one_bio_and_a_break_two():
    f = File(None, "t", 1)
    f.ensure(8)
    f.block[:8] = np.arange(100, 108)
    assert _key(direct_bios(None, f, READ, 0, 4 * P, 0)) == [(READ, 100 * P, 4 * P)]
    f.block[2] = 500
    assert _key(direct_bios(None, f, READ, 0, 4 * P, 0)) == [
        (READ, 100 * P, 2 * P), (READ, 500 * P, P), (READ, 103 * P, P)]
    f.block[2] = 102
    f.state[1] |= UNWRITTEN                     # reads as zeros: no I/O for it
    assert _key(direct_bios(None, f, READ, 0, 4 * P, 0)) == [
        (READ, 100 * P, P), (READ, 102 * P, 2 * P)]
    assert _key(direct_bios(None, f, WRITE, 0, 4 * P, 0)) == [(WRITE, 100 * P, 4 * P)]
