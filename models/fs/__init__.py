"""Linux filesystems and the page cache: buffered and direct I/O, O_DSYNC / O_SYNC
writes, fsync / fdatasync / sync_file_range / fallocate, journals (ext3, ext4, xfs) and
copy-on-write (zfs).
See ``base.py`` for the API."""
from .base import Filesystem
from .config import (O_DSYNC, O_SYNC, PAGE_BYTES, SYNC_FILE_RANGE_WAIT_AFTER, SYNC_FILE_RANGE_WAIT_BEFORE,
                     SYNC_FILE_RANGE_WRITE, FsConfig, PageCacheConfig)
from .durability import CrashState, FileCrashState
from .file import File
from .pagecache import PageCache



def mount(sim, queue, fs: FsConfig | None = None, page_cache: PageCacheConfig | None = None,
          cache: PageCache | None = None, name: str | None = None) -> Filesystem:
    """A filesystem on ``queue`` (the pipeline's one-liner): ``fs`` defaults to ext4, a
    new page cache of ``page_cache`` unless a shared ``cache`` is given."""
    if cache is None:
        cache = PageCache(sim, page_cache or PageCacheConfig())
    return Filesystem(sim, fs or FsConfig(), queue, cache, name)


__all__ = ["mount", "Filesystem", "FsConfig", "PageCacheConfig", "PageCache", "File", "CrashState",
           "FileCrashState", "O_DSYNC", "O_SYNC", "PAGE_BYTES", "SYNC_FILE_RANGE_WAIT_BEFORE",
           "SYNC_FILE_RANGE_WRITE", "SYNC_FILE_RANGE_WAIT_AFTER"]
