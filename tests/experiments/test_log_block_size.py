"""Experiment log_block_size (issue 16): the redo log on a buffered ext4 of its own disk,
512- vs 4096-byte log blocks (Percona Server's innodb_log_block_size). A log write
covers whole log blocks from the one holding the first unwritten byte; with 512-byte
blocks its first and last 4 KB page are partly overwritten, and a page that is not
in the page cache is read first (models/fs/buffered.py: read-modify-write). 4096-byte
blocks - and the checkpoint block, one log block at block 1 / 3 of ib_logfile0 - are
whole pages: never a read. Both ways: 512 reads from the log device when its pages
are not cached and not when they are; 4096 never does."""
import pytest

from tests.experiments.helpers import run_point

SMALL = ("run.scale=0.01",)             # 1,500 INSERTs at 8 connections: ~1 s
SIXTY_FOUR_MB = ("page_cache.memory_bytes=64M",)    # the whole 16 MB log stays cached


def _point(block: int, *overrides: str) -> dict:
    return run_point("log_block_size", *SMALL, f"engine.innodb_log_block_size={block}",
                     *overrides)


def _log_reads(r: dict) -> int:
    return r.get("devstat.sdb.completed_reads", 0)


def test_512_byte_blocks_read_the_log_device_when_its_pages_are_not_cached():
    r = _point(512)
    assert r["fsstat.sdb.rmw_reads"] > 0
    assert _log_reads(r) == r["fsstat.sdb.rmw_reads"]     # every read is one RMW read
    assert r["iostat.sdb.r_s"] > 0


def test_4096_byte_blocks_never_read_the_log_device():
    r = _point(4096)
    assert r["fsstat.sdb.rmw_reads"] == 0
    assert _log_reads(r) == 0 and r.get("iostat.sdb.r_s", 0) == 0
    assert r["devstat.sdb.completed_writes"] > 0            # the log was written


def test_512_byte_blocks_do_not_read_when_the_log_is_cached():
    r = _point(512, *SIXTY_FOUR_MB)
    assert r["fsstat.sdb.rmw_reads"] == 0 and _log_reads(r) == 0


@pytest.mark.slow
def test_the_reads_recur_after_the_log_wraps():
    """A 2 x 4 MB log in a 5 MB page cache: each pass over the log evicts the pages the
    next pass writes, so there are more read-modify-write reads than log pages."""
    small_log = ("engine.innodb_log_file_size=4M", "engine.innodb_buffer_pool_size=5M",
                 "page_cache.memory_bytes=5M", "run.scale=0.2")
    r = run_point("log_block_size", *small_log, "engine.innodb_log_block_size=512")
    log_pages = 2 * 4 * 2**20 // 4096
    assert r["innodb.Innodb_lsn_current"] > 2 * 4 * 2**20      # wrapped at least once
    assert r["fsstat.sdb.rmw_reads"] > log_pages
