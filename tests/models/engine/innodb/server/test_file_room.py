"""The server's files on a filesystem without room for them: refused before they are
created - a ValueError naming the key to change - not the allocator's "filesystem full"
after the file's page arrays were sized (``check_room``)."""
import pytest

from models.block import BlockQueue
from models.device.ram import RAM, RAMConfig
from models.engine.cpu import CPUConfig
from models.engine.innodb import fs_open_file, fs_room_bytes, size_text
from models.engine.innodb.server import InnoDBServerConfig, make_innodb_server
from models.fs import Filesystem, PageCache
from models.fs.config import FsConfig, PageCacheConfig
from models.sim import Simulator

from .stack import Router

MB = 2**20
# a 1 GiB device: ext4 keeps 128 MB of metadata and a 128 MB journal, 768 MB for files
DEVICE_BYTES = 1024 * MB


def _fs():
    sim = Simulator()
    q = BlockQueue(sim, RAM(sim, "sda", RAMConfig(capacity_bytes=DEVICE_BYTES)))
    cache = PageCache(sim, PageCacheConfig(memory_bytes="2g"))
    return sim, Filesystem(sim, FsConfig(type="ext4"), q, cache, name="sda")


def _server(**kw):
    sim, fs = _fs()
    cfg = InnoDBServerConfig(**{"innodb_log_file_size": "48M", **kw})
    srv = make_innodb_server(sim, cfg, CPUConfig(cores=4), fs, fs, Router(),
                             fs_open_file(fs, cfg.log_files_cached))
    return srv, fs


def test_a_redo_log_file_without_room_names_innodb_log_file_size_and_is_not_created():
    assert fs_room_bytes(_fs()[1]) == 768 * MB
    with pytest.raises(ValueError, match=r"^innodb_log_file_size: ib_logfile1 \(512M\) does not "
                                         r"fit on the filesystem of sda: 256M left for files; "
                                         r"make innodb_log_file_size or innodb_log_files_in_group "
                                         r"smaller, or put the redo log on a larger device "
                                         r"\(placement.redo_log\)$"):
        _server(innodb_log_file_size="512M")


def test_the_check_comes_before_the_file_and_its_page_arrays():
    _, fs = _fs()
    open_file = fs_open_file(fs)
    open_file("ib_logfile0", 512 * MB)
    before = fs.layout.next_free
    with pytest.raises(ValueError, match="^innodb_log_file_size: ib_logfile1 "):
        open_file("ib_logfile1", 512 * MB)
    assert "ib_logfile1" not in fs.files and fs.layout.next_free == before
    open_file("ib_logfile1", 256 * MB)          # what is left fits exactly
    assert fs_room_bytes(fs) == 0
    open_file("mysql-bin.000001", None)          # a binlog starts empty: no room needed


def test_an_ibdata1_larger_than_the_room_names_innodb_data_file_path():
    with pytest.raises(ValueError, match=r"^innodb_data_file_path: ibdata1 \(2G\) does not fit "
                                         r"on the filesystem of sda: 672M left for files; "):
        _server(innodb_data_file_path="ibdata1:2G:autoextend")


def test_a_table_without_room_names_placement_tablespace_and_keeps_ibdata1s_room():
    srv, fs = _server()
    room = fs_room_bytes(fs)                    # after the 2 x 48M of redo log
    assert room == 672 * MB
    ibdata = srv.files.system_pages * 16384     # created at start, after the tables
    pages = (room - ibdata) // 16384
    srv.create_tablespace("t1", pages // 2)
    with pytest.raises(ValueError, match=rf"^placement.tablespace: t2.ibd "
                                         rf"\({size_text(pages * 16384)}\) does not fit "
                                         rf"on the filesystem of sda: "
                                         rf"{size_text((pages - pages // 2) * 16384)} left for "
                                         r"files; fewer or smaller tables, or "
                                         r"placement.tablespace on a larger device$"):
        srv.create_tablespace("t2", pages)      # would fit, but leave ibdata1 none
    assert "t2.ibd" not in fs.files
    srv.create_tablespace("t3", pages - pages // 2)
    srv.files.open()                            # ibdata1 still fits
    assert fs_room_bytes(fs) == 0


def test_tables_inside_ibdata1_without_room_name_placement_system():
    srv, fs = _server(innodb_file_per_table=False)
    with pytest.raises(ValueError, match=r"^placement.system: ibdata1 with the tables \(684M\) "
                                         r"does not fit on the filesystem of sda: 672M left"):
        srv.create_tablespace("t1", 672 * 64)   # 672M of pages, plus ibdata1's own 12M
    assert "ibdata1" not in fs.files
