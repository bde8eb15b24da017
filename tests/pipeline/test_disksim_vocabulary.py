"""DiskSim drives as DiskSim reads them: three more of DiskSim's own validation drives
(data/disksim-valid: dec_rz26 - one spare sector per track and a negative write
settle; st41601n - spare sectors per cylinder, with slips; hp_c2490a - a cylinder count
that ends on the last zone's last cylinder and a negative settle) import, and their
imported layout puts every LBN where DiskSim's layout_g1 does; what the HDD model
cannot express is refused naming the parameter."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from pipeline import disksim as ds
from pipeline import import_disksim as imp


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = {}
    d = tmp_path_factory.mktemp("imp")
    for name in ("dec_rz26", "st41601n", "hp_c2490a"):
        path = imp.import_drive(ds.DATA_DIR / f"{name}.diskspecs", d / f"{name}.yaml")
        out[name] = (ds.read_diskspecs(ds.DATA_DIR / f"{name}.diskspecs"), imp.load_hdd_config(path))
    return out


def _check_layout(m, cfg, n=150):
    from models.device.hdd.mech import build_state, locate

    S = build_state(cfg)
    starts = np.concatenate(([0], np.cumsum(ds.zone_lbn_counts(m))))
    lbas = list(np.random.default_rng(0).integers(0, m.block_count, n))
    for zi, z in enumerate(m.zones):
        lbas += [starts[zi], starts[zi] - 1]
        for sl in z.slips[:2]:
            lbas += [starts[zi] + sl - z.empty_space_front + k for k in (-1, 0, 1)]
    for lba in (int(x) for x in lbas if 0 <= x < m.block_count):
        c, h, s = ds.lbn_to_pbn(m, lba)
        kc, kh, ks, spt, ang = locate(S, float(lba))
        assert (int(kc), int(kh), int(ks)) == (c, h, s), lba
        assert ang * spt == pytest.approx(ds.pbn_angle_sectors(m, c, h, s), abs=1e-6)


def test_one_spare_sector_per_track_and_its_zone_front(imported):
    spec, cfg = imported["dec_rz26"]
    m = spec.model
    assert m.sparing_scheme == 3 and m.zones[0].spares == 1
    assert ds.zone_lbn_counts(m).sum() == m.block_count == cfg.capacity_bytes // 512
    # each track holds 57 of its 58 sectors: LBN 57 starts the next track
    first = ds.lbn_to_pbn(m, 0)
    assert ds.lbn_to_pbn(m, 56)[1:] == (first[1], 56) and ds.lbn_to_pbn(m, 57)[2] == 0
    # "Empty space at zone front" counts LBNs: 23142 = 406 tracks of 57
    assert first == (406 // 14, 406 % 14, 0)
    _check_layout(m, cfg)


def test_spare_sectors_per_cylinder_with_slips(imported):
    spec, cfg = imported["st41601n"]
    m = spec.model
    assert m.sparing_scheme == 2 and any(z.slips for z in m.zones)
    assert ds.zone_lbn_counts(m).sum() == m.block_count
    assert cfg.zones[0].spare_range_cylinders == 1 and cfg.zones[0].spare_sectors_per_range == 6
    _check_layout(m, cfg)


def test_negative_settle_is_added_to_a_writes_positioning(imported):
    from models.device.hdd.mech import arrive, build_state

    spec, cfg = imported["dec_rz26"]
    assert spec.model.write_settle_ms == -0.483 and cfg.write_settle_ms == -0.483
    S = build_state(cfg)
    read = arrive(S, 0, 0, 0.0, 100, 0, False)
    write = arrive(S, 0, 0, 0.0, 100, 0, True)
    assert write - read == pytest.approx(-0.483e6)
    assert arrive(S, 5, 0, 0.0, 5, 0, True) == 0.0          # no movement, no settle
    assert imported["hp_c2490a"][1].write_settle_ms == -0.642


def test_cylinder_count_ending_on_a_zone_boundary_and_full_stroke_from_the_curve(imported):
    spec, cfg = imported["hp_c2490a"]
    assert spec.model.cylinders == 2629 and spec.model.zones[-1].last_cyl == 2629
    assert cfg.cylinders == 2630
    _check_layout(spec.model, cfg, n=100)
    dec_spec, dec = imported["dec_rz26"]
    assert dec_spec.model.full_seek_ms == 2.3                 # a label, not the curve's end
    assert dec.seek_full_stroke_ms == pytest.approx(
        np.interp(dec.cylinders - 1, dec.seek_curve_cyl, dec.seek_curve_ms))
    assert dec.seek_full_stroke_ms > 10


def test_immediate_buffer_read_imports_as_a_zero_latency_read(imported, tmp_path):
    atlas = ds.read_diskspecs(ds.DATA_DIR / "atlas10k.diskspecs")
    assert int(atlas.params["Immediate buffer read"]) == 1
    assert imp.to_hdd_dict(atlas)["read_zero_latency"] is True
    assert not any("Immediate buffer read" in line for line in imp.unmapped(atlas))
    assert imported["dec_rz26"][1].read_zero_latency          # Immediate buffer read = 1
    assert not imported["st41601n"][1].read_zero_latency      # = 0
    assert imp.load_hdd_config(imp.CONF_DIR / "disksim_atlas10k.yaml").read_zero_latency


def _one_read(cfg, t_ns, lba, n):
    from models.device.hdd import HDD
    from models.device.request import READ, IORequest
    from models.sim import Simulator

    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    done = []
    dev.on_complete = lambda r: done.append(r.done_ns)
    sim.at(t_ns, lambda _: dev.submit(IORequest(READ, lba * 512, n * 512)))
    sim.run()
    return done[0]


def test_a_zero_latency_read_takes_one_revolution_from_landing_inside_it():
    import dataclasses

    from tests.models.device.test_hdd_mech import SMALL

    # 10 ms a revolution, 100 sectors a track (0.1 ms each), 10 us a sector on the
    # link, 0.1 ms read miss overhead: at 0.1 ms the head is at sector 1 of track 0
    cfg = dataclasses.replace(SMALL, read_ahead_max_bytes=0)
    zl = dataclasses.replace(cfg, read_zero_latency=True)
    ms = 1e6
    # sectors 0..49: in LBA order it waits for sector 0 (10 ms) and reads 50 (5 ms);
    # zero latency reads 1..49 at once, sector 0 at 10 ms, then sends 50 in order
    assert _one_read(cfg, 0, 0, 50) == pytest.approx(15.01 * ms, abs=2e3)
    assert _one_read(zl, 0, 0, 50) == pytest.approx(10.1 * ms + 50 * 0.01 * ms, abs=2e3)
    # landing before the read's first sector, or a read spilling to the next track
    # whose first sector passes when it would have: no difference
    for t, a, n in ((0, 50, 10), (int(8.4 * ms), 80, 40)):
        assert _one_read(zl, t, a, n) == _one_read(cfg, t, a, n)
    # a host link slower than the media (200 us a sector here; atlas10k: 99 us on its
    # bus, 18 us on the platter) sends the data in LBA order from the first sector as
    # it comes off: no gain
    slow = dataclasses.replace(cfg, interface_mb_s=512 / 200e-6 / 1e6)
    slow_zl = dataclasses.replace(slow, read_zero_latency=True)
    assert _one_read(slow_zl, 0, 0, 50) == _one_read(slow, 0, 0, 50)


def _writes(cfg, lba, n, flush=False):
    """Completion times (ms) of a write of n sectors at lba submitted at 0 (and of a
    FLUSH right behind it)."""
    from models.device.hdd import HDD
    from models.device.request import FLUSH, WRITE, IORequest
    from models.sim import Simulator

    sim = Simulator()
    dev = HDD(sim, "d", cfg)
    done = []
    dev.on_complete = lambda r: done.append(r.done_ns / 1e6)

    def go(_):
        dev.submit(IORequest(WRITE, lba * 512, n * 512))
        if flush:
            dev.submit(IORequest(FLUSH, 0, 0))
    sim.at(0, go)
    sim.run()
    return done


def test_a_zero_latency_write_goes_on_arrival_once_its_data_is_all_buffered():
    import dataclasses

    from tests.models.device.test_hdd_mech import SMALL

    # SMALL: 10 ms a revolution, 100 sectors a track, 10 us a sector on the link, 0.2 ms
    # write miss overhead, 0.2 ms head switch + 0.3 ms write settle; track 1 (LBA 100)
    # starts 5 sectors (0.5 ms) round
    cfg = dataclasses.replace(SMALL, read_ahead_max_bytes=0)
    zl = dataclasses.replace(cfg, write_zero_latency=True)
    # write-through, 40 sectors on track 1: the data is in by 0.6 ms, the head lands at
    # 0.7 ms on sector 2; in LBA order it waits for sector 0 (10.5 ms) and writes 40
    # (14.5 ms); on arrival it writes 2..39 at once and 0..1 at 10.5 ms
    assert _writes(cfg, 100, 40) == pytest.approx([14.5])
    assert _writes(zl, 100, 40) == pytest.approx([10.7])
    # 60 sectors are still crossing the link (0.8 ms) when the head lands: LBA order
    assert _writes(zl, 100, 60) == _writes(cfg, 100, 60) == pytest.approx([16.5])
    # write-back: the write completes in the buffer (0.52 ms); the FLUSH (0.05 ms)
    # destages it from sector 6 of track 0 at 0.6 ms: done at 10.6 ms, not 15 ms
    wb = dataclasses.replace(cfg, write_cache=True)
    wbz = dataclasses.replace(wb, write_zero_latency=True)
    assert _writes(wb, 0, 50, flush=True) == pytest.approx([0.52, 15.0])
    assert _writes(wbz, 0, 50, flush=True) == pytest.approx([0.52, 10.6])


def test_immediate_buffer_write_imports_as_a_zero_latency_write():
    atlas = ds.read_diskspecs(ds.DATA_DIR / "atlas10k.diskspecs")
    assert int(atlas.params["Immediate buffer write"]) == 1
    assert imp.to_hdd_dict(atlas)["write_zero_latency"] is True
    assert not any("Immediate buffer write" in line for line in imp.unmapped(atlas))
    assert imp.load_hdd_config(imp.CONF_DIR / "disksim_atlas10k.yaml").write_zero_latency
    barracuda = ds.read_diskspecs(ds.DATA_DIR / "barracuda.diskspecs")
    assert imp.to_hdd_dict(barracuda)["write_zero_latency"] is False


def test_an_immediate_buffer_read_disksim_does_not_accept_is_refused(tmp_path, capsys):
    for suffix in (".parv", "_validate.model", "_validate.seek"):
        shutil.copy(ds.DATA_DIR / f"st41601n{suffix}", tmp_path / f"st41601n{suffix}")
    specs = (ds.DATA_DIR / "st41601n.diskspecs").read_text()
    assert "Immediate buffer read = 0" in specs
    (tmp_path / "st41601n.diskspecs").write_text(
        specs.replace("Immediate buffer read = 0", "Immediate buffer read = 3"))
    out = tmp_path / "out.yaml"
    assert imp.main([str(tmp_path / "st41601n.diskspecs"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Immediate buffer read: 3" in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("edit, param", [
    (("Sparing scheme used = 2", "Sparing scheme used = 4"), "Sparing scheme used: 4"),
    (("Sparing scheme used = 2", "Sparing scheme used = 11"), "Sparing scheme used: 11"),
    (("Add. write settling delay = 0.000000", "Add. write settling delay = -5.0"),
     "write_settle_ms"),
])
def test_a_drive_it_cannot_express_is_refused_naming_the_parameter(tmp_path, capsys, edit, param):
    for suffix in (".diskspecs", ".parv", "_validate.seek"):
        shutil.copy(ds.DATA_DIR / f"st41601n{suffix}", tmp_path / f"st41601n{suffix}")
    model = (ds.DATA_DIR / "st41601n_validate.model").read_text()
    assert edit[0] in model
    (tmp_path / "st41601n_validate.model").write_text(model.replace(*edit))
    out = tmp_path / "out.yaml"
    assert imp.main([str(tmp_path / "st41601n.diskspecs"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and param in err[0], err
    assert not out.exists()
