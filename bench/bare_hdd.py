"""The limit for the fio HDD case: a bare compiled closed loop of the same drive model.

No events, no block layer, no fio, no metrics: ``iodepth`` 4 KB random reads kept
queued in the drive's tag slots, each completion immediately followed by the next
command, through the HDD's own compiled kernels (``hdd_submit`` / ``hdd_dispatch`` of
``models.device.hdd.cache``, over the state vector of ``models.device.hdd.mech``).
The order mirrors the event path at QD32: at a completion the drive starts its next
command among the ``iodepth - 1`` still queued, then the host's new command arrives
in the slot the previous dispatch freed. Random blocks come from numba's own
generator (the loop is a speed limit, not a result).
"""
from __future__ import annotations

import numba
import numpy as np

from models.device.hdd import HDD
from models.device.hdd.cache import hdd_dispatch, hdd_submit


@numba.njit(cache=True)
def _bare_loop(S, n_ios, iodepth, n_blocks, bs, seed):
    np.random.seed(seed)
    now = 0
    for slot in range(iodepth):
        off = np.random.randint(0, n_blocks) * bs
        hdd_submit(S, slot, off, off + bs, 0, now)
    free, now, _hit = hdd_dispatch(S, now)
    for _ in range(n_ios - 1):
        slot, done, _hit = hdd_dispatch(S, now)
        off = np.random.randint(0, n_blocks) * bs
        hdd_submit(S, free, off, off + bs, 0, now)
        free = slot
        now = done
    return now


def bare_hdd_run(dev: HDD, n_ios: int, iodepth: int = 32, size_bytes: int = 8 << 30,
                 bs: int = 4096, seed: int = 1) -> int:
    """Run ``n_ios`` reads on ``dev``'s state vector; returns the simulated ns."""
    if dev.queue_depth < iodepth:
        raise ValueError(f"iodepth {iodepth} exceeds the drive's queue_depth {dev.queue_depth}")
    return int(_bare_loop(dev.S, n_ios, iodepth, size_bytes // bs, bs, seed))
