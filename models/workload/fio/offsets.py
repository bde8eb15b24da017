"""Where a fio job's next I/O goes and in which direction: fio's ``get_rw_ddir`` /
``get_next_offset`` (io_u.c) over the job's region of ``size`` bytes, for the direct
(``models.workload.fio``) and the buffered (``models.workload.fio.buffered``) job alike.

Modelled:

- **Direction**: the mode's one direction, or - ``randrw`` / ``readwrite`` - a draw
  per I/O, ``rwmixread`` % reads (fio's ``get_rand_ddir``; its catch-up runs after a
  switch matter only over a job's first I/Os and are not modelled).
- **Random modes**: a new random block per I/O, uniform or by
  ``random_distribution`` (``distribution.BlockSampler``), drawn in vectorised chunks;
  with ``percentage_random=r[,w]`` below 100, each I/O that would take a random offset
  takes it with that probability and otherwise goes on where its direction's last I/O
  ended (fio's ``should_do_random``).
- **Sequential modes**: each direction is its own stream (``f->last_pos[ddir]``): the
  next I/O of a direction starts where its last one ended, so ``rw=readwrite`` reads
  the region from its start and writes it from its start, each at its own pace.
  A stream wraps to the region's start at its end (``time_based``; a job that is not
  time based stops after one pass: ``ios_per_pass``).
- **The ``rw`` postfix** (fio's ``rw=<mode>:<n>``): for a random mode, ``n``
  (``ddir_seq_nr``) I/Os per new random offset - the others go on where the last I/O
  of their direction ended (``rw_sequencer=sequential``) or repeat its offset
  (``identical``); fio's counter starts at ``n``, so a job's first ``n - 1`` I/Os go
  on from the region's start, as fio's do. For a sequential mode, ``n`` bytes
  (``ddir_seq_add``: ``rw=write:4k``) are skipped after every I/O - holed sequential
  I/O - and a stream whose next I/O would pass the region's end starts over at its
  start.

- **Sizes** (``models.workload.fio.bs``): each I/O's size is drawn after its offset;
  random offsets are multiples of their direction's ``ba`` (``blockalign``), which
  defaults to its smallest size (``min_bs``), and leave room for that size; a size
  that would pass the region's end is drawn again; a sequential stream goes on where
  its last I/O ended, whatever its size, and starts over when its direction's
  smallest size no longer fits.

Deliberately not modelled: fio's random map (each block once per pass): blocks are
drawn with replacement, as with ``norandommap``; a negative postfix (backwards
sequential I/O) is refused; ``random_generator``, ``zonemode`` (zoned I/O; the zoned
*distributions* are ``models.workload.fio.distribution``'s).
"""
from __future__ import annotations

import numpy as np

from ...device.request import READ, WRITE
from ...units import parse_size
from .bs import SizeDraw
from .distribution import BlockSampler, parse_distribution

CHUNK = 4096               # draws per refill (vectorised)
RW_SEQUENCERS = ("sequential", "identical")


def percentage_random(text) -> tuple[int, int]:
    """fio's ``percentage_random=r[,w[,t]]`` -> (reads, writes): the last value given
    also holds for the directions after it (parse.c), an empty one keeps fio's 100;
    ``ValueError`` naming the option."""
    parts = [p.strip() for p in str(text).split(",")]
    vals = []
    for p in parts[:2]:
        if p and (not p.isdigit() or int(p) > 100):
            vals = None
            break
        vals.append(int(p) if p else 100)
    if vals is None or len(parts) > 3:
        raise ValueError(f"percentage_random: expected r[,w[,t]] percentages in 0..100, "
                         f"got {text!r}")
    return vals[0], vals[-1] if len(parts) == 1 else vals[1]


def rw_postfix(rw: str, random: bool) -> tuple[int, int]:
    """``(ddir_seq_nr, ddir_seq_add)`` of ``rw`` (``"randread:8"`` -> (8, 0),
    ``"write:4k"`` -> (1, 4096), no postfix -> (1, 0)); ``ValueError`` naming ``rw``."""
    mode, sep, post = rw.partition(":")
    if not sep:
        return 1, 0
    post = post.strip()
    if random:
        if not post.isdigit() or int(post) < 1:
            raise ValueError(f"rw: the postfix of a random mode is the number of I/Os per "
                             f"new random offset (an integer >= 1), got {rw!r}")
        return int(post), 0
    if post.startswith("-"):
        raise ValueError(f"rw: a negative postfix (backwards sequential I/O) is not "
                         f"modelled, got {rw!r}")
    try:
        return 1, parse_size(post, "rw")
    except ValueError:
        raise ValueError(f"rw: the postfix of a sequential mode is the bytes skipped after "
                         f"every I/O (such as 4k), got {rw!r}") from None


def size_percent(text, key: str) -> float | None:
    """The number of ``"20%"`` (None: not a percentage)."""
    if not isinstance(text, str) or not text.strip().endswith("%"):
        return None
    try:
        return float(text.strip()[:-1])
    except ValueError:
        raise ValueError(f"{key}: expected a size such as 4k or 1g or a percentage such as "
                         f"20%, got {text!r}") from None


def io_size_bytes(cfg, size_bytes: int) -> int | None:
    """fio's ``io_size``: the bytes of I/O a pass does within the region of
    ``size_bytes`` (a percentage is of the region); None: one pass over the region."""
    text = str(cfg.io_size).strip()
    if not text:
        return None
    pct = size_percent(text, "io_size")
    return parse_size(text, "io_size") if pct is None else int(size_bytes * pct / 100)


def ios_per_pass(cfg, size_bytes: int) -> int | None:
    """I/Os of one pass over a region of ``size_bytes``: where a job that is not time
    based stops (a holed sequential job passes over fewer offsets than blocks; with
    ``io_size``, that many bytes of I/O, a sequential stream starting over at the
    region's end); None when the sizes vary (the pass is then counted in bytes:
    ``byte_limit``)."""
    if not cfg.fixed_bs:
        return None
    bs = cfg.bs_bytes
    io_size = io_size_bytes(cfg, size_bytes)
    if io_size is not None:
        return max(1, io_size // bs)
    random = cfg.mode.startswith("rand")
    _, skip = rw_postfix(cfg.rw, random)
    n_blocks = size_bytes // bs
    if random or not skip:
        return n_blocks
    return (n_blocks * bs - bs) // (bs + skip) + 1


def io_limit(cfg, size_bytes: int) -> int | None:
    """I/Os a job does before it ends on its own (None: its runtime or its bytes end
    it): fio's ``number_ios``, and for a job that is not time based ``loops`` passes
    over its region, whichever is fewer."""
    per_pass = ios_per_pass(cfg, size_bytes)
    passes = 0 if cfg.time_based or per_pass is None else cfg.loops * per_pass
    limits = [x for x in (cfg.number_ios, passes) if x]
    return min(limits) if limits else None


def byte_limit(cfg, size_bytes: int) -> int | None:
    """Bytes a job whose sizes vary issues before it ends on its own (``loops`` x
    ``io_size``, which defaults to ``size``; None: a fixed size is counted in I/Os by
    ``io_limit``, or the runtime ends the job)."""
    if cfg.time_based or cfg.fixed_bs:
        return None
    io_size = io_size_bytes(cfg, size_bytes)
    return cfg.loops * (io_size if io_size is not None
                        else size_bytes // cfg.bs_bytes * cfg.bs_bytes)


class Offsets:
    """One job's (direction, byte offset in its region) sequence."""

    def __init__(self, cfg, size_bytes: int, rng: np.random.Generator) -> None:
        mode = cfg.mode
        self.bs = bs = cfg.bs_bytes                # the smallest size: the region's grid
        self.size_bytes = size_bytes // bs * bs
        self.rng = rng
        self.sizes = SizeDraw(cfg.block_sizes, rng)
        self.fixed = self.sizes.fixed
        self.min_bs = [s.min_bs for s in cfg.block_sizes]      # per direction
        self.bs_of = self.min_bs if self.fixed else None
        self.random = mode.startswith("rand")
        # random offsets' alignment per direction (fio's ba; min_bs unless given, and
        # for sequential modes); they are drawn on the finest, ``grid``, from the
        # blocks that leave room for the smallest size (fio's ``last_block``)
        self.align = list(cfg.random_align) if self.random else list(self.min_bs)
        self.grid = grid = min(self.align)
        self.n_blocks = (self.size_bytes - max(0, bs - grid)) // grid
        # one size and one alignment for every I/O: a random offset needs no alignment
        # nor room check
        self.one_size = (self.fixed and self.min_bs[READ] == self.min_bs[WRITE]
                         and self.align[READ] == self.align[WRITE])
        self.mixed = mode in ("randrw", "readwrite")
        self.fixed_op = WRITE if mode in ("write", "randwrite") else READ
        self.rwmixread = cfg.rwmixread
        self.seq_nr, self.seq_add = rw_postfix(cfg.rw, self.random)
        self.identical = cfg.rw_sequencer == "identical"
        dist = parse_distribution(cfg.random_distribution)
        self.sampler = (BlockSampler(dist, self.n_blocks, rng, grid)
                        if self.random and dist.kind != "random" else None)
        self.perc_random = percentage_random(cfg.percentage_random)
        self.some_sequential = self.random and min(self.perc_random) < 100
        # every I/O takes a random offset (no postfix, fully random): the plain path
        self.every_random = self.random and self.seq_nr == 1 and not self.some_sequential
        self._coin: list = []
        self.seq_left = self.seq_nr                # td->ddir_seq_nr
        self.last_pos = [0, 0]                     # per direction: where its last I/O ended
        self.last_start = [-1, -1]                 # ... and where it began
        # io_size with loops: each pass starts at the region's start (fio's
        # clear_io_state between loops)
        io_size = io_size_bytes(cfg, self.size_bytes)
        self.pass_bytes = (None if io_size is None or cfg.time_based or cfg.loops == 1
                           else io_size // bs * bs if self.one_size
                           else io_size)
        self._pass_done = 0
        self._offs: list = []
        self._reads: list = []
        self._pos = self._n = 0
        self._i = 0

    def _refill(self) -> None:
        """The next chunk of random offsets and directions, as Python lists (one
        ``tolist`` per chunk: cheaper to index than numpy scalars)."""
        if self.random:
            blocks = (self.sampler.draw(CHUNK) if self.sampler is not None
                      else self.rng.integers(0, self.n_blocks, CHUNK))
            self._offs = (blocks * self.grid).tolist()
        if self.mixed:
            self._reads = (self.rng.random(CHUNK) * 100.0 < self.rwmixread).tolist()
        if self.some_sequential:        # fio's seq_rand_state draws (1..100 <= perc)
            self._coin = (self.rng.random(CHUNK) * 100.0).tolist()
        self._pos, self._n = 0, CHUNK

    def next(self) -> tuple[int, int, int]:
        """The next I/O: (op, byte offset from the region's start, bytes)."""
        op = self.direction()
        if self.every_random and self.one_size:
            return op, self._offs[self._i], self.min_bs[op]
        return (op, *self.offset(op))

    def direction(self) -> int:
        """The next I/O's drawn direction (a rate cap may then change it; its offset is
        ``offset(op)`` of the direction it goes in)."""
        i = self._pos
        if i >= self._n and (self.random or self.mixed):
            self._refill()
            i = 0
        self._pos = i + 1
        self._i = i
        return (READ if self._reads[i] else WRITE) if self.mixed else self.fixed_op

    def offset(self, op: int) -> tuple[int, int]:
        """(offset, bytes) of the I/O ``direction`` drew, going in direction ``op``."""
        if self.random:
            self.seq_left -= 1
            if self.seq_left == 0:
                self.seq_left = self.seq_nr
                if not self.some_sequential or self._coin[self._i] < self.perc_random[op]:
                    return self._placed(op, self._random_pos(op))
            elif self.identical:
                return self._placed(op, max(self.last_start[op], 0))
        pos = self.last_pos[op]
        if pos and self.seq_add:
            pos += self.seq_add
        if pos + self.min_bs[op] > self.size_bytes:
            pos = 0
        return self._placed(op, pos)

    def _random_pos(self, op: int) -> int:
        """The drawn random offset on ``op``'s grid (its ``ba``, else its smallest
        size), where that size fits."""
        pos = self._offs[self._i]
        step, need = self.align[op], self.min_bs[op]
        if step != self.grid or pos + need > self.size_bytes:
            pos = min(pos - pos % step, (self.size_bytes - need) // step * step)
        return pos

    def _placed(self, op: int, pos: int) -> tuple[int, int]:
        n = (self.bs_of[op] if self.fixed
             else self.sizes.draw(op, self.size_bytes - pos))
        self.last_start[op] = pos
        self.last_pos[op] = pos + n
        if self.pass_bytes is not None:
            self._pass_done += n
            if self._pass_done >= self.pass_bytes:
                self._pass_done = 0
                self.last_pos = [0, 0]
        return pos, n
