"""Where things live on the device: metadata home blocks, the journal, data blocks.

The filesystem occupies the whole block device, in 4 KB blocks:

    [0, 32768)                       metadata home region (128 MB): superblock, group
                                     descriptors, block bitmaps, inode tables,
                                     indirect / extent-tree / btree blocks
                                     (ext4 flex_bg and xfs AG headers also keep these
                                     close together)
    [32768, 32768 + journal)         the journal (jbd/jbd2), xfs log or ZIL region,
                                     written sequentially and circularly
    [data_start, capacity)           data blocks

Data allocation is a bump allocator with a per-file goal (the block after the file's
previous block, as ext3/ext4's goal allocation and xfs's extent allocation do), so
a file written sequentially - or preallocated - is physically contiguous, and
interleaved writers interleave their extents. Freed blocks are not reused (no
fragmentation or free-space search is modelled; zfs's copy-on-write frees are
accounted but not recycled).

Metadata home blocks are identified by kind and number (block bitmap of a 128 MB
group, the inode-table block of an inode (16 inodes of 256 bytes per block), the
indirect / extent block that maps a 4 MB stretch of a file, ...), hashed into the
metadata region.
"""
from __future__ import annotations

GROUP_BLOCKS = 32768         # ext3/ext4 block group: 128 MB of 4 KB blocks
META_REGION_BLOCKS = 32768
INODES_PER_BLOCK = 16
MAP_SPAN_PAGES = 1024        # one indirect block maps 1024 blocks (4 MB)

_SB, _GDT, _BITMAP, _INODE, _MAP = 0, 1, 64, 8448, 16384


class Layout:
    def __init__(self, capacity_bytes: int, journal_pages: int) -> None:
        self.capacity_blocks = capacity_bytes // 4096
        self.journal_start = META_REGION_BLOCKS
        self.journal_blocks = journal_pages
        self.data_start = self.journal_start + journal_pages
        if self.data_start + 1024 > self.capacity_blocks:
            raise ValueError(f"journal_bytes: device of {capacity_bytes} bytes is too small "
                             f"for the metadata region + journal + data")
        self.next_free = self.data_start
        self.allocated_blocks = 0
        self.freed_blocks = 0

    def allocate(self, n: int, goal: int = -1) -> int:
        """First block of ``n`` contiguous new blocks (at ``goal`` if that is free)."""
        start = self.next_free
        if start + n > self.capacity_blocks:
            raise RuntimeError(f"filesystem full: {n} blocks requested, "
                               f"{self.capacity_blocks - start} left")
        self.next_free = start + n
        self.allocated_blocks += n
        return start

    # -- metadata home blocks ------------------------------------------------------------
    @staticmethod
    def superblock() -> int:
        return _SB

    @staticmethod
    def group_desc(block: int) -> int:
        return _GDT + (block // GROUP_BLOCKS // 128) % (_BITMAP - _GDT)

    @staticmethod
    def bitmap(block: int) -> int:
        return _BITMAP + (block // GROUP_BLOCKS) % (_INODE - _BITMAP)

    @staticmethod
    def inode(ino: int) -> int:
        return _INODE + (ino // INODES_PER_BLOCK) % (_MAP - _INODE)

    @staticmethod
    def map_block(ino: int, page: int) -> int:
        """The indirect / extent / bmap-btree block that maps ``page`` of inode ``ino``."""
        return _MAP + (ino * 7919 + page // MAP_SPAN_PAGES) % (META_REGION_BLOCKS - _MAP)
