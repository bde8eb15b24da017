"""A fio-like job: characterise any simulated device the way one characterises a real one.

Modelled (fio option names; fio's HOWTO for their meaning): ``rw`` = read | write |
randread | randwrite | randrw | readwrite, or ``rw`` (fio's alias of readwrite;
``rwmixread`` % reads for the mixed ones; fio's postfix ``randread:8`` / ``write:4k``,
``rw_sequencer`` and ``percentage_random``; where each I/O goes is
``fio.offsets``; fio's
trim modes are refused as not modelled),
``bs`` (``r[,w]``), ``bsrange``, ``bssplit`` (each I/O's size:
``fio.bs``), ``iodepth``, ``numjobs`` (clones of the job, each on the region of ``size``
bytes starting at ``offset`` + clone * ``offset_increment`` - the same region for all
unless ``offset_increment`` is set, as fio's clones on one device
(``get_start_offset``); ``size``, ``offset`` and ``offset_increment`` as fio writes
them, ``4k``, ``1g`` or a percentage of the device, ``20%``), ``ioengine`` = libaio | io_uring (asynchronous,
``iodepth`` in flight) | sync | psync (one synchronous I/O at a time: iodepth 1),
``iodepth_batch_submit`` (I/Os per ``io_submit()``; submitted under a plug so the
block layer can merge them), ``iodepth_batch_complete_min`` (completions reaped
before refilling), ``iodepth_low`` (fio's low water mark: a full queue is refilled
once it has drained to it - backend.c ``wait_for_completions``; 0, fio's default, is
``iodepth``: refilled at every reap), ``ramp_time_s`` (lead-in: statistics start after it), ``runtime_s``
(counted from the ramp's end, as fio's: a job runs ramp + runtime; at its end the job
issues nothing more, and the I/Os it has in flight complete and count - fio's ``do_io``
reaps them, and the job's measured time runs to the last), ``startdelay_s``
(fio ``startdelay``: the job starts that long after the run - or its stonewall - and
then runs its ramp and runtime), ``time_based``
(false: each job stops once it has done ``size`` bytes, as fio does without it; true,
the default here: it loops over its region until its runtime is over), ``loops`` (a
job that is not time based passes over its region that many times), ``io_size`` (the
bytes of I/O of such a pass, within the region: ``size=20g io_size=5g`` stops after
5 GB, ``io_size=40g`` goes over the region twice; a percentage is of the region),
``number_ios`` (stop after that many I/Os per job); a job whose sizes vary and that is
not time based stops after ``loops`` x ``io_size`` bytes (``size`` by default).

Latencies, as fio times them: an asynchronous engine's I/O is issued when its
``io_submit`` returns - at once unless the call sleeps for a request (``nr_requests``,
blk-mq tags), then when every bio of the call is queued - or, for an O_SYNC write on
2.6.32-3.10, once the FLUSH the call sends after it has completed; its ``slat`` is
that wait (``FioJob.slat``: the ones that are not 0), its ``clat`` (``FioJob.lat``)
runs from the issue to the completion (0 if it completed while the call waited: fio
reaps it after the call). A synchronous engine's call has no slat: its wait is in
its clat. Deliberately not modelled: fio takes a completion's time when it reaps it -
once its queue is full again (or at the job's end), counting what it has not reaped -,
so an I/O that completes while the job waits in a call, or submits, is timed later in
fio than here, where a completion is reaped at once (one of the call itself: when it
returns).

Also modelled, as fio documents them:

- ``thinktime_us`` (fio ``thinktime``) after every ``thinktime_blocks`` completions the
  job waits for its I/Os in flight, then stalls that long before it issues again (fio's
  ``handle_thinktime`` quiesces first);
- ``rate_iops`` / ``rate`` = ``r[,w]``: each job's reads and writes capped each, I/Os
  or bytes a second, evenly or as Poisson arrivals (``rate_process``);
  ``rate_iops_min`` / ``rate_min`` (``rate_cycle_ms``): a job that
  falls below ends with fio's error (``fio.pace``);
- ``random_distribution`` = random | zipf:<theta> | pareto:<h> | normal:<pct> |
  zoned:<access>/<size %>:... | zoned_abs:<access>/<bytes>:...
  (``fio.distribution``);
- ``fsync`` / ``fdatasync`` = N: after every N writes the job waits for its I/Os in
  flight, then for a FLUSH of the device (``fsync(2)`` of a block device is a cache
  flush, for either call, from Linux 2.6.32 - ``BlockConfig.blkdev_sync``; before, it
  sends nothing), then goes on; their latencies are the ``sync`` statistics;
- ``sync`` = none | sync (1) | dsync: the job's writes are ``O_SYNC`` / ``O_DSYNC`` (the
  same on a block device), as the kernel's device node sends them
  (``BlockConfig.blkdev_sync``): before 2.6.32 as plain writes; 2.6.32-3.10 each
  followed by a FLUSH - a synchronous engine's write completes when its FLUSH has, an
  asynchronous one's FLUSH is sent as the write is queued and the job waits for it
  before it issues again (``fio.pace``); from 4.10 each write carries FUA (on a queue
  without FUA: the write, then a FLUSH - ``models/block/fua.py``) and a synchronous
  engine's write is followed by a FLUSH as well. Latency (``clat``) of a synchronous
  engine's write runs to the end of its FLUSH, as fio's ``pwrite`` does;
- ``end_fsync`` (``fsync_on_close``, one file per job): a job that writes ends with an
  fsync of the device (as ``fsync``'s, by kernel) inside its runtime - once the
  runtime is over (or the job's I/O is done) it issues nothing more, its I/Os in
  flight complete and count, then the sync, and the job's measured time runs to its
  end (fio's ``do_io``). Its latency is not a ``sync`` statistic (fio does not count
  it).

Only ``direct=1`` (``buffered=0``) is modelled here: the job submits straight to a
block device (``direct=0``, through a filesystem and the page cache, is
``fio.buffered``).

Reports per job group: IOPS, MB/s and completion latency percentiles (submit to
completion, ms), per direction.

Deliberately not modelled: verify, per-direction distributions,
``thinktime_blocks_type=issue``; a holed sequential pass
(``rw=write:4k``) with sizes that vary is refused.

The package: ``config`` (``FioConfig``: the options, checked as fio checks them),
``job`` (``FioJob``: the jobs of one group against a block device), ``buffered``
(``direct=0``: through a filesystem and the page cache), ``jobs`` (a job file's groups,
``stonewall``), ``offsets`` / ``bs`` / ``distribution`` (where each I/O goes and its
size), ``pace`` (think time, rate caps, syncs), ``stats`` (the group's figures).
"""
from .config import IOENGINES, RW_MODES, SYNC_ENGINES, FioConfig
from .job import FioJob

__all__ = ["FioConfig", "FioJob", "IOENGINES", "RW_MODES", "SYNC_ENGINES"]
