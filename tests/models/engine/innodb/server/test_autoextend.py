"""Data files that grow (``server/autoextend.py``): the fsp rule of MySQL 5.1-5.6, and
the extension's zero writes and fsync in the server, both ways."""
import itertools

import pytest

from models.engine.innodb.ops import Op, TableDef, Transaction
from models.engine.innodb.server import InnoDBServerConfig
from models.engine.innodb.server.autoextend import Autoextend, FileGrowth

from .stack import build, clients

BIG_ROW = 4000              # 3 rows per leaf: every third insert past the load is a new page


class _Files:
    autoextend = True


def _grow(st: FileGrowth, pages, increment_pages=512):
    """Sizes the file goes through as ``pages`` are allocated one after another."""
    ax = Autoextend(None, _Files(), increment_pages, True)
    sizes = []
    for fp in pages:
        if fp < st.limit and fp < st.size:
            continue
        size, limit = ax._target(st, fp)
        if size > st.size:
            sizes.append(size)
            st.size = size
        st.limit = max(st.limit, limit)
    return sizes


def test_a_new_ibd_grows_page_wise_then_by_1_mb_then_by_4_mb():
    st = FileGrowth(1, False, 4)                    # FIL_IBD_FILE_INITIAL_SIZE
    sizes = _grow(st, range(4, 3000))
    assert sizes[:60] == list(range(5, 65))         # the first extent: one page at a time
    steps = [b - a for a, b in zip(sizes[59:], sizes[60:])]
    below = [s for s, size in zip(steps, sizes[60:]) if size <= 32 * 64]
    above = [s for s, size in zip(steps, sizes[60:]) if size > 32 * 64 + 64]
    assert set(below) == {64} and set(above) == {256}
    # fsp_fill_free_list keeps 4 extents ahead of the free limit
    assert st.size >= 3000


def test_ibdata_grows_by_the_increment():
    for mb, pages in ((8, 512), (64, 4096), (1, 64)):
        st = FileGrowth(0, True, 768)               # 12 MB
        sizes = _grow(st, range(768, 768 + 8192), increment_pages=pages)
        assert {b - a for a, b in zip([768] + sizes, sizes)} == {pages}, mb


def _inserter(table, first_key, per_trx=1):
    keys = itertools.count(first_key)

    def make(rng, i):
        return Transaction(tuple(Op("insert", table, next(keys)) for _ in range(per_trx)))
    return make


def _run(make, tables, seconds=0.3, **kw):
    sim, srv, fs, q = build(tables=tables, **kw)
    clients(sim, srv, 4, make, seconds)
    return srv.status(), srv


def test_a_growing_table_extends_its_file_with_zero_writes_and_fsyncs():
    tdef = TableDef("orders", 3000, BIG_ROW)        # 1,000 leaves: a 16 MB .ibd
    grown, srv = _run(_inserter("orders", 3001), (tdef,), seconds=0.1)
    f = srv.files.files[1]
    pages = srv.tables["orders"].next_free_page
    assert grown["Innodb_rows_inserted"] > 300
    assert grown["Innodb_data_file_extensions"] >= 2
    assert grown["Innodb_data_file_extension_fsyncs"] == grown["Innodb_data_file_extensions"]
    assert grown["Innodb_data_file_extension_writes"] >= grown["Innodb_data_file_extensions"]
    assert grown["Innodb_data_file_extension_pages"] % 64 == 0      # 1 MB steps below 32 MB
    assert f.size_bytes >= pages * 16384                            # written out to its end
    # the same load of changes without growth (updates in place): no extension at all
    same, _ = _run(lambda rng, i: Transaction((Op("update_non_index", "orders",
                                                  int(rng.integers(1, 3001))),)), (tdef,))
    assert same["Innodb_data_file_extensions"] == 0
    assert same["Innodb_data_file_extension_writes"] == 0
    assert same["Innodb_data_file_extension_fsyncs"] == 0


def test_nosync_still_fsyncs_after_the_zeros():
    """``fil_extend_space_to_desired_size`` ends in ``fil_flush``, which does not look
    at ``innodb_flush_method``: ``nosync`` spares commits and checkpoints only."""
    tdef = TableDef("orders", 3000, BIG_ROW)
    grown, _ = _run(_inserter("orders", 3001), (tdef,), seconds=0.1,
                    innodb_flush_method="nosync")
    assert grown["Innodb_data_file_extensions"] >= 2
    assert grown["Innodb_data_file_extension_fsyncs"] == grown["Innodb_data_file_extensions"]


def test_the_increment_sets_how_often_ibdata1_grows():
    """Tables inside ibdata1: the last one grows past its end; 1 MB at a time extends
    several times as often as 8 MB, and writes about as many zeros in all."""
    tdef = TableDef("orders", 1500, BIG_ROW)
    out = {}
    for mb in (1, 8):
        st, _ = _run(_inserter("orders", 1501), (tdef,), seconds=0.15,
                     innodb_file_per_table=False, innodb_autoextend_increment=mb)
        out[mb] = st
    assert out[1]["Innodb_rows_inserted"] > 600
    assert out[1]["Innodb_data_file_extensions"] >= 4 * max(1, out[8]["Innodb_data_file_extensions"])
    assert out[8]["Innodb_data_file_extensions"] >= 1
    assert out[8]["Innodb_data_file_extension_pages"] % 512 == 0
    assert out[1]["Innodb_data_file_extension_pages"] % 64 == 0


@pytest.mark.parametrize("bad", [0, 1001])
def test_the_increment_is_range_checked(bad):
    with pytest.raises(ValueError, match=r"^innodb_autoextend_increment: must be in 1\.\.1000"):
        InnoDBServerConfig(innodb_autoextend_increment=bad)


def test_the_default_increment_follows_the_version():
    assert InnoDBServerConfig(version="5.6").autoextend_increment_mb == 64
    assert InnoDBServerConfig(version="5.5").autoextend_increment_mb == 8
    assert InnoDBServerConfig(version="5.1", innodb_autoextend_increment=16).autoextend_increment_mb == 16
