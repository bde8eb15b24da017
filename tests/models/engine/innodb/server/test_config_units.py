"""Server config checks and the pure pieces: log margins (log_calc_max_ages), the 5.6
adaptive-flushing percentages, the bulk-loaded layout, the flush list order."""
import pytest

from models.engine.innodb.log_checkpoint import calc_max_ages
from models.engine.innodb.ops import TableDef
from models.engine.innodb.server import InnoDBServerConfig
from models.engine.innodb.server.layout import TableLayout
from tests.models.engine.innodb.server.stack import build


def test_log_margins_follow_log_calc_max_ages():
    cap = 2 * (48 * 2**20 - 2048)
    m = calc_max_ages(cap, 0)
    margin = m["max_checkpoint_age"]
    assert m["max_modified_age_async"] == margin - margin // 8
    assert m["max_modified_age_sync"] == margin - margin // 16
    assert m["max_checkpoint_age_async"] == margin - margin // 32
    assert m["max_modified_age_async"] < m["max_modified_age_sync"] < m["max_checkpoint_age_async"] < margin
    assert 0.75 * cap < margin < 0.81 * cap
    with pytest.raises(ValueError, match="^innodb_log_file_size: the log files are too small"):
        calc_max_ages(1_500_000, 0)
    calc_max_ages(1_500_000 * 2, 0)


@pytest.mark.parametrize("kw,key", [
    ({"innodb_io_capacity": 99}, "innodb_io_capacity"),
    ({"innodb_io_capacity": 400, "innodb_io_capacity_max": 300}, "innodb_io_capacity_max"),
    ({"version": "8.0"}, "version"),
    ({"innodb_lru_scan_depth": 10}, "innodb_lru_scan_depth"),
    ({"innodb_buffer_pool_size": "1M"}, "innodb_buffer_pool_size"),
    ({"innodb_write_io_threads": 65}, "innodb_write_io_threads"),
    ({"innodb_data_file_path": "ibdata1:1M:autoextend"}, "innodb_data_file_path"),
])
def test_out_of_range_variables_name_their_key(kw, key):
    with pytest.raises(ValueError, match=f"^{key}: "):
        InnoDBServerConfig(**kw)


@pytest.mark.parametrize("io_capacity,expected", [(100, 2000), (200, 2000), (1000, 2000),
                                                  (1500, 3000), (5000, 10000)])
def test_unset_io_capacity_max_is_twice_io_capacity_at_least_2000(io_capacity, expected):
    # innobase_init: an unset innodb_io_capacity_max becomes max(2 x io_capacity, 2000),
    # so a 5.6 server with innodb_io_capacity=5000 alone is valid, as in MySQL
    assert InnoDBServerConfig(innodb_io_capacity=io_capacity).io_capacity_max == expected
    assert InnoDBServerConfig(innodb_io_capacity=io_capacity,
                              innodb_io_capacity_max=40000).io_capacity_max == 40000


@pytest.mark.parametrize("version,pool,instances,expected", [
    ("5.6", "2G", None, 8),         # innobase_init: unset (0) means 8
    ("5.6", "2G", 0, 8),            # ... and so does 0 set explicitly
    ("5.6", "1G", None, 8),         # BUF_POOL_SIZE_THRESHOLD is 1 GiB, inclusive
    ("5.6", "1023M", None, 1),      # below it one instance, whatever is set
    ("5.6", "512M", 4, 1),
    ("5.6", "16G", 4, 4),
    ("5.5", "16G", None, 1),        # 5.5's default
    ("5.5", "16G", 8, 8),
    ("5.1", "2G", None, 1),
    ("percona_5.5", "24G", None, 1),
])
def test_buffer_pool_instances_are_the_versions_default_and_one_below_1_gib(
        version, pool, instances, expected):
    cfg = InnoDBServerConfig(version=version, innodb_buffer_pool_size=pool,
                             innodb_buffer_pool_instances=instances)
    assert cfg.buffer_pool_instances == expected


@pytest.mark.parametrize("version,instances", [("5.6", -1), ("5.6", 65), ("5.5", 0),
                                               ("5.1", 0), ("percona_5.5", 0)])
def test_buffer_pool_instances_outside_the_versions_range_is_an_error(version, instances):
    """0 is 5.6's default (8); 5.5's and 5.1's minimum is 1 (their sysvar's)."""
    with pytest.raises(ValueError, match=r"innodb_buffer_pool_instances: must be in [01]\.\.64"):
        InnoDBServerConfig(version=version, innodb_buffer_pool_instances=instances)


def test_the_56_page_cleaners_lru_scan_is_per_instance():
    from models.engine.innodb.buffer.flushing.mysql56 import PageCleaner56

    for pool, depth in (("2G", 8 * 1024), ("512M", 1024)):
        cfg = InnoDBServerConfig(innodb_buffer_pool_size=pool)
        assert PageCleaner56(cfg, None, None, None).lru_depth(True) == depth
        assert PageCleaner56(cfg, None, None, None).lru_depth(False) == 0


def test_bulk_loaded_layout_sysbench_table():
    t = TableLayout(1, TableDef("sbtest1", 1_000_000, 180, ("k",)))
    ix = t.primary
    assert ix.height == 3 and ix.per_leaf == 76        # 15/16 of a page of 203-byte records
    path = ix.path(0)
    assert path[0] == (1 << 32) | 3                     # the root at page 3
    assert ix.path(999_999)[-1] - path[-1] == ix.n_leaves - 1   # leaves contiguous
    assert len(ix.leaves(0, 100)) == 2
    assert 200 < t.n_pages * 16 / 1024 < 260            # MB: ~240 MB for sysbench's 1 M rows


def test_flush_list_is_in_oldest_modification_order_and_pages_stay_until_written():
    sim, srv, fs, q = build(innodb_buffer_pool_size="8M")
    pool = srv.pool
    srv.preload()
    pages = list(pool.old)[:3]
    for lsn, p in zip((100, 200, 300), pages):
        pool.modify(p, lsn)
    pool.modify(pages[0], 400)                          # re-dirtied: keeps its oldest
    assert list(pool.flush_list.items()) == [(pages[0], 100), (pages[1], 200), (pages[2], 300)]
    assert pool.oldest_modification() == 100 and pool.newest[pages[0]] == 400
    assert not pool.replaceable(pages[0]) and pool.replaceable(list(pool.old)[5])


def test_a_change_during_the_write_keeps_the_page_dirty():
    from models.sim import Event
    sim, srv, fs, q = build(innodb_buffer_pool_size="8M")
    pool = srv.pool
    srv.preload()
    a, b = list(pool.old)[:2]
    pool.modify(a, 100)
    pool.modify(b, 110)
    for p in (a, b):
        pool.io_fixed[p] = Event(sim)          # both being written
    pool.modify(a, 500)                        # a changes meanwhile
    pool.write_complete(a, evict=True)
    pool.write_complete(b, evict=True)
    assert pool.flush_list == {a: 500} and pool.resident(a)
    assert not pool.resident(b)                # an LRU flush frees the clean page


@pytest.mark.parametrize("version,size,n,key,limit", [
    ("5.6", "4t", 2, "innodb_log_file_size", "512G"),     # the walkthrough's 8 TB log
    ("5.6", "256G", 2, "innodb_log_file_size", "512G"),   # 512 GB exactly: "must be <"
    ("5.6", "100G", 6, "innodb_log_files_in_group", "512G"),
    ("5.5", "2G", 2, "innodb_log_file_size", "4G"),       # the classic 2 x 2G that 5.5 refuses
    ("5.5", "100M", 41, "innodb_log_files_in_group", "4G"),
    ("5.1", "3G", 2, "innodb_log_file_size", "4G"),
    ("5.5", "1431672832", 3, "innodb_log_files_in_group", "4G"),   # 3 x 87382 pages
])
def test_a_log_group_over_the_versions_limit_is_an_error(version, size, n, key, limit):
    """innobase_start_or_create_for_mysql: 5.1 / 5.5 "combined size of log files must be
    < 4 GB", 5.6 "< 512 GB"; named under the key that took it over."""
    with pytest.raises(ValueError, match=rf"^{key}: the log files' combined size "
                                         rf"\(innodb_log_files_in_group x innodb_log_file_size\) "
                                         rf"must be < {limit} on {version}, got {n} x {size}$"):
        InnoDBServerConfig(version=version, innodb_log_file_size=size,
                           innodb_log_files_in_group=n)


@pytest.mark.parametrize("version,size,n", [
    ("5.6", "255G", 2), ("5.6", "5G", 100), ("5.5", "2047M", 2), ("5.1", "1G", 3),
    # in whole 16K pages, as InnoDB counts (srv_log_file_size): 3 x 1431656448 bytes is
    # over 4G, but 3 x its 87381 whole pages is not
    ("5.5", "1431656448", 3),
    # Percona Server lifts the 4 GB limit on 64-bit builds (the manual's innodb_log_file_size)
    ("percona_5.5", "4G", 2), ("percona_5.1", "1t", 2),
])
def test_a_log_group_within_the_versions_limit_is_valid(version, size, n):
    cfg = InnoDBServerConfig(version=version, innodb_log_file_size=size,
                             innodb_log_files_in_group=n)
    assert cfg.redo().innodb_log_files_in_group == n


@pytest.mark.parametrize("version", ["5.1", "5.5", "5.6"])
def test_all_o_direct_is_refused_outside_percona_server(version):
    with pytest.raises(ValueError, match=r"^innodb_flush_method: ALL_O_DIRECT is a Percona "
                                         rf"Server value .*, not of version '{version}'$"):
        InnoDBServerConfig(version=version, innodb_flush_method="ALL_O_DIRECT")


@pytest.mark.parametrize("version", ["percona_5.1", "percona_5.5"])
def test_all_o_direct_opens_percona_servers_log_files_o_direct_too(version):
    cfg = InnoDBServerConfig(version=version, innodb_flush_method="ALL_O_DIRECT")
    assert cfg.data_direct and cfg.data_fsync
    assert cfg.redo().innodb_flush_method == "ALL_O_DIRECT"
