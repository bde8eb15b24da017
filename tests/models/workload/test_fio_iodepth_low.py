"""fio's ``iodepth_low``: a job whose queue is full reaps until no more than
``iodepth_low`` I/Os are in flight, then fills it again (backend.c
``wait_for_completions``: ``while (full && cur_depth > iodepth_low)``); fio's default
(0, or above ``iodepth``) is ``iodepth``: a full queue is refilled at every completion.
Exact issue times on a drive that serves one command a millisecond."""
import numpy as np
import pytest

from models.block import BlockConfig, BlockQueue
from models.sim import Simulator
from models.workload.fio import FioConfig, FioJob
from tests.models.block.test_fua import MS, _Drive


def _issue_ms(**fio):
    sim = Simulator()
    q = BlockQueue(sim, _Drive(sim, "hdd", queue_depth=8), BlockConfig(scheduler="noop"))
    issued = []
    submit = q.submit

    def spy(bios, plug=False):
        issued.append(sim.now_ns // MS)
        return submit(bios, plug)

    q.submit = spy
    job = FioJob(sim, FioConfig(**{"rw": "randread", "iodepth": 8, "number_ios": 20,
                                   "time_based": False, **fio}), q, np.random.default_rng(1))
    job.start()
    sim.run()
    return issued, job.results()


def test_without_a_low_water_mark_each_completion_is_replaced_at_once():
    for low in (0, 8, 64):
        issued, _ = _issue_ms(iodepth_low=low)
        assert issued == [0] * 8 + list(range(1, 13))


def test_with_iodepth_low_4_the_queue_drains_to_4_then_fills_again():
    issued, res = _issue_ms(iodepth_low=4)
    assert issued == [0] * 8 + [4] * 4 + [8] * 4 + [12] * 4
    assert res["read_iops"] == pytest.approx(1000, rel=0.01)     # the drive never idles


def test_with_iodepth_low_1_it_refills_seven_at_a_time_behind_the_last_in_flight():
    issued, _ = _issue_ms(iodepth_low=1)
    assert issued == [0] * 8 + [7] * 7 + [14] * 5


def test_a_negative_iodepth_low_is_an_error_naming_it():
    with pytest.raises(ValueError, match="^iodepth_low: "):
        FioConfig(iodepth_low=-1)
