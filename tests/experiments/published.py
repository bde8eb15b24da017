"""Every published figure of ``data/reference/published.csv``, simulated in-process with
the validation's own machinery (``pipeline.validate.plan`` composes and validates each
row's case, ``pipeline.validate.evaluate`` compares it with its tolerance), for the tests.

- Each distinct case (experiment + overrides -> one configuration) runs once per test
  session (``tests.experiments.helpers.run_spec``, shared with every other test of the
  same configuration), only when a test asks for one of its rows.
- A case runs at its experiment's own ``run.scale``, as ``pipeline.validate`` runs it.
  Not at ``meta.min_scale``: that is the smallest scale at which an experiment's
  published *effect* holds (E1's speedup at 0.25), while absolute figures such as E1's
  scan times shrink with the table (19 s at 0.25 against the published 75 s).
- ``KNOWN_MISSES`` is the one set of rows the model is known to miss at their published
  tolerance: ``test_published.py`` runs each of them as ``xfail(strict=True)`` and
  ``test_e5_published.py`` (last, after E5's runs) asserts that exactly this set is outside, so a new
  miss and an unexpected fix both fail CI. Tolerances are never widened here.
"""
from __future__ import annotations

from functools import lru_cache

from pipeline import reference, validate
from tests.experiments.helpers import run_spec

# Rows outside their published tolerance on the current model, by mechanism:
KNOWN_MISSES = frozenset({
    # E5 HDD, nr_requests=128: the RAID 1 + BBU does ~1.7x the published w/s
    "E5.hdd.nr128.w_s",
    # E5 HDD, nr_requests=100000: ~1.65x the published merges/s; since a merge's
    # survivor takes the absorbed request's expiry (deadline_merged_requests, 8e2f0fc)
    # merged requests leave earlier and larger: avgrq-sz 1.59x (55.9 vs 35.2, was 1.25x)
    # and w/s 0.49x (991 vs 2,043, was 0.51x)
    "E5.hdd.nr100000.wrqm_s", "E5.hdd.nr100000.avgrq_sz", "E5.hdd.nr100000.w_s",
    # E3 at run.scale 0.02 from the pool a long run leaves (warm_pool_turnovers 3): the
    # reads per New-Order are the published ones (6.6 / 6.8 vs 6.3 / 7.0; writes 9.2 vs
    # 6.6 on the HDD, more single-page doublewrite writes), but
    # the devices serve ~2.7x (RAID 1: 0.49 ms svctm vs 1.35; 1.34 ms per I/O per
    # disk: SPTF over a short-stroked 8.7 GB) and ~3.4x (X25-E, sequential precondition:
    # no GC in 12 s, queue 21 vs the published 4) the published IOPS, so NOTPM is 1.7x /
    # 2.2x (since the warm-started 5.6 page cleaner flushes by age from its first loops;
    # 2.2x / 3.0x before); avgrq-sz within 30 %. The 12 s HDD run starts with the
    # controller's cache empty (README, E3: the published 600 s)
    "E3.notpm.all_hdd", "E3.iostat.all_hdd.r_s", "E3.iostat.all_hdd.w_s",
    "E3.notpm.all_ssd", "E3.iostat.all_ssd.r_s", "E3.iostat.all_ssd.w_s",
    "E3.notpm.ssd_over_hdd",
})

# Experiments whose cases cost more than a few seconds of one core (pytest -m "not slow"
# leaves them out locally; CI runs everything)
SLOW_EXPERIMENTS = frozenset({"lra", "myisam_nr_requests", "dbt2_placement"})

# Experiments whose rows are tested in a file of their own (test_e5_published.py), so a
# parallel run (pytest-xdist --dist loadfile) gives them a worker beside the rest
OWN_FILE = frozenset({"myisam_nr_requests"})

ROWS: tuple[reference.Reference, ...] = tuple(reference.load(reference.default_files()))
BY_ID = {r.id: r for r in ROWS}


def checked_rows() -> list[reference.Reference]:
    """The rows CI asserts: every non-``info`` row whose experiment exists."""
    return [r for r in ROWS if r.tolerance.checked and validate.experiment_exists(r.experiment)]


@lru_cache(maxsize=None)
def _plan(experiment: str) -> dict:
    """``{row id: Case | skip reason}`` for the rows of one experiment (composed once),
    at the experiment's own ``run.scale``."""
    rows = [r for r in ROWS if r.experiment == experiment]
    _, where = validate.plan(rows, None, results_dir="unused-by-tests")
    return where


def _run(case: validate.Case) -> None:
    if case.status != "pending":
        return
    try:
        case.row = run_spec(case.spec)
        case.status = "ok"
    except Exception as ex:   # reported per row, as pipeline.validate does
        case.status, case.error = "failed", f"{type(ex).__name__}: {ex}"


def check(row_id: str) -> validate.Check:
    """Simulate what ``row_id`` needs (its case, or a ratio's operands) and compare."""
    return {c.ref.id: c for c in check_all([row_id])}[row_id]


def case_metrics(row_id: str) -> dict:
    """The summary metrics of the run of ``row_id``'s case (the run ``check`` makes, at
    the same scale), for tests of the mechanism behind a published figure."""
    chk = check(row_id)
    if chk.case is None or chk.case.row is None:
        raise RuntimeError(describe(chk))
    return dict(chk.case.row)


def check_all(row_ids: list[str] | None = None) -> list[validate.Check]:
    """The checks of ``row_ids`` (default: every checked row, ``checked_rows`` and those
    of experiments that do not exist yet) and of the operands they need; ``info`` rows
    only when asked for or needed, so a case no checked row reads is never run."""
    if row_ids is None:
        row_ids = [r.id for r in ROWS if r.tolerance.checked]
    rows = reference.select(list(ROWS), row_ids)
    where: dict = {}
    for r in rows:
        if r.derived:
            continue
        target = _plan(r.experiment).get(r.id) if validate.experiment_exists(r.experiment) \
            else validate.missing_experiment(r.experiment)
        if isinstance(target, validate.Case):
            _run(target)
        where[r.id] = target
    return validate.evaluate(rows, where)


def params(rows, only=None, exclude=frozenset()) -> list:
    """``pytest.param`` per row id (experiments ``only`` / not ``exclude``): slow
    experiments marked ``slow``, known misses ``xfail(strict=True)``."""
    import pytest

    out = []
    for r in rows:
        if (only is not None and r.experiment not in only) or r.experiment in exclude:
            continue
        marks = []
        if r.experiment in SLOW_EXPERIMENTS:
            marks.append(pytest.mark.slow)
        if r.id in KNOWN_MISSES:
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError,
                                           reason="known miss (published.KNOWN_MISSES)"))
        out.append(pytest.param(r.id, marks=marks, id=r.id))
    return out


def assert_within(row_id: str) -> None:
    """The row's figure is within its published tolerance (a failed run is a failure,
    never an expected miss)."""
    import pytest

    chk = check(row_id)
    if chk.state not in ("pass", "fail"):
        pytest.fail(describe(chk))
    assert chk.state == "pass", describe(chk)


def describe(chk: validate.Check) -> str:
    """One line: row, simulated against published at its tolerance (and why not run)."""
    r = chk.ref
    sim = "-" if chk.simulated is None else f"{chk.simulated:.6g}"
    pub = "-" if r.published is None else f"{r.published:g}"
    why = f" ({chk.reason})" if chk.reason else ""
    return (f"{r.id} ({r.kind}): simulated {sim} {r.unit}, published {pub} {r.unit}, "
            f"tolerance {r.tolerance}: {chk.state}{why}")
