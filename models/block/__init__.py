"""Linux block layer: request queue, merging, plugging, nr_requests, schedulers.

Two queue kinds, as Linux has had them: the legacy request queue (``base``, with
noop / deadline / cfq) and blk-mq (``mq/``, with none / mq-deadline / kyber / bfq).
``make_queue`` picks one by ``BlockConfig.scheduler``.
"""
from __future__ import annotations

import dataclasses

from .base import BlockQueue, make_scheduler
from .config import LEGACY_SCHEDULERS, MQ_SCHEDULERS, SCHEDULERS, BlockConfig
from .mq import MQQueue

LEGACY_NR_REQUESTS = 128     # BLKDEV_MAX_RQ


def make_queue(sim, device, cfg: BlockConfig, name: str | None = None, nr_cpus: int = 1,
               io_submit_ns: int = 0, io_complete_ns: int = 0):
    """The request queue ``cfg.scheduler`` belongs to: ``MQQueue`` for a blk-mq
    scheduler, else the legacy ``BlockQueue``. ``nr_cpus``: CPUs whose software
    queues blk-mq maps onto the device's hardware contexts; ``io_*_ns``: host CPU per
    command on the submitting core (blk-mq only; the legacy queue charges none)."""
    if cfg.scheduler is None:
        raise ValueError("scheduler: not resolved (null means the kernel's default; "
                         "resolve it with models.linux before building a queue)")
    if cfg.scheduler in MQ_SCHEDULERS:
        return MQQueue(sim, device, cfg, name=name, nr_cpus=nr_cpus, io_submit_ns=io_submit_ns,
                       io_complete_ns=io_complete_ns)
    if cfg.nr_requests is None:
        cfg = dataclasses.replace(cfg, nr_requests=LEGACY_NR_REQUESTS)
    return BlockQueue(sim, device, cfg, name=name)


__all__ = ["BlockQueue", "BlockConfig", "LEGACY_NR_REQUESTS", "MQQueue", "SCHEDULERS", "LEGACY_SCHEDULERS",
           "MQ_SCHEDULERS", "make_queue", "make_scheduler"]
