"""noop: FIFO dispatch, back merges only (Linux ``noop`` elevator)."""
from __future__ import annotations

from collections import deque

from ..device.request import IORequest
from .scheduler import Scheduler


class Noop(Scheduler):
    name = "noop"
    front_merges = False

    def __init__(self) -> None:
        super().__init__()
        self.fifo: deque[IORequest] = deque()

    def _add(self, req: IORequest, now_ns: int) -> None:
        self.fifo.append(req)

    def _pop(self, now_ns: int) -> IORequest:
        return self.fifo.popleft()

    def _remove(self, req: IORequest) -> None:
        self.fifo.remove(req)
