"""The elevators' queue operations stay cheap at the depths nr_requests=100000 allows:
per-operation cost at 100,000 queued requests within a small factor of its cost at
1,000 (a sorted list or a FIFO scanned on removal grows ~10-100x over that range)."""
import pytest

from bench.bench_elevator import per_op_us


@pytest.mark.parametrize("scheduler", ["noop", "deadline", "cfq"])
@pytest.mark.parametrize("remove", [False, True], ids=["add+dispatch", "add+remove"])
def test_per_operation_cost_barely_grows_from_1000_to_100000_queued(scheduler, remove):
    def best(depth):
        return min(per_op_us(scheduler, depth, 4000, remove, seed=k) for k in range(3))

    small, large = best(1000), best(100_000)
    assert large < 5 * small, (small, large)
