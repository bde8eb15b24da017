"""workload=full_scan (E1): a full-table scan by a session of the InnoDB server, through
its buffer pool, with each read-ahead strategy, on the experiment's device - the shared
RAID 1+0 of twelve 15k RPM SAS drives (conf/device/raid10_megaraid_2208.yaml), ext4, the
.ibd read O_DIRECT - at small scale."""
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from models.block import BlockConfig, BlockQueue
from models.device.hdd import HDD, default_15k_sas
from models.device.raid import RAID, RAIDConfig
from models.engine.cpu import CPUConfig
from models.engine.innodb import fs_open_file
from models.engine.innodb.server import InnoDBServerConfig, make_innodb_server
from models.fs import Filesystem, FsConfig, PageCache
from models.fs.config import PageCacheConfig
from models.sim import Simulator
from models.workload.full_scan import MOVED, FullScan, FullScanConfig

SCALE = 0.02        # a 200 MB table, a 160 MB buffer pool
SERVER_KEYS = {"innodb_buffer_pool_size"}
DRIVES = 12
RAID_YAML = Path(__file__).resolve().parents[3] / "conf" / "device" / "raid10_megaraid_2208.yaml"


def _raid_config(members) -> RAIDConfig:
    """The experiment's array, from the same device config file the pipeline uses."""
    raw = OmegaConf.to_container(OmegaConf.load(RAID_YAML))
    raw.pop("type")
    raw["members"] = tuple(members)
    return RAIDConfig(**raw)


_cache: dict = {}


def run(scale=SCALE, disks=DRIVES, **kw):
    """Results of one scan (memoised: several tests compare the same cases)."""
    key = (scale, disks, tuple(sorted(kw.items())))
    if key not in _cache:
        _cache[key] = _run(scale, disks, **kw)
    return dict(_cache[key])


def _run(scale, disks, **kw):
    sim = Simulator()
    members = [HDD(sim, f"hdd{i}", default_15k_sas()) for i in range(disks)]
    dev = RAID(sim, "sda", _raid_config(m.name for m in members), members)
    blk = BlockQueue(sim, dev, BlockConfig(scheduler="deadline"))
    fs = Filesystem(sim, FsConfig(type="ext4"), blk, PageCache(sim, PageCacheConfig()))
    server_kw = {"innodb_buffer_pool_size": "8g"}
    server_kw.update({k: kw.pop(k) for k in SERVER_KEYS & set(kw)})
    cfg = InnoDBServerConfig(**server_kw)
    srv = make_innodb_server(sim, cfg, CPUConfig(), fs, fs, fs, fs_open_file(fs))
    wl = FullScan(sim, FullScanConfig(**kw), srv, np.random.default_rng(11), scale)
    wl.start()
    sim.run()
    out = wl.results()
    assert out["scan_complete"] == 1
    out.update({f"iostat_{k}": v for k, v in wl.iostat().items()})
    return out


@pytest.fixture(scope="module")
def modes():
    """The fragmented E1 table scanned with every strategy."""
    cases = {"none": dict(read_ahead="none"), "linear": dict(read_ahead="linear"),
             "physical": dict(read_ahead="physical"),
             "logical": dict(read_ahead="logical"),
             "logical_aio64": dict(read_ahead="logical", aio_pages_per_submit=64)}
    return {name: run(**kw) for name, kw in cases.items()}


def test_every_mode_scans_every_row_of_the_same_table(modes):
    rows = {m: r["rows"] for m, r in modes.items()}
    assert len(set(rows.values())) == 1 and rows["none"] > 0
    assert len({r["table_file_pages"] for r in modes.values()}) == 1


def test_without_read_ahead_every_leaf_is_a_synchronous_single_page_read(modes):
    # (the published scan times with and without LRA, and the speedup, at full size:
    # E1.scan.* in tests/experiments/test_published.py)
    assert modes["none"]["pages_read_clustered_leaf"] == modes["none"]["leaf_pages"]
    assert modes["none"]["bp_hit_rate"] < 0.01
    # every read one 16 KB page (the server's few writes - its log checkpoints - aside)
    assert modes["none"]["iostat_rareq_sz"] == pytest.approx(16.0)


def test_logical_read_ahead_reads_only_clustered_index_pages(modes):
    r = modes["logical_aio64"]
    assert r["pages_read_secondary_leaf"] == r["pages_read_secondary_nonleaf"] == 0
    assert r["pages_read_free"] == 0
    assert r["pages_read_clustered_leaf"] == r["leaf_pages"]
    assert r["bp_hit_rate"] > 0.99
    # sorted batches: neighbouring leaves merge into requests larger than one page
    assert r["iostat_rrqm_s"] > 0 and r["iostat_avgrq_sz"] > 1.5 * 32


def test_physical_warmup_reads_everything_it_can(modes):
    r = modes["physical"]
    assert r["pages_read_secondary_leaf"] > 0 and r["pages_read_free"] > 0
    assert r["warmup_pages"] > 0 and r["warmup_s"] > 0


def test_linear_read_ahead_little_on_fragmented_a_lot_on_sequential(modes):
    frag_gain = modes["none"]["scan_s"] / modes["linear"]["scan_s"]
    seq_none = run(read_ahead="none", insert_pattern="sequential")
    seq_linear = run(read_ahead="linear", insert_pattern="sequential")
    seq_gain = seq_none["scan_s"] / seq_linear["scan_s"]
    assert frag_gain < 1.5
    assert seq_gain > 2 and seq_gain > 2 * frag_gain
    assert seq_linear["bp_hit_rate"] > 0.9


def test_logical_read_ahead_gains_little_on_a_sequential_table(modes):
    seq_linear = run(read_ahead="linear", insert_pattern="sequential")
    seq_lra = run(read_ahead="logical", insert_pattern="sequential", aio_pages_per_submit=64)
    frag_gain = modes["linear"]["scan_s"] / modes["logical_aio64"]["scan_s"]
    seq_gain = seq_linear["scan_s"] / seq_lra["scan_s"]
    assert seq_gain < 1.6 and seq_gain < frag_gain / 2


def test_physical_warmup_beats_linear_when_the_table_fits_and_not_when_it_does_not():
    fits = dict(innodb_buffer_pool_size="16g")
    assert (run(read_ahead="physical", aio_pages_per_submit=64, **fits)["scan_s"]
            < 0.5 * run(read_ahead="linear", **fits)["scan_s"])
    refused = run(read_ahead="physical", warmup_oversize="refuse")
    assert refused["warmup_refused"] == 1 and refused["warmup_pages"] == 0
    full = run(read_ahead="physical", warmup_oversize="full", aio_pages_per_submit=64)
    # read whole, the file pushes its own first pages out: the scan misses again
    assert full["bp_read_ahead_evicted"] > 0 and full["bp_sync_reads"] > 0.1 * full["leaf_pages"]


def test_lra_speedup_grows_with_innodb_lra_size_to_a_plateau():
    """Small batches are sparse in the file (short sorted runs, more seeks) and the scan
    waits for them; larger ones are read while the previous batch is scanned. (Batches
    larger than the 1,024 aio slots keep the scanning thread in submission, which makes
    the full-size curve non-monotonic: best where a batch just fits the slots - see
    experiment=lra_tuning. The slots are not scaled, so at this scale only the largest
    size here is past them.)"""
    times = {mb: run(read_ahead="logical", aio_pages_per_submit=64, innodb_lra_sleep=0,
                     innodb_lra_size=mb)["scan_s"] for mb in (64, 512, 4096)}
    assert times[64] > 1.2 * times[512]
    assert abs(times[4096] - times[512]) < 0.25 * times[512]


def test_background_load_slows_the_scan_and_stops_with_it(modes):
    r = run(read_ahead="none", background_iops=150, background_write_pct=30)
    assert r["scan_s"] > modes["none"]["scan_s"]
    n = r["bg_read_count"] + r["bg_write_count"]
    assert n == pytest.approx(150 * r["scan_s"], rel=0.25)


@pytest.mark.parametrize("key, value", [("read_ahead", "fast"), ("table_size", "0"),
                                        ("background_iops", -1),
                                        ("background_write_pct", 101)])
def test_config_errors_name_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        FullScanConfig(**{key: value})


@pytest.mark.parametrize("key", sorted(MOVED))
def test_keys_of_the_former_private_pool_name_their_new_place(key):
    with pytest.raises(ValueError, match=f"^{key}: no longer a key of the scan: set "
                                         f"{MOVED[key].split()[0]}"):
        FullScanConfig(**{key: "8g" if key.endswith("size") else 1})
