"""Every published figure (each non-``info`` row of data/reference/published.csv whose
experiment exists) at its own tolerance, at its experiment's own scale
(tests/experiments/published.py). The rows the model is known to miss
(``published.KNOWN_MISSES``) are strict xfails at the published tolerance: fixing one
turns its test into a failure until the set is updated.

E5's rows (minutes of simulation at full size) are in test_e5_published.py, so that
pytest-xdist (``--dist loadfile``) runs them beside the rest."""
import pytest

from tests.experiments import published

ROWS = published.checked_rows()


@pytest.mark.parametrize("row_id", published.params(ROWS, exclude=published.OWN_FILE))
def test_published_figure_within_its_tolerance(row_id):
    published.assert_within(row_id)


def test_known_misses_are_checked_rows():
    """The set names rows CI asserts (a renamed or removed row must leave it too)."""
    assert published.KNOWN_MISSES <= {r.id for r in ROWS}


def test_every_checked_row_of_an_existing_experiment_is_asserted():
    """Nothing is left out: the only checked rows not run are those of experiments that
    do not exist yet."""
    left = {r.id for r in published.ROWS if r.tolerance.checked} - {r.id for r in ROWS}
    assert all(not published.validate.experiment_exists(published.BY_ID[i].experiment)
               for i in left)
