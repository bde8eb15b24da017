"""blk-mq: per-CPU software queues, hardware contexts with tags, and the schedulers
none, mq-deadline, kyber and bfq (the legacy request queue is ``..base``)."""
from .queue import MQ_SCHEDULER_CLASSES, MQQueue, default_nr_requests, hw_queues

__all__ = ["MQQueue", "MQ_SCHEDULER_CLASSES", "default_nr_requests", "hw_queues"]
