"""experiment=redo_on_modern_storage: the commit path's figures come out in the order
the physics gives - every flash device faster than the 7200 rpm disk, the NVMe drive
with power-loss protection far faster than the one without (fsync-bound commits)."""
import pytest

from pipeline.build import simulate
from pipeline.spec import validate
from pipeline.sweep import experiment_name

from .helpers import CONF

DEVICES = ("hdd_sata_7200", "nvme_consumer", "nvme_datacenter", "cloud_gp3_500g")


@pytest.fixture(scope="module")
def runs():
    """(device, concurrency) -> (parameters, mysqlslap.tps) at run.scale 0.002."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.schema import register

    register()
    GlobalHydra.instance().clear()
    out = {}
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for dev in DEVICES:
            for conc in (1, 32):
                cfg = compose("config", overrides=[
                    "experiment=redo_on_modern_storage", f"device@device.sda={dev}",
                    f"workload.concurrency={conc}", "run.scale=0.002"], return_hydra_config=True)
                spec = validate(cfg, experiment_name(cfg.hydra))
                out[dev, conc] = spec.params, simulate(spec).summary
    GlobalHydra.instance().clear()
    return out


@pytest.fixture(scope="module")
def tps(runs):
    return {k: v[1]["mysqlslap.tps"] for k, v in runs.items()}


def test_the_experiment_runs_on_the_5_15_kernels_default_queues(runs):
    for (dev, _), (params, summary) in runs.items():
        assert params["kernel.version"] == "5.15"
        want = "none" if dev.startswith("nvme") else "mq-deadline"
        assert params["device.sda.queue.scheduler"] == want, dev
        hw = min(params.get("device.sda.nr_queues") or 1, params["cpu.cores"])
        assert summary["mqstat.sda.nr_hw_queues"] == hw, dev


@pytest.mark.parametrize("conc", [1, 32])
def test_flash_beats_the_7200_rpm_disk_at_every_concurrency(tps, conc):
    disk = tps["hdd_sata_7200", conc]
    for dev in ("nvme_consumer", "nvme_datacenter", "cloud_gp3_500g"):
        assert tps[dev, conc] > 2 * disk, (dev, tps[dev, conc], disk)


@pytest.mark.parametrize("conc", [1, 32])
def test_power_loss_protection_wins_on_fsync_bound_commits(tps, conc):
    assert tps["nvme_datacenter", conc] > 1.5 * tps["nvme_consumer", conc]
    assert tps["nvme_consumer", conc] > tps["cloud_gp3_500g", conc]
