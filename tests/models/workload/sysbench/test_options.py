"""Bad sysbench options: one message that starts with the key's name."""
import pytest

from models.workload.sysbench import SysbenchConfig


@pytest.mark.parametrize("kw,key", [
    (dict(test="oltp_nonsense"), "test"),
    (dict(rand_type="exponential"), "rand_type"),
    (dict(table_size=-5), "table_size"),
    (dict(table_size=0), "table_size"),
    (dict(table_size=2**31), "table_size"),
    (dict(tables=0), "tables"),
    (dict(threads=0), "threads"),
    (dict(time=-1), "time"),
    (dict(time=0, events=0), "time"),
    (dict(events=-1), "events"),
    (dict(rate=-3), "rate"),
    (dict(report_interval=-1), "report_interval"),
    (dict(percentile=101), "percentile"),
    (dict(rand_spec_res=100), "rand_spec_res"),
    (dict(rand_spec_pct=150), "rand_spec_pct"),
    (dict(rand_pareto_h=1.0), "rand_pareto_h"),
    (dict(rand_pareto_h=0), "rand_pareto_h"),
    (dict(rand_zipfian_exp=-1), "rand_zipfian_exp"),
    (dict(range_size=0), "range_size"),
    (dict(range_size=200, table_size=100), "range_size"),
    (dict(point_selects=-1), "point_selects"),
    (dict(test="oltp_read_only", point_selects=0, range_selects=False), "point_selects"),
    (dict(test="oltp_update_index", index_updates=0), "index_updates"),
    (dict(time=float("inf")), "time"),
])
def test_bad_option_names_its_key(kw, key):
    with pytest.raises(ValueError) as ei:
        SysbenchConfig(**kw)
    msg = str(ei.value)
    assert msg.startswith(f"{key}: ") and "\n" not in msg


def test_defaults_are_sysbench_10s():
    c = SysbenchConfig()
    assert (c.test, c.tables, c.table_size, c.threads, c.time, c.events, c.rate) == \
        ("oltp_read_write", 1, 10_000, 1, 10.0, 0, 0.0)
    assert (c.rand_type, c.rand_spec_iter, c.rand_spec_pct, c.rand_spec_res,
            c.rand_pareto_h) == ("special", 12, 1.0, 75.0, 0.2)
    assert (c.range_size, c.point_selects, c.simple_ranges, c.sum_ranges, c.order_ranges,
            c.distinct_ranges, c.index_updates, c.non_index_updates, c.delete_inserts) == \
        (100, 10, 1, 1, 1, 1, 1, 1, 1)
    assert (c.skip_trx, c.auto_inc, c.range_selects, c.percentile, c.report_interval) == \
        (False, True, True, 95, 0.0)
