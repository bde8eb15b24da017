"""Tablespace allocation (fsp0fsp) and B+trees grown by insert streams."""
import numpy as np
import pytest

from models.engine.innodb.btree import (G_LEVEL, G_NREC, I_CAPL, I_CAPN, MODE_RIGHT, ix,
                                        new_state, page_field, records_per_page)
from models.engine.innodb.btree_insert import insert_sessions
from models.engine.innodb.table import (K_FREE, K_LEAF, K_NODE, K_SEC_LEAF, K_SYSTEM,
                                        TableConfig, build_table)
from models.engine.innodb.fseg import fseg_alloc_free_page
from models.engine.innodb.tablespace import (EXTENT_PAGES, FSEG_FRAG_LIMIT, FSP_NO_DIR,
                                             FSP_UP, H_SIZE, HEADER_SLOTS, OWNER_FREE,
                                             OWNER_SYSTEM, check_space, init_space,
                                             page_owners, space_words)


def _space(max_pages=64 * 64, n_segments=2):
    M = np.zeros(HEADER_SLOTS + space_words(max_pages, n_segments), np.int32)
    init_space(M, HEADER_SLOTS, max_pages, n_segments)
    return M


def _rng(seed=1):
    return np.random.default_rng(seed)


# -- fsp / fseg -----------------------------------------------------------------------
def test_new_space_has_header_bitmap_and_inode_pages():
    M = _space()
    owners = page_owners(M)
    assert M[H_SIZE] == EXTENT_PAGES
    assert list(owners[:4]) == [OWNER_SYSTEM, OWNER_SYSTEM, OWNER_SYSTEM, OWNER_FREE]
    check_space(M, 2)


def test_first_32_pages_of_a_segment_are_fragment_pages_then_whole_extents():
    M = _space()
    pages = [fseg_alloc_free_page(M, 0, 0, FSP_NO_DIR) for _ in range(FSEG_FRAG_LIMIT)]
    # fragment pages come one by one from the first extent (FREE_FRAG), after page 2
    assert pages == list(range(3, 3 + FSEG_FRAG_LIMIT))
    # the 33rd: the segment takes a whole free extent and hands out its first page
    p = fseg_alloc_free_page(M, 0, 0, FSP_NO_DIR)
    assert p % EXTENT_PAGES == 0 and p >= EXTENT_PAGES
    check_space(M, 2)


def test_hinted_page_and_next_free_page_in_the_hinted_extent():
    M = _space()
    for _ in range(FSEG_FRAG_LIMIT):
        fseg_alloc_free_page(M, 0, 0, FSP_NO_DIR)
    first = fseg_alloc_free_page(M, 0, 0, FSP_NO_DIR)
    # case 1: the hinted page itself (free, in the segment's extent)
    assert fseg_alloc_free_page(M, 0, first + 10, FSP_UP) == first + 10
    # case 4: hinted page taken -> first free page after it in the same extent
    assert fseg_alloc_free_page(M, 0, first + 10, FSP_UP) == first + 11
    # another segment never gets pages of this one's extent
    q = fseg_alloc_free_page(M, 1, first + 12, FSP_UP)
    assert q // EXTENT_PAGES != first // EXTENT_PAGES
    check_space(M, 2)


def test_file_grows_one_extent_then_four_and_keeps_free_extents_in_reserve():
    M = _space(max_pages=64 * 256)
    sizes = set()
    for _ in range(64 * 100):
        fseg_alloc_free_page(M, 0, 0, FSP_NO_DIR)
        sizes.add(int(M[H_SIZE]))
    sizes = sorted(sizes)
    steps = np.diff(sizes)
    assert set(steps[np.array(sizes[:-1]) < 32 * 64]) <= {64}
    assert set(steps[np.array(sizes[:-1]) >= 32 * 64]) == {256}
    owners = page_owners(M)
    free_tail = (owners[-3 * 64:] == OWNER_FREE).all()
    assert free_tail, "fsp_reserve_free_extents keeps whole free extents at the end"
    check_space(M, 2)


# -- B+trees ----------------------------------------------------------------------------
def test_records_per_page():
    assert records_per_page(200) == 16256 // 200.5
    assert records_per_page(29) == 16256 // 29.5


def test_sequential_inserts_fill_leaves_and_place_them_in_file_order():
    lay = build_table(TableConfig(table_size="32m", insert_pattern="sequential",
                                  secondary_indexes=0), _rng())
    f = lay.fragmentation()
    # split at the new record: every leaf but the last is full
    assert (lay.leaf_rows[:-1] == lay.cap_leaf).all()
    assert f["leaf_adjacent_share"] > 0.97
    assert f["leaf_backward_share"] == 0.0
    assert lay.rows == lay.leaf_rows.sum()
    # the clustered index root is page 3, as in every file-per-table .ibd
    assert lay.upper_path[0] == 3


def test_random_inserts_leave_leaves_ln2_full():
    """Yao (1978): random inserts with 50/50 splits give ~69 % space utilisation."""
    lay = build_table(TableConfig(table_size="64m", insert_pattern="random",
                                  secondary_indexes=0), _rng())
    fill = lay.fragmentation()["leaf_fill"]
    assert fill == pytest.approx(np.log(2), abs=0.03)
    assert lay.fragmentation()["leaf_adjacent_share"] < 0.02


def test_user_object_history_is_between_sequential_and_random():
    cfgs = {p: TableConfig(table_size="32m", insert_pattern=p, secondary_indexes=0)
            for p in ("sequential", "user_object", "random")}
    adj = {p: build_table(c, _rng()).fragmentation()["leaf_adjacent_share"] for p, c in cfgs.items()}
    assert adj["random"] < adj["user_object"] < adj["sequential"]


def test_loaded_share_keeps_the_loaded_part_in_file_order():
    base = dict(table_size="32m", secondary_indexes=0, old_user_share=0.5)
    f0 = build_table(TableConfig(loaded_share=0.0, **base), _rng()).fragmentation()
    f8 = build_table(TableConfig(loaded_share=0.8, **base), _rng()).fragmentation()
    assert f8["leaf_adjacent_share"] > f0["leaf_adjacent_share"] + 0.3
    assert f8["leaf_fill"] > f0["leaf_fill"]


def test_layout_accounts_for_every_page_and_every_leaf():
    lay = build_table(TableConfig(table_size="32m", secondary_indexes=2, loaded_share=0.5),
                      _rng())
    kinds = np.bincount(lay.page_kind, minlength=6)
    assert lay.n_pages * 16384 >= 32 * 2**20
    assert kinds[K_LEAF] == len(lay.leaves) == len(set(lay.leaves.tolist()))
    assert (lay.page_kind[lay.leaves] == K_LEAF).all()
    assert (lay.page_kind[lay.level1] == K_NODE).all()
    assert kinds[K_SEC_LEAF] > 0 and kinds[K_FREE] > 0 and kinds[K_SYSTEM] >= 3
    # level-1 pages: children contiguous in key order, covering every leaf once
    assert lay.level1_count.sum() == len(lay.leaves)
    assert np.array_equal(lay.level1_first[1:], np.cumsum(lay.level1_count)[:-1])
    f = lay.fragmentation()
    assert sum(f[f"{k}_pages"] for k in ("free", "system", "clustered_leaf", "clustered_nonleaf",
                                         "secondary_leaf", "secondary_nonleaf")) == lay.n_pages


def test_non_leaf_pages_respect_capacity_and_tree_is_consistent():
    M = new_state(64 * 64, [MODE_RIGHT], [20], [8], 1, 1)
    users = np.zeros(4, np.int32)
    lens = np.full(4, 500, np.int32)
    assert insert_sessions(M, users, lens, 10**9, 10**9) == 4
    level = page_field(M, G_LEVEL)
    nrec = page_field(M, G_NREC)
    used = level >= 0
    assert (nrec[used & (level == 0)] <= ix(M, 0, I_CAPL)).all()
    assert (nrec[used & (level > 0)] <= ix(M, 0, I_CAPN)).all()
    assert nrec[used & (level == 0)].sum() == 2000
    assert level.max() >= 2      # 2000 rows / 20 per leaf / 8 per node: three levels
    check_space(M, 2)


def test_build_is_deterministic_and_scales():
    cfg = TableConfig(table_size="64m", loaded_share=0.5)
    a = build_table(cfg, _rng(7), scale=0.5)
    b = build_table(cfg, _rng(7), scale=0.5)
    assert np.array_equal(a.leaves, b.leaves) and a.rows == b.rows
    c = build_table(cfg, _rng(7), scale=0.25)
    assert c.n_pages == pytest.approx(a.n_pages / 2, rel=0.1)


@pytest.mark.parametrize("key, value", [("table_size", "1k"), ("row_bytes", 5),
                                        ("insert_pattern", "zipf"), ("old_user_share", 1.5),
                                        ("loaded_share", 1.0), ("secondary_indexes", -1),
                                        ("session_rows", 0), ("rows_per_user", 2)])
def test_config_errors_name_the_key(key, value):
    with pytest.raises(ValueError, match=f"^{key}:"):
        TableConfig(**{key: value})
