"""A tiny stand-in filesystem for engine tests (the real one is models/fs).

Same call names as ``models.fs``: ``create(name, size_bytes, preallocate)``, ``pwrite(f,
offset, size, direct=False, sync=0) -> Event``, ``pread(f, offset, size) -> Event`` (a read
of the device, as O_DIRECT: nothing is cached) (``sync``: O_DSYNC / O_SYNC - the write, then
what ``fsync`` does, before the event fires), ``fsync(f)`` / ``fdatasync(f) -> Event``.
Each file is a contiguous extent of the block device (its size rounded up to 1 MB: a
write past the end grows the file within it). Buffered writes only dirty 4 KB pages and
return after ``write_ns``; ``fsync`` writes the dirty pages (contiguous runs merged
into one bio), waits for them and for any writes of the file already in flight, then
sends one FLUSH (``barrier=True``) and returns. O_DIRECT writes go to the device and
return at completion. Every call is logged in ``calls`` as (time_ns, op, file, ...).
"""
from __future__ import annotations

from models.device.request import FLUSH, READ, WRITE, IORequest
from models.sim import Event, all_of

PAGE = 4096


class FakeFile:
    def __init__(self, fs, name, base, size):
        self.fs = fs
        self.name = name
        self.base = base
        self.size = size
        self.dirty: set[int] = set()
        self.inflight: list[Event] = []
        self.fsyncs = 0


class FakeFS:
    def __init__(self, sim, queue, barrier=True, write_ns=0, grow_bytes=256 << 20):
        self.sim = sim
        self.queue = queue
        self.barrier = barrier
        self.write_ns = write_ns
        self.grow_bytes = grow_bytes
        self.next_base = 1 << 20
        self.files: dict[str, FakeFile] = {}
        self.calls: list[tuple] = []

    def create(self, name, size_bytes=None, preallocate="none"):
        size = size_bytes if size_bytes else self.grow_bytes
        f = FakeFile(self, name, self.next_base, size)
        f.span = -(-size // (1 << 20)) * (1 << 20)     # a write past the end may grow into it
        self.next_base += f.span
        self.files[name] = f
        return f

    # -- calls ---------------------------------------------------------------------
    def pwrite(self, f, offset, size, direct=False, sync=0):
        assert offset + size <= f.span, (f.name, offset, size, f.span)
        f.size = max(f.size, offset + size)
        self.calls.append((self.sim.now_ns, "pwrite", f.name, offset, size, direct))
        if sync:          # O_DSYNC / O_SYNC: the write, then what fsync does
            return self.sim.spawn(self._sync_write(f, offset, size, direct))
        return self._write(f, offset, size, direct)

    def pread(self, f, offset, size, direct=False):
        self.calls.append((self.sim.now_ns, "pread", f.name, offset, size, direct))
        ev = Event(self.sim)
        self.queue.submit(IORequest(READ, f.base + offset, size, lambda r: ev.succeed()))
        return ev

    def _write(self, f, offset, size, direct):
        if direct:
            return self._submit(f, [(offset, size)])
        for p in range(offset // PAGE, (offset + size - 1) // PAGE + 1):
            f.dirty.add(p)
        ev = Event(self.sim)
        if self.write_ns:
            self.sim.after(self.write_ns, ev.succeed)
        else:
            ev.succeed()
        return ev

    def fsync(self, f):
        self.calls.append((self.sim.now_ns, "fsync", f.name))
        f.fsyncs += 1
        return self._flush(f)

    def _flush(self, f):
        pages, f.dirty = sorted(f.dirty), set()
        runs = []
        for p in pages:
            if runs and runs[-1][0] + runs[-1][1] == p * PAGE:
                runs[-1][1] += PAGE
            else:
                runs.append([p * PAGE, PAGE])
        waits = list(f.inflight)
        if runs:
            waits.append(self._submit(f, runs))
        done = Event(self.sim)
        if not waits:
            done.succeed()
            return done

        def flushed(_req=None):
            done.succeed()

        def written(_v=None):
            if self.barrier:
                self.queue.submit(IORequest(FLUSH, 0, 0, flushed))
            else:
                flushed()

        all_of(self.sim, waits).add_callback(written)
        return done

    fdatasync = fsync

    def _sync_write(self, f, offset, size, direct):
        yield self._write(f, offset, size, direct)
        yield self._flush(f)
        return size

    def _submit(self, f, runs):
        evs = []
        bios = []
        for off, size in runs:
            ev = Event(self.sim)
            bios.append(IORequest(WRITE, f.base + off, size, lambda r, ev=ev: ev.succeed()))
            evs.append(ev)
        gate = self.queue.submit(bios, plug=len(bios) > 1)
        assert gate is None, "fake fs does not handle a full request queue"
        done = all_of(self.sim, evs)
        f.inflight.append(done)
        done.add_callback(lambda _v: f.inflight.remove(done))
        return done
