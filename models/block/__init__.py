"""Linux block layer: request queue, merging, plugging, nr_requests, schedulers."""
from .base import BlockQueue, make_scheduler
from .config import SCHEDULERS, BlockConfig

__all__ = ["BlockQueue", "BlockConfig", "SCHEDULERS", "make_scheduler"]
