"""Forced unit access (``REQ_FUA``) in the block layer: what a FUA write becomes on the
way to a device (Linux ``block/blk-flush.c``, ``blk_flush_policy``).

- A queue whose device holds no volatile data (``Device.write_cache_mode`` "write
  through"): a plain write (Linux drops the flag; here it reaches a device that has
  no cache for it to bypass).
- A queue that advertises FUA passes the write to the device with the flag; the device
  writes it through its cache (``models/device``).
- A queue with a volatile write cache and no FUA (SATA behind libata, whose FUA is off
  unless ``libata.fua=1``) sends the write without the flag, then a cache FLUSH (the
  sequence's ``REQ_FSEQ_POSTFLUSH``); the caller sees its write complete when that
  FLUSH has. The FLUSH is an ordinary one of the queue: with ``flush_merging`` it
  joins a FLUSH already waiting.

A FUA bio - and the write of an emulated one - is merged with no other bio
(``REQ_NOMERGE_FLAGS`` holds ``REQ_FUA``), in either direction (``IORequest.nomerge``,
``models/block/base.py``), and goes past the I/O scheduler (``blk_insert_flush``): a
FUA write to the tail of the dispatch list (the legacy queue's ``queue_head``, blk-mq's
hardware-context dispatch list), ahead of every request the scheduler holds; the
write of an emulated one - its flush sequence's data step - to the head. The
scheduler never sees it: no sorting, no deadline, no cfq / bfq slice or idling, no
kyber token.

The post-flush is submitted from the write's completion, before the queue gives the
freed request to a sleeper or runs again: it takes that request (blk-flush lends the
flush request the data request's tag) and is the next command.

Deliberately not modelled: with blk-mq's per-core completion cost
(``cpu.io_complete_cycles``) the post-flush is submitted when the completion reaches
the caller, after the queue ran; before 2.6.37 a barrier write
drained the scheduler first (every request queued before it went ahead) and held
later ones back until its sequence ended - the model's FUA is blk-flush's on every
release (``models/linux.py``).
"""
from __future__ import annotations

from typing import Sequence

from ..device.base import Device
from ..device.request import FLUSH, IORequest


def queue_has_fua(device: Device, cfg) -> bool:
    """Does the request queue advertise FUA (``queue/fua``)? ``BlockConfig.fua`` where
    set (``libata.fua=1`` makes a SATA drive's 1), else the device's (``Device.fua``:
    not a SATA drive behind libata)."""
    return bool(device.fua if cfg.fua is None else cfg.fua)


def emulated(queue, bios: IORequest | Sequence[IORequest]):
    """``bios`` as a queue without FUA sends them (``queue.emulate_fua``): each FUA
    write replaced by the same write without the flag whose completion submits a
    FLUSH, and the FLUSH's completion completes the caller's bio. ``bios`` itself when
    none is a FUA write."""
    if type(bios) is IORequest:
        return _without_fua(queue, bios) if bios.fua else bios
    if not any(b.fua for b in bios):
        return bios
    return [_without_fua(queue, b) if b.fua else b for b in bios]


def _without_fua(queue, bio: IORequest) -> IORequest:
    bio.submit_ns = queue.sim.now_ns
    data = IORequest(bio.op, bio.offset_bytes, bio.size_bytes, None, bio.sync, False,
                     bio.issuer)
    data.nomerge = True

    def data_done(d: IORequest) -> None:
        def flushed(f: IORequest) -> None:
            bio.done_ns = f.done_ns
            bio.cache_hit = d.cache_hit
            if bio.on_done is not None:
                bio.on_done(bio)

        queue.post_flush(IORequest(FLUSH, 0, 0, flushed, True, False, bio.issuer))

    data.on_done = data_done
    return data
