"""none: no scheduler - requests leave in arrival order (blk-mq's ``none``).

With no elevator, blk-mq dispatches a request as soon as it has a driver tag
(``blk_mq_try_issue_directly``); a request that has to wait for one sits in its
software queue (``ctx->rq_lists``), where later bios can still merge into it, back
or front (``blk_bio_list_merge``). That is the legacy noop FIFO with front merges.
"""
from __future__ import annotations

from ..noop import Noop


class NoneScheduler(Noop):
    name = "none"
    front_merges = True

    def __init__(self, cfg=None) -> None:
        super().__init__()
