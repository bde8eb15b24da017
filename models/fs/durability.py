"""What a power loss at this instant would keep: the durability state of a filesystem.

Rules (see ``base.py`` for the epochs):

- A page's data is on stable media if its last write completed with FUA, or before
  a FLUSH that has completed, or the device holds no volatile data now. A page that
  is dirty or under writeback has newer data than the device.
- A file's size after recovery is the size recorded by the last transaction that
  recovery would replay (``Journal.durable_tid``); the same for block mappings and
  unwritten-extent conversions (a page whose mapping is not durable reads back as a
  hole / zeros).
- Data the application wrote (``HASDATA``) within the size it sees, that would not
  read back after recovery, is *lost*: not stable, beyond the recovered size, or
  behind a mapping that is not durable.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .file import HASDATA, UNWRITTEN


@dataclass
class FileCrashState:
    name: str
    size_bytes: int              # what the application sees now
    recovered_size_bytes: int    # what the file would be after a crash + recovery
    written_bytes: int           # bytes of pages the application wrote (within size)
    durable_bytes: int           # of those, bytes that would read back
    lost_ranges: list = field(default_factory=list)   # [(offset, length)] in bytes

    @property
    def lost_bytes(self) -> int:
        return self.written_bytes - self.durable_bytes


@dataclass
class CrashState:
    time_ns: int
    stable_epoch: int
    durable_tid: int
    device_volatile_bytes: int
    files: dict

    def __getitem__(self, name: str) -> FileCrashState:
        return self.files[name]


def crash_state(fs) -> CrashState:
    volatile = fs.queue.device.volatile_bytes()
    stable = fs.flush_epoch if volatile == 0 else fs.stable_epoch
    tid = fs.journal.durable_tid(stable)
    out = {}
    for name, f in fs.files.items():
        rec_size = fs.policy.recovered_size(fs, f, tid, stable)
        n = min(f.npages, f.cap)
        st = f.state[:n]
        wrote = (st & HASDATA) != 0
        # a dirty page (or one whose write has not completed) has wepoch NOT_ON_DEVICE
        ok = (wrote & (f.wepoch[:n] <= stable) & (f.meta_tid[:n] <= tid)
              & ((st & UNWRITTEN) == 0))
        ok &= np.arange(n) * 4096 < rec_size
        lost = wrote & ~ok
        ranges = []
        if lost.any():
            idx = np.flatnonzero(lost)
            brk = np.flatnonzero(np.diff(idx) != 1) + 1
            for s, e in zip(np.concatenate(([0], brk)), np.concatenate((brk, [idx.size]))):
                ranges.append((int(idx[s]) * 4096, int(idx[e - 1] - idx[s] + 1) * 4096))
        out[name] = FileCrashState(name, f.size_bytes, rec_size,
                                   int(wrote.sum()) * 4096, int(ok.sum()) * 4096, ranges)
        if len(f.size_log) > 64:      # keep the log short: drop what is superseded
            keep = [e for e in f.size_log if e[0] >= tid]
            older = [e for e in f.size_log if e[0] < tid]
            f.size_log = (older[-1:] + keep) if older else keep
    return CrashState(fs.sim.now_ns, stable, tid, volatile, out)
