"""MyISAM's index file: B-tree fill under random and sequential keys, block placement."""
import numpy as np
import pytest

from models.engine.myisam import KeyFile, KeyFileConfig


def _fill(k: KeyFile):
    return [t.counts[:t.n].sum() / (t.n * k.cap) for t in k.trees]


def test_random_keys_fill_leaves_to_ln2_sequential_keys_to_half():
    """Yao's result for B-trees under uniform random inserts: leaves ~69 % full; an
    AUTO_INCREMENT key splits the right-most leaf in half, leaving them 50 % full."""
    k = KeyFile(KeyFileConfig(), 0, np.random.default_rng(3))
    for _ in range(60_000):
        k.insert()
    pk, *rnd = _fill(k)
    assert pk == pytest.approx(0.5, abs=0.01)
    for f in rnd:
        assert f == pytest.approx(np.log(2), abs=0.02)
    assert k.rows == 60_000
    assert all(t.counts[:t.n].sum() == 60_000 for t in k.trees)


def test_prefilled_table_has_the_steady_state_fill_and_stays_there():
    k = KeyFile(KeyFileConfig(), 2_000_000, np.random.default_rng(1))
    pk, *rnd = _fill(k)
    assert pk == pytest.approx(0.5, abs=0.01)
    for t, f in zip(k.trees[1:], rnd):
        assert f == pytest.approx(np.log(2), abs=0.01)
        assert t.counts[:t.n].sum() == 2_000_000
    for _ in range(20_000):
        k.insert()
    assert all(f == pytest.approx(np.log(2), abs=0.01) for f in _fill(k)[1:])


def test_insert_changes_one_leaf_per_index_and_a_split_adds_a_block_and_its_parent():
    k = KeyFile(KeyFileConfig(random_indexes=3), 0, np.random.default_rng(0))
    for _ in range(5_000):
        before_blocks, before_splits = k.blocks, k.splits
        changed = k.insert()
        assert changed == sorted(changed)
        splits = k.splits - before_splits
        assert len(changed) == 4 + 2 * splits
        assert all(0 <= b < k.blocks for b in changed)
        assert k.blocks >= before_blocks + splits          # new leaves at the end of the file


def test_leaves_of_a_random_index_are_scattered_over_the_whole_file():
    k = KeyFile(KeyFileConfig(), 1_000_000, np.random.default_rng(2))
    leaves = np.sort(k.trees[1].block[:k.trees[1].n])
    # blocks of all four trees interleave: one index's leaves span the file evenly
    assert leaves[0] < 0.02 * k.blocks and leaves[-1] > 0.98 * k.blocks
    assert np.median(np.diff(leaves)) > 2


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="block_bytes"):
        KeyFileConfig(block_bytes=100)
    with pytest.raises(ValueError, match="random_indexes"):
        KeyFileConfig(random_indexes=0, auto_increment_pk=False)
