"""The `kernel` key (models/linux.py, conf/kernel/): the queue kind and the defaults
that changed per release fill the keys left null; explicit settings win."""
import pytest

from models.linux import RELEASES, KernelConfig
from pipeline.errors import ConfigError
from pipeline.run import quote_kernel
from pipeline.spec import validate


def _spec(compose, *overrides):
    cfg = compose(*overrides)
    return validate(cfg, "x")


def test_the_default_is_the_2_6_18_legacy_stack_the_experiments_ran_on(compose):
    p = _spec(compose).params
    assert p["kernel.version"] == "2.6.18"
    assert p["device.sda.queue.scheduler"] == "deadline" and p["device.sda.queue.nr_requests"] == 128
    assert "cpu.cores" not in p          # fio on the legacy queue: the CPUs play no part
    p = _spec(compose, "workload=fsync_bench").params      # a filesystem is mounted
    assert p["fs.stable_pages"] is False and p["fs.sfr_write_waits"] is True
    assert p["fs.nobarrier"] is None and p["fs.osync_is_dsync"] is None
    assert p["fs.fsync_flushes_cache"] is None


@pytest.mark.parametrize("release, hdd, nvme", [
    ("2.6.18", "cfq", "cfq"), ("3.10", "cfq", "cfq"),
    ("4.19", "mq-deadline", "none"), ("5.15", "mq-deadline", "none"), ("6.1", "mq-deadline", "none"),
])
def test_block_default_takes_the_releases_scheduler(compose, release, hdd, nvme):
    p = _spec(compose, f"kernel='{release}'", "block=default").params
    assert p["device.sda.queue.scheduler"] == hdd
    p = _spec(compose, f"kernel='{release}'", "block=default",
              "device@device.sda=nvme_consumer", "workload.size=1g").params
    assert p["device.sda.queue.scheduler"] == nvme
    if nvme == "none":
        assert p["device.sda.queue.nr_requests"] is None     # the queue's own default
        assert p["cpu.cores"] == 16                          # blk-mq maps the CPUs' queues


def test_the_release_decides_the_fs_keys_left_null_and_explicit_ones_win(compose):
    p = _spec(compose, "kernel='5.15'", "block=default", "workload=fsync_bench").params
    assert p["fs.sfr_write_waits"] is False and p["fs.nobarrier"] is False
    assert p["fs.osync_is_dsync"] is False and p["fs.fsync_flushes_cache"] is True
    p = _spec(compose, "kernel='5.15'", "block=default", "workload=fsync_bench",
              "fs.sfr_write_waits=true").params
    assert p["fs.sfr_write_waits"] is True
    p = _spec(compose, "kernel='4.19'", "block=deadline").params        # legacy still there
    assert p["device.sda.queue.scheduler"] == "deadline"


def test_the_release_decides_deadlines_batches_and_an_explicit_setting_wins(compose):
    key = "device.sda.queue.deadline_contiguous_batches"
    assert _spec(compose).params[key] is True                       # 2.6.18
    for release in ("2.6.32", "3.10", "4.19"):
        assert _spec(compose, f"kernel='{release}'", "block=deadline").params[key] is False
    assert _spec(compose, "block.deadline_contiguous_batches=false").params[key] is False
    assert _spec(compose, "block=noop").params[key] is None         # no deadline, no key



def test_the_release_decides_the_request_lists_and_an_explicit_setting_wins(compose):
    key = "device.sda.queue.request_lists"
    assert _spec(compose).params[key] == "read_write"                  # 2.6.18
    for release in ("2.6.32", "3.10", "4.19"):
        assert _spec(compose, f"kernel='{release}'", "block=noop").params[key] == "sync_async"
    assert _spec(compose, "block.request_lists=sync_async").params[key] == "sync_async"
    assert _spec(compose, "kernel='5.15'", "block=default").params[key] is None   # blk-mq

def test_the_release_decides_flush_merging_and_an_explicit_setting_wins(compose):
    key = "device.sda.queue.flush_merging"
    assert _spec(compose).params[key] is False                         # 2.6.18
    assert _spec(compose, "kernel='2.6.32'", "block=noop").params[key] is False
    for release in ("3.10", "4.19", "5.15"):                          # blk-flush, 2.6.37+
        assert _spec(compose, f"kernel='{release}'", "block=default").params[key] is True
    assert _spec(compose, "kernel='5.15'", "block=default",
                 "block.flush_merging=false").params[key] is False


def test_a_setting_the_release_does_not_have_names_its_key(compose):
    with pytest.raises(ConfigError, match="removed in Linux 5.0") as ex:
        _spec(compose, "kernel='6.1'")
    assert ex.value.key == "block.scheduler"
    with pytest.raises(ConfigError, match="NVMe uses blk-mq only") as ex:
        _spec(compose, "kernel='4.19'", "device@device.sda=nvme_consumer", "workload.size=1g",
              "+device.sda.queue={scheduler: deadline}")
    assert ex.value.key == "device.sda.queue.scheduler"


def test_release_names_are_quoted_for_hydra():
    assert quote_kernel("kernel=3.10") == "kernel='3.10'"
    assert quote_kernel("kernel=2.6.18,5.15") == "kernel='2.6.18','5.15'"
    assert quote_kernel("kernel.version=3.10") == "kernel.version=3.10"
    assert quote_kernel("workload.bs=4k") == "workload.bs=4k"


def test_every_release_has_its_conf_option():
    from .helpers import CONF
    assert sorted(p.stem for p in (CONF / "kernel").glob("*.yaml")) == sorted(RELEASES)
    with pytest.raises(ValueError, match="unknown release '3.1'"):
        KernelConfig("3.1")
