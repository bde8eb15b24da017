"""noop: FIFO dispatch, back merges only (Linux ``noop`` elevator).

The FIFO is an ``OrderedDict``: dispatch takes the oldest in O(1), and so does the
removal of a request a merge absorbed, wherever it is in the queue. A request that
goes into an empty FIFO and out again changes nothing of noop's (``passes_unchanged``:
the block queue hands it straight to the device)."""
from __future__ import annotations

from collections import OrderedDict

from ..device.request import IORequest
from .scheduler import Scheduler


class Noop(Scheduler):
    name = "noop"
    front_merges = False
    passes_unchanged = True

    def __init__(self) -> None:
        super().__init__()
        self.fifo: OrderedDict[IORequest, None] = OrderedDict()

    def _add(self, req: IORequest, now_ns: int) -> None:
        self.fifo[req] = None

    def _pop(self, now_ns: int) -> IORequest:
        return self.fifo.popitem(last=False)[0]

    def _remove(self, req: IORequest) -> None:
        del self.fifo[req]
