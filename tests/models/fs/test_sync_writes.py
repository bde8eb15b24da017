"""O_DSYNC / O_SYNC writes: the write() does the durability step of fdatasync / fsync
for what it wrote before it returns - the same I/O, in the same order."""
import pytest

from models.fs import O_DSYNC, O_SYNC
from tests.models.fs.helpers import run_thread, stack, trace

FS_TYPES = ("ext3", "ext4", "xfs", "zfs")
PREP = {"append": "none", "overwrite": "zero_fill"}


def _run(fs_type, kind, write, **kw):
    """Two 8 KB writes (at 0 and 8 KB) done by ``write(fs, f, offset)``; returns the
    device trace, the stack and the latency of each write call."""
    sim, dev, q, fs = stack(fs_type, **kw)
    f = fs.create("f", 1 << 20 if kind == "overwrite" else 0, PREP[kind])
    lat = []

    def thread():
        for off in (0, 8192):
            t0 = sim.now_ns
            yield from write(fs, f, off)
            lat.append(sim.now_ns - t0)

    run_thread(sim, thread())
    return trace(fs, dev), fs, lat


def _sync_write(sync, direct=False):
    def write(fs, f, off):
        yield fs.pwrite(f, off, 8192, direct=direct, sync=sync)
    return write


def _write_then(call, direct=False):
    def write(fs, f, off):
        yield fs.pwrite(f, off, 8192, direct=direct)
        yield getattr(fs, call)(f)
    return write


@pytest.mark.parametrize("kind", ["append", "overwrite"])
@pytest.mark.parametrize("fs_type", FS_TYPES)
def test_o_dsync_write_issues_exactly_what_write_plus_fdatasync_does(fs_type, kind):
    synced, fs, lat = _run(fs_type, kind, _sync_write(O_DSYNC))
    plain, _, _ = _run(fs_type, kind, _write_then("fdatasync"))
    assert synced == plain and synced
    assert fs.cache.nr_dirty == (4 if fs_type == "zfs" else 0)   # zfs: in the intent log
    # durable when write() returns - unless ext3's barrier=0 left it in the volatile
    # device cache
    assert (fs.crash_state()["f"].lost_bytes == 0) == fs.cfg.barrier
    assert min(lat) >= 100_000                           # waited for the device


@pytest.mark.parametrize("kind", ["append", "overwrite"])
@pytest.mark.parametrize("fs_type", FS_TYPES)
def test_o_sync_write_issues_exactly_what_write_plus_fsync_does(fs_type, kind):
    kw = {"osync_is_dsync": False} if fs_type == "ext3" else {}
    synced, fs, _ = _run(fs_type, kind, _sync_write(O_SYNC), **kw)
    plain, _, _ = _run(fs_type, kind, _write_then("fsync"), **kw)
    assert synced == plain and synced
    assert (fs.crash_state()["f"].lost_bytes == 0) == fs.cfg.barrier


@pytest.mark.parametrize("fs_type", ["ext3", "ext4", "xfs"])
def test_o_sync_and_o_dsync_differ_only_when_metadata_changes(fs_type):
    """An append changes size and allocation: both commit the journal, the same I/O.
    An overwrite changes only the timestamps: O_DSYNC writes the data (and flushes
    with barriers), O_SYNC also commits the inode - every write on ext4 / xfs
    (timestamps per jiffy), the first of the second on ext3 (one-second
    timestamps)."""
    kw = {"osync_is_dsync": False} if fs_type == "ext3" else {}
    append = {s: _run(fs_type, "append", _sync_write(s), **kw) for s in (O_DSYNC, O_SYNC)}
    assert append[O_DSYNC][0] == append[O_SYNC][0]
    assert append[O_DSYNC][1].journal.commits == append[O_SYNC][1].journal.commits == 2
    over = {s: _run(fs_type, "overwrite", _sync_write(s), **kw) for s in (O_DSYNC, O_SYNC)}
    barrier = [("flush",)] if fs_type != "ext3" else []
    assert over[O_DSYNC][0] == ([("write", "data", 8192, False)] + barrier) * 2
    assert over[O_DSYNC][1].journal.commits == 0
    assert over[O_SYNC][1].journal.commits == (1 if fs_type == "ext3" else 2)
    assert [e for e in over[O_SYNC][0] if e[:2] == ("write", "data")] == \
        [("write", "data", 8192, False)] * 2


def test_ext3_of_rhel5_gives_o_dsync_for_o_sync():
    """Before 2.6.33 O_SYNC had O_DSYNC's value: "For now, when the user asks for
    O_SYNC, we'll actually give O_DSYNC" - no commit for an overwrite."""
    osync, fs, _ = _run("ext3", "overwrite", _sync_write(O_SYNC))
    dsync, _, _ = _run("ext3", "overwrite", _sync_write(O_DSYNC))
    assert osync == dsync == [("write", "data", 8192, False)] * 2
    assert fs.journal.commits == 0


@pytest.mark.parametrize("kind", ["append", "overwrite"])
@pytest.mark.parametrize("fs_type", ["ext3", "ext4", "xfs"])
def test_o_direct_o_dsync_write_is_the_direct_write_then_fdatasync(fs_type, kind):
    """O_DIRECT | O_DSYNC: the bios go straight to the device, then the fdatasync step
    (an append's unwritten-extent conversion and size committed; an overwrite only
    flushed, with barriers)."""
    synced, fs, _ = _run(fs_type, kind, _sync_write(O_DSYNC, direct=True))
    plain, _, _ = _run(fs_type, kind, _write_then("fdatasync", direct=True))
    assert synced == plain
    assert synced[0] == ("write", "data", 8192, False)
    if kind == "overwrite":
        assert synced == ([("write", "data", 8192, False)]
                          + ([("flush",)] if fs_type != "ext3" else [])) * 2
    assert (fs.crash_state()["f"].lost_bytes == 0) == fs.cfg.barrier


def test_plain_write_returns_before_the_device_and_a_crash_loses_it():
    _t, fs, lat = _run("ext4", "append", _sync_write(0))
    assert max(lat) < 100_000 and fs.crash_state()["f"].lost_bytes == 16384


def test_pwrite_rejects_unknown_sync_flags():
    sim, dev, q, fs = stack("ext4")
    f = fs.create("f")
    with pytest.raises(ValueError, match="^sync:"):
        fs.pwrite(f, 0, 4096, sync=1)
