"""Property-based tests (hypothesis) of bad input: whatever the override strings or the
config values, the app answers with a result or one line ``error: <key>: ...`` and
exit status 2 - never a traceback, never a hang.

- Override strings go through the whole command line (``main``, Hydra's parser and
  composition, the launcher's checks, validation and a trial build), with
  ``--dry-run`` so that a valid config is not simulated.
- Config values are set straight into a composed config (many more examples per
  second) and validated as the app does (``pipeline.fanout.prepare_run``); anything
  but a ``ConfigError`` (or an exception ``describe`` maps to one) fails the test.
- Every example runs under a wall-clock alarm: a hang fails it instead of blocking.
"""
from __future__ import annotations

import contextlib
import math
import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf, open_dict

from pipeline.errors import describe
from pipeline.fanout import prepare_run
from pipeline.run import main

KEYS = ["run.seed", "run.scale", "run.duration_s", "block.nr_requests", "block.max_sectors_kb",
        "block.scheduler", "block.fifo_batch", "block.read_expire_ms", "workload.bs",
        "workload.iodepth", "workload.rw", "workload.size", "workload.offset",
        "workload.filename", "workload.numjobs", "workload.runtime_s", "workload.rwmixread",
        "workload.iodepth_batch_submit", "device.sda.rpm", "device.sda.queue_depth",
        "device.sda.capacity_bytes", "device.sda.cache_segments", "results.sample_ms",
        "results.dir", "hydra.launcher.ray.num_cpus", "hydra.launcher.ray.max_retries",
        "hydra.launcher.ray.object_store_memory_mb", "placement.data", "engine.type",
        "device.sdb.type", "run.seeed", "block", "workload", "device@device.sda",
        "+device@device.hdd1", "device.sda.members", "experiment"]

ATOMS = st.one_of(
    st.integers(min_value=-2**70, max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["4k", "-1g", "0", "1e99", "1.5", "null", "true", "[]", "[a,b]", "{}",
                     "{a:1}", "sda", "sdz", "hdd_sas_15k", "noop", "deadline", "randread",
                     "nan", "inf", "''", "\"\"", "${run.seed}", "${oops}", "glob(*)",
                     "range(0,3)", "range(0,10000000)", "interval(0,1)", "choice(1,2)",
                     "1,2", "a=b", "\\", "'", "x" * 300, "é", "\x00"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
)
PREFIX = st.sampled_from(["", "", "", "+", "++", "~"])


@contextlib.contextmanager
def alarm(seconds: float):
    """Fail (rather than block) if the body takes longer than ``seconds``."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _check_answer(code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err, err[-2000:]
    assert code in (0, 2), (code, err[-2000:])
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
    else:
        assert "dry run: " in out, out[-2000:]


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(overrides=st.lists(st.tuples(PREFIX, st.sampled_from(KEYS), ATOMS), min_size=1, max_size=3),
       multirun=st.booleans(), raw=st.one_of(st.none(), st.text(max_size=20)))
def test_any_override_strings_give_a_result_or_one_line_exit_2(tmp_path, capfd, overrides, multirun, raw):
    args = [f"{p}{k}={v}" for p, k, v in overrides] + ([raw] if raw is not None else [])
    flags = ["-m"] if multirun else []
    capfd.readouterr()
    with alarm(60):
        code = main([*flags, f"results.dir={tmp_path / 'out'}", "hydra/launcher=serial",
                     "--dry-run", *args])
    out, err = capfd.readouterr()
    _check_answer(code, out, err)


# -- config values, set into a composed config ----------------------------------------------
VALUES = st.one_of(
    st.integers(min_value=-2**65, max_value=2**65),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=10),
    st.sampled_from(["4k", "64k", "1m", "-4k", "1g", "1t", "100t", "0", "read", "randwrite",
                     "noop", "cfq", "sda", "sdb", "/dev/sda"]),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
)
VALUE_KEYS = [k for k in KEYS if "." in k and not k.startswith(("hydra.", "+", "device@"))
              and k not in ("results.dir", "device.sda.members")]


@pytest.fixture(scope="module")
def base_cfg():
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.schema import register

    from .helpers import CONF

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["run.duration_s=0.001"])
    GlobalHydra.instance().clear()
    return cfg


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(VALUE_KEYS), VALUES), min_size=1, max_size=3))
def test_any_config_values_validate_or_raise_a_config_error(base_cfg, changes):
    cfg = OmegaConf.create(OmegaConf.to_container(base_cfg))   # plain, untyped copy
    with alarm(30):
        try:
            with open_dict(cfg):
                for key, value in changes:
                    OmegaConf.update(cfg, key, value, force_add=True)
            spec = prepare_run(cfg, "default", "test")
        except Exception as ex:   # noqa: BLE001 - the property: every error is a config error
            err = describe(ex)
            assert err is not None, f"{type(ex).__name__}: {ex}"
            assert "\n" not in str(err) and str(err).strip(), repr(str(err))
            return
    # a valid config: its parameters are plain scalars (one Parquet column each)
    for k, v in spec.params.items():
        assert v is None or isinstance(v, (bool, int, float, str)), (k, v)
        assert not (isinstance(v, float) and math.isnan(v) and k.startswith("block."))
