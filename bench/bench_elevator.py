"""Cost of one elevator operation at queue depths 32, 1,000 and 100,000 (CPU time).

For each scheduler (noop, deadline, cfq) the queue is filled with ``depth`` 4 KB reads
at random sectors of 8 GB (one issuer), then timed at that steady depth:

- ``add+dispatch``: one new request added, one dispatched (``Scheduler.add`` /
  ``Scheduler.dispatch``: the sorted insert, the dispatch scan, the removal);
- ``add+remove``: one added, one queued request removed the way a merge absorbs it
  (``Scheduler.remove_merged``: noop's FIFO and the sorted structures' removal).

Prints microseconds per operation pair and the growth from depth 32 to 100,000::

    python -m bench.bench_elevator [--ops N] [--depths 32,1000,100000]
"""
from __future__ import annotations

import argparse
import json
import random
import time

from models.block import BlockConfig, make_scheduler
from models.device.request import READ, IORequest

SCHEDULERS = ("noop", "deadline", "cfq")


def _req(rng: random.Random) -> IORequest:
    return IORequest(READ, rng.randrange(2 << 20) * 4096, 4096, None, True, False, 1)


def per_op_us(scheduler: str, depth: int, ops: int, remove: bool, seed: int = 1) -> float:
    rng = random.Random(seed)
    sched = make_scheduler(BlockConfig(scheduler=scheduler))
    now = 0
    queued = []
    for _ in range(depth):
        r = _req(rng)
        sched.add(r, now)
        queued.append(r)
    new = [_req(rng) for _ in range(ops)]
    if remove:
        # victims: requests queued when they are removed (the new one of the step before
        # at the earliest), chosen uniformly
        victims = []
        pool = list(queued)
        for r in new:
            i = rng.randrange(len(pool))
            victims.append(pool[i])
            pool[i] = r
        c0 = time.process_time()
        for r, v in zip(new, victims):
            sched.add(r, now)
            sched.remove_merged(v)
        cpu = time.process_time() - c0
    else:
        c0 = time.process_time()
        for r in new:
            now += 1000
            sched.add(r, now)
            sched.dispatch(now)
        cpu = time.process_time() - c0
    assert sched.count == depth
    return cpu / ops * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=50_000)
    ap.add_argument("--depths", default="32,1000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    out = {}
    print(f"{'scheduler':<10} {'operation':<13} " + " ".join(f"{d:>10,}" for d in depths)
          + "   growth (us per op, best of %d)" % args.repeat)
    for s in SCHEDULERS:
        for remove, name in ((False, "add+dispatch"), (True, "add+remove")):
            us = [min(per_op_us(s, d, args.ops, remove, seed=k) for k in range(args.repeat))
                  for d in depths]
            growth = us[-1] / us[0]
            out[f"{s} {name}"] = {"us": [round(u, 3) for u in us], "growth": round(growth, 2)}
            print(f"{s:<10} {name:<13} " + " ".join(f"{u:>10.2f}" for u in us)
                  + f"   {growth:.2f}x")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
