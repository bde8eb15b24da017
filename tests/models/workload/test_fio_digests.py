"""The fio -> block layer -> drive event path gives, for fixed seeds, exactly the
results it gave when these digests were recorded: fio's results, iostat, the drive's
counters and state vector, the block queue's counters and elevator, the job's
latency samples and RNG state, and the simulator's clock, event count and pending
heap. A change that moves any of them (a faster event path must not) fails here; a
change of mechanism that moves them on purpose re-records the digests and says why
in its commit.

Recorded on the event path of 5c04cb9 (the commit that still had the fused loop,
whose bit-identity tests these replace: the same configurations, HDD and SSD, noop
and deadline, write cache on and off, ramps, reaping, ``run(until_ns)``, several
drives in one simulation); the RAID cases were recorded on the commit after it (the
event path unchanged). The SSD cases (and ``several_drives_with_a_sampler``, which
has one) were re-recorded when the flash state's packed buffers gained the NAND-page
header field and the per-die page-register array (``ssd.kernels.G_UPP``,
``sensed``): the bytes of the buffers moved, the results did not - every case's
digest with the packed state decoded to its named arrays, the new ones left out, is
the same before and after. They were re-recorded again when the drive gained read
priority (``ssd.kernels``: ``bnd``, ``rd_end``, ``rd_page``, ``w_end``): with
``read_priority`` off every SSD result but the packed state was identical; with it on
(the default) the three cases that mix reads with writes moved. The HDD cases with the
drive's write cache on and ``randrw_qd4_nowce`` / ``raid10_randrw_128k_qd8_write_back``
were re-recorded when the drive's write-back changed (a FLUSH waits for a destage under
way; dirty extents coalesce up to a segment; the arm destages while only cached writes
are queued, and a destage continuing the last one's sectors at the instant it ended
writes on; a media write settles after its positioning, not again at each track switch
inside it): the state vector gained the last destage's end (slots 29, 30), and the cases
whose commands queue cached writes or whose writes cross a track moved. All were
re-recorded when a queued write-through write that appends to the one being written
continues it (``combine_seq_writes``): every drive's state vector gained the flag
(extension slot 18), the controller's data-intake time (slot 31) and the last media
write's end (slots 29, 30, which the destages had); with the state vectors left out
every digest was the same before and after except the two cases with sequential
writes queued to a drive with its write cache off, ``deadline_readwrite_qd4`` and
``noop_batch4_merging`` (2.1 -> 8.2 MB/s: about a queue of 16 KB writes per
revolution instead of one). The cases with a ramp (``ramp_time_s``) were re-recorded
when ``runtime_s`` came to count from the ramp's end, as fio's ``runtime`` does (the job
runs ramp + runtime): each one's digest before is what the code after gives with
``runtime_s`` less the ramp; the cases without a ramp did not move. The deadline cases
were re-recorded when deadline took the kernel's ``next_rq`` / ``last_sector`` for its
per-direction ``last_key`` (and 2.6.18's batches): with the elevator's state left out
every one is the same as before (with the ramp cases' ``runtime_s`` less the ramp) -
these queues seldom hold a request the drive's 32 tags would not take at once.
``cfq_two_jobs_qd4`` was re-recorded when cfq gained 2.6.18's slice idling and its
strict slice end (a slice ends at the first dispatch after it, ``time_after``): the
same 910 IOPS, mean completion latency 8.13 -> 8.10 ms - the two jobs' eight requests
make the queue's hw_tag close every idle window after the first few. The three
``readwrite`` cases were re-recorded when a sequential mixed job's reads and writes
became a stream each (fio's ``f->last_pos[ddir]``, ``models.workload.fio.offsets``):
before, both directions went on from one position, as one interleaved stream; every
other digest was the same.
Every case without a ramp was
re-recorded when its measured interval came to start with the job instead of at an
event after the job's first fill (which had dropped that fill from iostat's merges and
from the depth histogram): one event fewer, and those counts; the ramp cases did not
move.
Every case that ends at its runtime was re-recorded when the runtime's end
came to reap the job's I/Os in flight and count them (fio's ``do_io`` leaves its loop,
then ``io_u_queued_complete``; the measured time runs to the last): results, clock and
end state moved; the cases that end by an I/O count or at ``run(until_ns)`` did not.
All were re-recorded when an asynchronous engine's io_submit that sleeps for a
request came to issue its I/Os when it returns (fio's slat; ``read_slat_mean_ms``,
``read_slat_max_ms`` ... in the results): with those columns left out every digest
was the same but ``nr_requests_4_waits``'s, whose latency samples are now clat from
the call's return.
``cfq_two_jobs_qd4`` was re-recorded when fio's ``numjobs`` clones came to share one
region, as fio's do without ``offset_increment`` (before, each had its own ``size``
after the one before): its two jobs now read the same 1 GB - 888 -> 1,044 IOPS, mean
clat 8.44 -> 7.25 ms; with ``offset_increment="1g"`` the old digest comes back.
The SSD cases and ``several_drives_with_a_sampler`` were re-recorded when the flash
state gained the SLC cache (two header fields, ``G_SLC_UNITS`` / ``P_TPROG_SLC``, and
the ``slc`` array; the test drives have none): with the packed state decoded to its
named arrays and the old header, the new ones left out, all 35 digests were the same
before and after; and again when it gained the write stream's open NAND page
(``fill``: padded by a FLUSH or a write due on flash; never open with one unit per
page, as on the test drives), the same check, all 35 the same; and again when that
page came to record when it went to its die and what of its padding host data may still
take (``fill`` from 4 to 8 slots; ``kernels._take_padding``): all 35 the same with
``fill`` decoded to its first four slots.
``PYTHONPATH=. python -m tests.models.workload.test_fio_digests``
prints the digests of the code in the tree."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.device.raid import RAID, RAIDConfig
from models.device.request import READ, WRITE
from models.device.ssd import SSD, SSDConfig
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob

NOOP = BlockConfig(scheduler="noop", nr_requests=128)
DEADLINE = BlockConfig(scheduler="deadline", nr_requests=128)
# an X25-E-like drive, smaller so that preconditioning is quick
SMALL_SSD = dict(capacity_bytes=1 << 30, raw_capacity_bytes=(1 << 30) + (80 << 20))


def _drive(sim, name="sda", kind="hdd", **overrides):
    if kind == "ssd":
        return SSD(sim, name, SSDConfig(**{**SMALL_SSD, **overrides}))
    if kind == "raid":
        members = [HDD(sim, f"{name}{i}", default_15k_sas()) for i in range(overrides.pop("n"))]
        return RAID(sim, name, RAIDConfig(**overrides), members)
    return HDD(sim, name, default_15k_sas(**overrides))


def _request(r):
    return None if r is None else (r.op, r.offset_bytes, r.size_bytes, r.submit_ns, r.queue_ns,
                                   r.dispatch_ns, r.cache_hit, r.deadline_ns,
                                   r.parts[0].submit_ns if r.parts else None)


def _elevator(sched):
    out = [sched.count, sorted((k, _request(r)) for k, r in sched.by_end.items()),
           sorted((k, _request(r)) for k, r in sched.by_start.items())]
    if sched.name == "deadline":
        out += [sched.batching, sched.starved, sched.last_end,
                [_request(sched.next_rq[d]) for d in sorted(sched.next_rq)]]
        for q in sched.queues.values():
            out += [list(q.keys), [_request(r) for r in q.fifo.values()]]
    elif sched.name == "noop":
        out.append([_request(r) for r in sched.fifo])
    return out


def _next_block(o) -> int:
    """The recorded field ``next_block`` (from before ``fio.offsets``): a sequential
    stream's next block, 0 for a random job."""
    return 0 if o.random else (o.last_pos[o.fixed_op] // o.bs) % o.n_blocks


def state(sim, job, blk, dev) -> dict:
    """Everything observable after a run, as plain values (no function names: the heap
    is compared by time, insertion number and request)."""
    c = blk.counters
    out = {
        # fio.error (rate_min's EIO) came after the recording: 0 here, its own tests
        "results": sorted((k, v) for k, v in job.results().items() if k != "error"), "iostat": sorted(job.iostat().items()),
        "devstats": sorted(dev.stats().items()), "volatile": dev.volatile_bytes(),
        "dev": (dev.inflight, dev.free_servers, list(dev.completed), list(dev.bytes_done),
                dev.busy_ns, dev.cache_hits),
        "blk": (blk.allocated, tuple(c.ios), tuple(c.sectors), tuple(c.ticks_ns), c.in_flight,
                c.io_ticks_ns, c.time_in_queue_ns, c.last_ns, tuple(c.merges)),
        "elevator": _elevator(blk.sched),
        "jobs": [(j.in_flight, j.issued, j.reaped, j.offsets._pos, _next_block(j.offsets),
                  repr(j.rng.bit_generator.state)) for j in job.jobs],
        "lat": (job.lat[READ].samples.tolist(), job.lat[WRITE].samples.tolist(),
                sorted(job.bytes_done.items()), job.finished_ns, job.measure_from_ns),
        "sim": (sim.now_ns, sim.events_processed,
                sorted((t, s, _request(a) if hasattr(a, "op") else None)
                       for t, s, _fn, a in sim._heap)),
    }
    if isinstance(dev, RAID):
        out["members"] = [(m.stats(), m.S.tobytes().hex()) for m in dev.members]
        out["raid"] = (dev._outstanding, dev._last_end, dev._link_free, dev._cpu_free,
                       dev._data_bytes, len(dev.lines.lines))
    elif isinstance(dev, HDD):
        out["S"] = dev.S.tobytes().hex()
    else:
        out["i32"] = dev._i32.tobytes().hex()
        out["i64"] = dev._i64.tobytes().hex()
        out["ssd"] = (list(dev._volatile), dev._ctrl_free, dev._last_done, dev._last_durable,
                      dev._meta_dirty, dev._busy_since, dev._busy_total, dev.cache_full_waits,
                      dev.cache_wait_ns, list(dev._waits), dev._flush_pending)
    return out


def digest(value) -> str:
    """sha256 of the repr of plain values (floats by repr: exact)."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def run_case(cfg, dev=None, block=NOOP, seed=1, until_ns=None) -> dict:
    sim = Simulator()
    drive = _drive(sim, **(dev or {}))
    blk = BlockQueue(sim, drive, block)
    job = FioJob(sim, cfg, blk, np.random.default_rng(seed))
    job.start()
    sim.run(until_ns=until_ns)
    return state(sim, job, blk, drive)


CASES = {
    "randread_qd32": (FioConfig(rw="randread", bs="4k", iodepth=32, size="8g", runtime_s=100,
                                number_ios=3000), {}, NOOP),
    "randread_qd1_ramp": (FioConfig(rw="randread", bs="4k", iodepth=1, size="8g", runtime_s=0.3,
                                    ramp_time_s=0.1), {}, NOOP),
    "randwrite_qd4_wce_ramp": (FioConfig(rw="randwrite", bs="8k", iodepth=4, size="2g",
                                         runtime_s=0.3, ramp_time_s=0.1),
                               {"write_cache": True}, NOOP),
    "randwrite_qd1_wce": (FioConfig(rw="randwrite", bs="4k", iodepth=1, size="64m",
                                    runtime_s=10, number_ios=1000), {"write_cache": True}, NOOP),
    "randrw_qd32_wce_ramp": (FioConfig(rw="randrw", rwmixread=70, bs="4k", iodepth=32,
                                       size="4g", runtime_s=0.6, ramp_time_s=0.2),
                             {"write_cache": True}, NOOP),
    "randrw_qd4_nowce": (FioConfig(rw="randrw", bs="16k", iodepth=4, size="1g", runtime_s=100,
                                   number_ios=1000), {}, NOOP),
    "randrw_psync_after_write_overheads": (
        FioConfig(rw="randrw", ioengine="psync", iodepth=8, size="1g", runtime_s=0.2),
        {"overhead_read_miss_after_write_ms": 0.3, "overhead_write_miss_after_write_ms": 0.2},
        NOOP),
    "seqread_qd4_readahead": (FioConfig(rw="read", bs="64k", iodepth=4, size="1g",
                                        runtime_s=0.15), {}, NOOP),
    "readwrite_qd8_reap4": (FioConfig(rw="readwrite", bs="4k", iodepth=8,
                                      iodepth_batch_complete_min=4, size="256m", runtime_s=0.2),
                            {"write_cache": True}, NOOP),
    "randread_qd32_sptf_age_limit": (FioConfig(rw="randread", iodepth=32, size="8g",
                                               runtime_s=0.5, ramp_time_s=0.1),
                                     {"sptf_age_limit_ms": 30.0}, NOOP),
    "randread_qd16_fifo_ncq": (FioConfig(rw="randread", iodepth=16, size="8g", runtime_s=0.2),
                               {"scheduler": "fifo"}, NOOP),
    "randrw_qd16_9000_ios_three_chunks": (FioConfig(rw="randrw", bs="4k", iodepth=16,
                                                    size="512m", runtime_s=100,
                                                    number_ios=9000),
                                          {"write_cache": True}, NOOP),
    "randread_qd16_until_mid_run": (FioConfig(rw="randread", iodepth=16, size="512m",
                                              runtime_s=2.0, ramp_time_s=0.1), {}, NOOP),
    "ssd_randread_qd32": (FioConfig(rw="randread", iodepth=32, size="512m", runtime_s=100,
                                    number_ios=4000), {"kind": "ssd"}, NOOP),
    "ssd_randread_qd1_fresh_ramp": (FioConfig(rw="randread", iodepth=1, size="512m",
                                              runtime_s=0.03, ramp_time_s=0.01),
                                    {"kind": "ssd", "precondition": "fresh"}, NOOP),
    "ssd_randwrite_qd32_wce_full_buffer": (FioConfig(rw="randwrite", iodepth=32, size="512m",
                                                     runtime_s=0.15, ramp_time_s=0.02),
                                           {"kind": "ssd"}, NOOP),
    "ssd_randwrite_qd4_nowce": (FioConfig(rw="randwrite", bs="8k", iodepth=4, size="256m",
                                          runtime_s=100, number_ios=1500),
                                {"kind": "ssd", "write_cache": False}, NOOP),
    "ssd_write_512k_qd4_streams_through_the_buffer": (
        FioConfig(rw="write", bs="512k", iodepth=4, size="256m", runtime_s=0.2,
                  ramp_time_s=0.01), {"kind": "ssd", "precondition": "sequential"}, NOOP),
    "ssd_randrw_qd8_2k_rmw": (FioConfig(rw="randrw", rwmixread=60, bs="2k", iodepth=8,
                                        size="256m", runtime_s=0.05),
                              {"kind": "ssd", "precondition": "sequential"}, NOOP),
    "ssd_readwrite_qd4_reap2": (FioConfig(rw="readwrite", bs="16k", iodepth=4,
                                          iodepth_batch_complete_min=2, size="64m",
                                          runtime_s=0.05),
                                {"kind": "ssd", "precondition": "sequential"}, NOOP),
    # deadline: batches, write starvation, the sort position per direction
    "deadline_randrw_qd32_wce": (FioConfig(rw="randrw", rwmixread=70, iodepth=32, size="4g",
                                           runtime_s=0.4, ramp_time_s=0.1),
                                 {"write_cache": True}, DEADLINE),
    "deadline_readwrite_qd4": (FioConfig(rw="readwrite", bs="8k", iodepth=4, size="64m",
                                         runtime_s=0.15), {}, DEADLINE),
    "deadline_randread_qd1": (FioConfig(rw="randread", iodepth=1, size="8g", runtime_s=0.2),
                              {}, DEADLINE),
    "deadline_ssd_randrw_qd16": (FioConfig(rw="randrw", iodepth=16, size="512m", runtime_s=0.05,
                                           ramp_time_s=0.01), {"kind": "ssd"}, DEADLINE),
    # the block layer holds requests: cfq, splits, batches, too few requests or tags
    "cfq_two_jobs_qd4": (FioConfig(iodepth=4, numjobs=2, size="1g", runtime_s=0.1), {},
                         BlockConfig(scheduler="cfq")),
    "noop_batch4_merging": (FioConfig(rw="write", iodepth=8, iodepth_batch_submit=4, size="1g",
                                      runtime_s=0.1), {}, NOOP),
    "split_1m_by_max_sectors_kb": (FioConfig(bs="1m", iodepth=2, size="1g", runtime_s=0.1), {},
                                   BlockConfig(max_sectors_kb=256)),
    "nr_requests_4_waits": (FioConfig(iodepth=8, size="1g", runtime_s=0.2), {},
                            BlockConfig(nr_requests=4)),
    "queue_depth_4_queues_in_the_elevator": (FioConfig(iodepth=8, size="1g", runtime_s=0.2),
                                             {"queue_depth": 4}, NOOP),
    "ssd_queue_depth_4": (FioConfig(iodepth=8, size="512m", runtime_s=0.01),
                          {"kind": "ssd", "queue_depth": 4}, NOOP),
    # a RAID 1+0 of 6 drives, a 3-drive RAID 0 and a mirrored pair: split into stripe
    # units, mirror choice, the controller's write-back cache and its destage
    "raid10_randread_qd32": (FioConfig(rw="randread", iodepth=32, size="8g", runtime_s=100,
                                       number_ios=3000), {"kind": "raid", "n": 6, "level": 10},
                             NOOP),
    "raid10_randrw_128k_qd8_write_back": (FioConfig(rw="randrw", bs="128k", iodepth=8,
                                                    size="4g", runtime_s=0.15),
                                          {"kind": "raid", "n": 6, "level": 10}, NOOP),
    "raid0_read_96k_qd4": (FioConfig(rw="read", bs="96k", iodepth=4, size="1g", runtime_s=0.1),
                           {"kind": "raid", "n": 3, "level": 0}, NOOP),
    "raid1_randwrite_qd4_write_through": (FioConfig(rw="randwrite", iodepth=4, size="1g",
                                                    runtime_s=0.1),
                                          {"kind": "raid", "n": 2, "level": 1,
                                           "write_back": False}, DEADLINE),
}
UNTIL_NS = {"randread_qd16_until_mid_run": 432_100_000}

DIGESTS = {
    'randread_qd32': 'eb8e3779f27e2af5',
    'randread_qd1_ramp': '98064ec738d9bc2e',
    'randwrite_qd4_wce_ramp': 'c13bb63cba40058a',
    'randwrite_qd1_wce': '6f8e30f0109153b3',
    'randrw_qd32_wce_ramp': 'f373c70bdbbd15b0',
    'randrw_qd4_nowce': '5296eea20e6f7ddb',
    'randrw_psync_after_write_overheads': 'b6549a5b079bc5bc',
    'seqread_qd4_readahead': '17c64cac99fb19d0',
    'readwrite_qd8_reap4': '8e1f5094b873bfac',
    'randread_qd32_sptf_age_limit': '5d3c6a43284b83aa',
    'randread_qd16_fifo_ncq': 'f724fe02e7092506',
    'randrw_qd16_9000_ios_three_chunks': 'd4ca35a42f979629',
    'randread_qd16_until_mid_run': '9e767c9154ca898c',
    'ssd_randread_qd32': '42741ed8c7b6c8a8',
    'ssd_randread_qd1_fresh_ramp': '12cb7fc420de29b0',
    'ssd_randwrite_qd32_wce_full_buffer': '7407ddf6ff58f30d',
    'ssd_randwrite_qd4_nowce': '09985940ae2da0e9',
    'ssd_write_512k_qd4_streams_through_the_buffer': '4b8d52929cfd3b98',
    'ssd_randrw_qd8_2k_rmw': 'cbdde088de9ed3ac',
    'ssd_readwrite_qd4_reap2': '532fc88cca9fb871',
    'deadline_randrw_qd32_wce': 'a7544b525816fd3b',
    'deadline_readwrite_qd4': '52e335f73706a120',
    'deadline_randread_qd1': 'e894f5a256349154',
    'deadline_ssd_randrw_qd16': '48c5ddacb42dd9b5',
    'cfq_two_jobs_qd4': 'e79b288eddd5c1b6',
    'noop_batch4_merging': '6877a91c0a6719e4',
    'split_1m_by_max_sectors_kb': '9b8e894a21f75fc7',
    'nr_requests_4_waits': '9d7d53fe2ef2ef44',
    'queue_depth_4_queues_in_the_elevator': 'a77bd42ba61e0927',
    'ssd_queue_depth_4': 'f5c29aa87b2093b9',
    'raid10_randread_qd32': 'cbcf63f294b9a5b4',
    'raid10_randrw_128k_qd8_write_back': 'e91846923562bd15',
    'raid0_read_96k_qd4': '75a2a373a77e4429',
    'raid1_randwrite_qd4_write_through': '019365be31c8ce10',
    'several_drives_with_a_sampler': '9290ec6f29e53dbe',
}


def case_digest(name: str) -> str:
    cfg, dev, block = CASES[name]
    return digest(run_case(cfg, dev, block, until_ns=UNTIL_NS.get(name)))


@pytest.mark.parametrize("name", list(CASES))
def test_event_path_results_equal_the_recorded_digest(name):
    assert case_digest(name) == DIGESTS[name]


def several_drives_with_a_sampler() -> str:
    """Three jobs on three drives (two HDDs, an SSD) in one simulation and a sampler
    reading every queue every 7 ms, run to 150 ms, then to the end."""
    sim = Simulator()
    out, queues, jobs = [], [], []
    for i, (rw, qd, kind) in enumerate((("randread", 32, "hdd"), ("randwrite", 2, "hdd"),
                                         ("randrw", 8, "ssd"))):
        dev = _drive(sim, f"sd{i}", kind, write_cache=True)
        blk = BlockQueue(sim, dev, NOOP)
        job = FioJob(sim, FioConfig(rw=rw, iodepth=qd, size="512m", runtime_s=0.25),
                     blk, np.random.default_rng(10 + i))
        queues.append(blk)
        jobs.append(job)

    def sample(_arg=None):
        out.append((sim.now_ns, [q.snapshot() for q in queues]))
        if sim.now_ns < 200_000_000:
            sim.after(7_000_000, sample)

    sim.after(1_000_000, sample)
    for job in jobs:
        job.start()
    sim.run(until_ns=150_000_000)
    mid = [(q.snapshot(), q.device.stats(), q.device.volatile_bytes()) for q in queues]
    sim.run()
    return digest((out, mid, [state(sim, j, q, q.device) for j, q in zip(jobs, queues)]))


def test_several_drives_in_one_simulation_interleave_as_recorded():
    assert several_drives_with_a_sampler() == DIGESTS["several_drives_with_a_sampler"]


# -- the digest notices a difference ---------------------------------------------------
def test_a_different_seed_changes_the_digest():
    cfg, dev, block = CASES["randrw_qd4_nowce"]
    assert digest(run_case(cfg, dev, block, seed=2)) != DIGESTS["randrw_qd4_nowce"]


def test_the_order_at_a_completion_matters(monkeypatch):
    """Were fio's new command queued before the drive picks its next one, SPTF would
    choose among more commands and the digest would differ: the recorded order is not
    an accident of the order not mattering."""
    def resubmit_first(self, req):
        self._unacked_bytes = 0
        self._destaging_bytes = 0
        self.free_servers = 1
        self.inflight -= 1
        req.done_ns = self.sim.now_ns
        self.completed[req.op] += 1
        self.bytes_done[req.op] += req.size_bytes
        if req.cache_hit:
            self.cache_hits += 1
        self.on_complete(req)        # fio refills: the new command joins the queue
        if self.free_servers:
            self._start_next()       # ... and only then does the drive pick

    monkeypatch.setattr(HDD, "_finish", resubmit_first)
    assert case_digest("randread_qd32") != DIGESTS["randread_qd32"]


if __name__ == "__main__":
    for name in CASES:
        print(f"    {name!r}: {case_digest(name)!r},")
    print(f"    'several_drives_with_a_sampler': {several_drives_with_a_sampler()!r},")
