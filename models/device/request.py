"""The unit of I/O that flows between layers.

One class serves as a bio (what a caller submits) and as a block-layer request (one or
more merged bios that go to the device as one command). Offsets and sizes are bytes;
devices work in 512-byte sectors where that matters.
"""
from __future__ import annotations

from typing import Any, Callable

READ = 0
WRITE = 1
FLUSH = 2  # drain the volatile write cache (SCSI SYNCHRONIZE CACHE / ATA FLUSH CACHE)
DISCARD = 3

OP_NAMES = ("read", "write", "flush", "discard")
SECTOR_BYTES = 512


class IORequest:
    """A read, write or flush of ``size_bytes`` at ``offset_bytes``.

    ``on_done(req)`` is called once, at completion. ``parts`` holds the bios a merged
    request carries (each gets its own ``on_done``). ``issuer`` identifies the
    submitting thread (used by cfq); ``sync`` marks reads and O_DIRECT/fsync writes that
    a thread waits for; ``fua`` makes a write bypass volatile caches. ``nomerge``: a
    write of the block layer's flush machinery - a FUA write, or the write of an
    emulated one (``models/block/fua.py``): merged with no other bio or request and
    queued past the I/O scheduler; it starts as ``fua``.
    """

    __slots__ = ("op", "offset_bytes", "size_bytes", "on_done", "sync", "fua", "nomerge",
                 "issuer", "submit_ns", "queue_ns", "dispatch_ns", "done_ns", "parts", "deadline_ns",
                 "cache_hit", "tag", "sort_key", "fifo_key")

    def __init__(self, op: int, offset_bytes: int, size_bytes: int,
                 on_done: Callable[["IORequest"], Any] | None = None,
                 sync: bool = True, fua: bool = False, issuer: int = 0) -> None:
        self.op = op
        self.offset_bytes = offset_bytes
        self.size_bytes = size_bytes
        self.on_done = on_done
        self.sync = sync
        self.fua = fua
        self.nomerge = fua
        self.issuer = issuer
        self.submit_ns = 0     # bio submitted by the caller
        self.queue_ns = 0      # request allocated in the block layer (iostat await starts)
        self.dispatch_ns = 0   # handed to the device
        self.done_ns = 0
        self.parts: list[IORequest] | None = None
        self.deadline_ns = 0
        self.cache_hit = False  # served from a device/controller cache
        self.tag: Any = None   # free for the owner's use
        self.sort_key = 0      # position in an elevator's sector order (block layer)

    @property
    def end_bytes(self) -> int:
        return self.offset_bytes + self.size_bytes

    def __repr__(self) -> str:
        return (f"IORequest({OP_NAMES[self.op]}, off={self.offset_bytes}, "
                f"size={self.size_bytes})")
