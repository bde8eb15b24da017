"""DiskSim readers, the importer's zone round trip, and the validation replay."""
import numpy as np
import pytest

from pipeline import disksim as ds
from pipeline import import_disksim as imp

SAMPLE = """
# a comment
disksim_disk FOO {
   Model = source foo.model,
   Bulk sector transfer time = 0.099,   # trailing comment
   Scheduler = disksim_ioqueue {
      Scheduling policy = 1,
      Timeout time/weight = 6
   },
   Read hit over. after read = 0.184
   Rotation speed (in rpms) = 10025,
   Zones = [ z { a = 1, slips = [ 5, 7 ], defects = [] }, z { a = 2 } ],
   Sizes = [ exponential, 0.0, 8.0 ]
}
instantiate [ disk0 ] as FOO
topology disksim_bus bus0 [ disksim_disk disk0 [] ]
"""


def test_libparam_blocks_lists_comments_and_missing_commas():
    items = ds.parse_params(SAMPLE)
    kind, name, blk = items[0]
    assert (kind, name) == ("block", "disksim_disk FOO")
    assert blk["Model"] == "source foo.model"
    assert blk["Bulk sector transfer time"] == 0.099
    assert blk["Scheduler"].type == "disksim_ioqueue"
    assert blk["Scheduler"]["Timeout time/weight"] == 6
    assert blk["Read hit over. after read"] == 0.184        # no comma after it
    assert blk["Rotation speed (in rpms)"] == 10025
    assert [z["a"] for z in blk["Zones"]] == [1, 2]
    assert blk["Zones"][0]["slips"] == [5, 7] and blk["Zones"][0]["defects"] == []
    assert blk["Sizes"] == ["exponential", 0.0, 8.0]
    assert items[1] == ("instantiate", ["disk0"], "FOO")
    topo = items[2][1]
    assert topo["type"] == "disksim_bus bus0"
    assert topo["children"][0]["type"] == "disksim_disk disk0"


def test_seek_file_and_traces():
    dist, ms = ds.parse_seek("Seek distances measured: 3\n1,\t1.245\n2,\t1.157\n10021,\t10.828\n")
    assert dist.tolist() == [1, 2, 10021] and ms.tolist() == [1.245, 1.157, 10.828]
    tr = ds.parse_validate_trace("W Hit    4583176   4    663.00000  45422.00000\n"
                                 "R Miss  564347     2     14095.370     13876.270\n")
    assert tr.mode == "closed"
    assert tr.ops.tolist() == [1, 0]
    assert tr.offset_bytes.tolist() == [4583176 * 512, 564347 * 512]
    assert tr.size_bytes.tolist() == [2048, 1024]
    assert tr.measured_ns.tolist() == [663_000, 14_095_370]
    assert tr.time_ns.tolist() == [45_422_000, 13_876_270]
    csv = ds.parse_csv_trace("time_us,op,offset_bytes,size_bytes\n"
                             "20.5,W,8192,4096\n10,R,0,512\n")
    assert csv.mode == "open"
    assert csv.time_ns.tolist() == [10_000, 20_500]         # sorted by time
    assert csv.ops.tolist() == [0, 1]
    assert csv.offset_bytes.tolist() == [0, 8192] and csv.size_bytes.tolist() == [512, 4096]
    with pytest.raises(ValueError, match="line 2"):
        ds.parse_csv_trace("time_us,op,offset_bytes,size_bytes\n1,X,0,512\n")


@pytest.fixture(scope="module")
def specs():
    return {d: ds.read_diskspecs(ds.DATA_DIR / f"{d}.diskspecs") for d in ds.DRIVES}


def test_all_seven_drives_parse(specs):
    assert set(specs) == set(ds.DRIVES)
    a = specs["atlas10k"]
    assert a.model.rpm == 10025 and a.model.surfaces == 6 and len(a.model.zones) == 24
    assert a.model.zones[0].sectors_per_track == 334 and a.model.zones[0].cyl_skew == 113
    assert a.model.zones[0].slips == (55017, 358148, 394564, 420533, 483742)
    assert a.get("Bulk sector transfer time") == 0.099
    assert a.seek_ms[0] == 1.245 and a.seek_dist_cyl[-1] == 10021
    hp = specs["hp_c2247a"]
    assert hp.model.seek_type == "hplplus10" and hp.seek_ms is None
    assert (hp.bus_read_ms_per_sector, hp.bus_write_ms_per_sector) == (0.1701, 0.18686)


def test_track_sparing_layout_matches_the_block_count(specs):
    # hp_c2247a: spare tracks per zone; DiskSim's computed capacity equals Block count
    m = specs["hp_c2247a"].model
    assert ds.zone_lbn_counts(m).sum() == m.block_count == 2_054_864


def test_lbn_to_pbn_by_hand(specs):
    m = specs["atlas_III"].model
    # zone 0 starts with 128000 reserved sectors = 50 cylinders of 10 x 256
    assert ds.lbn_to_pbn(m, 0) == (50, 0, 0)
    assert ds.lbn_to_pbn(m, 256) == (50, 1, 0)
    assert ds.lbn_to_pbn(m, 2560) == (51, 0, 0)
    hp = specs["hp_c2247a"].model
    # 1632 reserved sectors = 17 tracks of 96 on 13 surfaces -> cylinder 1, surface 4
    assert ds.lbn_to_pbn(hp, 0) == (1, 4, 0)
    # slipped track 468 (zone-relative) is skipped: the track after 467 is 469
    t467 = 467 * 96 - 1632
    assert ds.lbn_to_pbn(hp, t467) == (467 // 13, 467 % 13, 0)
    assert ds.lbn_to_pbn(hp, t467 + 96) == (469 // 13, 469 % 13, 0)
    # serpentine atlas10k: odd cylinders run the surfaces backwards
    a = specs["atlas10k"].model
    per_cyl = 334 * 6
    assert ds.lbn_to_pbn(a, per_cyl)[:2] == (1, 5)
    # skew: sector 0 of track (cyl 0, head 1) sits 63 sectors on
    assert ds.pbn_angle_sectors(a, 0, 1, 0) == 63
    assert ds.pbn_angle_sectors(a, 1, 5, 0) == (5 * 63 + 113) % 334


def test_hpl_seek_formula(specs):
    m = specs["hp_c2247a"].model
    t = ds.hpl_seek_ms(m, np.array([0, 1, 10, 100, 300, 2000]))
    assert t[0] == 0 and t[1] == 2.89 and t[2] == 4.99
    assert t[3] == pytest.approx(3.81 + 0.33 * 10)
    assert t[4] == pytest.approx(7.75 + 0.0059 * 300)
    assert t[5] == pytest.approx(7.75 + 0.0059 * 2000)


@pytest.mark.parametrize("drive", ds.DRIVES)
def test_importer_round_trips_the_zone_table(drive, specs, tmp_path):
    out = imp.import_drive(ds.DATA_DIR / f"{drive}.diskspecs", tmp_path / "d.yaml")
    cfg = imp.load_hdd_config(out)
    m = specs[drive].model
    got = [(z.first_cyl, z.last_cyl, z.sectors_per_track, z.track_skew_sectors,
            z.cylinder_skew_sectors, z.first_sector_offset) for z in cfg.zones]
    want = [(z.first_cyl, z.last_cyl, z.sectors_per_track, z.track_skew, z.cyl_skew,
             z.first_block_offset) for z in m.zones]
    assert got == want
    assert cfg.rpm == m.rpm and cfg.surfaces == m.surfaces and cfg.cylinders == m.cylinders
    assert cfg.capacity_bytes == m.block_count * 512
    # the committed config is what the importer writes today
    committed = ds.config_path(drive)
    assert committed.read_text() == out.read_text(), "re-run python -m pipeline.import_disksim --all"


def test_imported_values_follow_the_files(specs):
    cfg = imp.load_hdd_config(ds.config_path("atlas10k"))
    assert cfg.interface_mb_s == pytest.approx(512 / 0.099e-3 / 1e6)
    # base overheads are DiskSim's "after read" values, *_after_write its "after write"
    assert cfg.overhead_read_hit_ms == 0.184 and cfg.overhead_write_hit_ms == 0.186
    assert cfg.overhead_write_hit_after_write_ms == 0.189
    assert cfg.overhead_write_miss_ms == 0.34492 and cfg.overhead_write_miss_after_write_ms == 0.49673
    assert cfg.cache_segments == 10 and cfg.cache_segment_bytes == 374 * 512
    assert cfg.read_ahead_max_bytes == 354 * 512 and cfg.write_cache
    assert cfg.queue_depth == 1 and cfg.scheduler == "fifo"
    assert cfg.seek_curve_ms[0] == 1.245 and cfg.head_switch_ms == 0.176
    hp = imp.load_hdd_config(ds.config_path("hp_c2247a"))
    assert hp.interface_mb_s == pytest.approx(512 / 0.1701e-3 / 1e6)
    assert not hp.write_cache
    # the HPL table reproduces the formula between its points
    d = np.array([57, 123, 301, 1500])
    assert np.allclose(np.interp(d, hp.seek_curve_cyl, hp.seek_curve_ms),
                       ds.hpl_seek_ms(specs["hp_c2247a"].model, d), atol=1e-3)


def test_replay_of_first_500_requests_is_deterministic():
    a = ds.validate_drive("cheetah9LP", n_requests=500)
    b = ds.validate_drive("cheetah9LP", n_requests=500)
    assert a["requests"] == 500
    assert np.array_equal(a["simulated_ms"], b["simulated_ms"])
    assert a["demerit_ms"] == b["demerit_ms"]
    assert np.all(a["simulated_ms"] > 0)


@pytest.mark.parametrize("drive", ds.DRIVES)
def test_hdd_layout_matches_disksim_layout(drive, specs):
    """The imported zones (LBN counts, zone fronts, spares, slips, serpentine order) put
    every LBA on the cylinder, surface, sector and angle of DiskSim's layout_g1."""
    from models.device.hdd.mech import build_state, locate, track_span
    m = specs[drive].model
    S = build_state(imp.load_hdd_config(ds.config_path(drive)))
    starts = np.concatenate(([0], np.cumsum(ds.zone_lbn_counts(m))))
    lbas = list(np.random.default_rng(0).integers(0, m.block_count, 300))
    for zi, z in enumerate(m.zones):
        lbas += [starts[zi], starts[zi] - 1]
        for sl in z.slips[:3]:
            lbas += [starts[zi] + sl - z.empty_space_front + k for k in (-1, 0, 1)]
    for lba in (int(x) for x in lbas if 0 <= x < m.block_count):
        c, h, s = ds.lbn_to_pbn(m, lba)
        kc, kh, ks, spt, ang = locate(S, float(lba))
        assert (int(kc), int(kh), int(ks)) == (c, h, s), lba
        assert ang * spt == pytest.approx(ds.pbn_angle_sectors(m, c, h, s), abs=1e-6)
        first, end = (int(v) for v in track_span(S, float(lba)))
        assert ds.lbn_to_pbn(m, first)[:2] == (c, h) and ds.lbn_to_pbn(m, end - 1)[:2] == (c, h)
        assert first == 0 or ds.lbn_to_pbn(m, first - 1)[:2] != (c, h)
        assert end >= m.block_count or ds.lbn_to_pbn(m, end)[:2] != (c, h)


@pytest.mark.parametrize("args, expect", [
    (["nosuchdrive"], "error: drives: unknown drive 'nosuchdrive' (drives: atlas_III, "),
    (["atlas10"], "error: drives: unknown drive 'atlas10' (did you mean 'atlas10k'?"),
    (["atlas10k", "--n", "-5"], "error: --n: must be >= 0 (0 = every request), got -5"),
    (["atlas10k", "--n", "5", "--png", "{tmp}/f"], "error: --png: '{tmp}/f' is not a directory"),
    (["atlas10k", "--n", "5", "--png", "{tmp}/f/sub"], "error: --png: cannot create"),
], ids=["unknown-drive", "drive-typo", "negative-n", "png-a-file", "png-under-a-file"])
def test_validation_command_bad_input_is_one_line_exit_2(tmp_path, capsys, args, expect):
    (tmp_path / "f").write_text("")
    assert ds.main([a.format(tmp=tmp_path) for a in args]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(expect.format(tmp=tmp_path)), err
    assert out == "" and [p.name for p in tmp_path.iterdir()] == ["f"]


def _break_seek(d):
    seek = d / "atlas10k.seek"
    lines = seek.read_text().splitlines()
    seek.write_text("\n".join(lines[:4] + ["garbage line here"] + lines[5:]) + "\n")


def _negative_rpm(d):
    f = next(p for p in d.iterdir() if "Rotation speed (in rpms) = " in p.read_text())
    f.write_text(f.read_text().replace("Rotation speed (in rpms) = ", "Rotation speed (in rpms) = -"))


@pytest.mark.parametrize("damage, out, expect", [
    (lambda d: (d / "atlas10k.seek").unlink(), "a.yaml", "{d}/atlas10k.seek: cannot read: No such file"),
    (_break_seek, "a.yaml", "{d}/atlas10k.diskspecs: seek curve line 5: expected 'distance, ms'"),
    (_negative_rpm, "a.yaml", "{d}/atlas10k.diskspecs: rpm: must be > 0, got -"),
    (lambda d: (d / "atlas10k.diskspecs").write_text(""), "a.yaml",
     "{d}/atlas10k.diskspecs: no disksim_disk block found"),
    (lambda d: None, "", "--out: '{tmp}' is a directory; give a file name"),
], ids=["no-seek-file", "garbage-seek-line", "negative-rpm", "empty-diskspecs", "out-a-directory"])
def test_importer_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, damage, out,
                                                                  expect):
    d = tmp_path / "ds"
    d.mkdir()
    for p in ds.DATA_DIR.glob("atlas10k.*"):
        (d / p.name).write_bytes(p.read_bytes())
    damage(d)
    before = sorted(tmp_path.rglob("*"))
    assert imp.main([str(d / "atlas10k.diskspecs"), "--out", str(tmp_path / out)]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("error: " + expect.format(d=d, tmp=tmp_path)), err
    assert captured.out == "" and sorted(tmp_path.rglob("*")) == before
