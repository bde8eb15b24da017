"""Driver side of a run or a sweep: execute the specs, write each result as it arrives,
print the DuckDB summary of what was written, report failures."""
from __future__ import annotations

import sys
from typing import Sequence

from .errors import SweepFailed
from .fanout import RayConfig, run_all
from .job import RunOutput
from .sink import write_run
from .spec import RunSpec


def experiment_name(hydra_cfg) -> str:
    """The ``experiment=`` choice in a config's ``hydra`` node (``default`` without one)."""
    from omegaconf import OmegaConf

    choice = OmegaConf.select(hydra_cfg, "runtime.choices.experiment", default=None)
    return str(choice) if choice else "default"


def below_scale_notice(specs: Sequence[RunSpec]) -> str | None:
    """One line naming the experiments of ``specs`` run below their ``meta.min_scale``
    (with the scales), or None when every run is at a valid scale."""
    low: dict[str, tuple[set, float]] = {}
    for s in specs:
        if s.below_valid_scale:
            low.setdefault(s.experiment, (set(), s.min_scale))[0].add(s.run.scale)
    if not low:
        return None
    parts = [f"{exp} at run.scale={', '.join(f'{x:g}' for x in sorted(scales))} "
             f"(min_scale {ms:g})" for exp, (scales, ms) in sorted(low.items())]
    return (f"warning: below the valid scale: {'; '.join(parts)} - the published effect "
            "does not hold there (meta.min_scale in conf/experiment/)")


def run_specs(specs: Sequence[RunSpec], ray: RayConfig | None, label: str = "sweep",
              out=None) -> list[RunOutput]:
    """Run, write, summarise. Raises ``SweepFailed`` (after writing every row) if any
    run failed."""
    out = out or sys.stdout
    outputs: list[RunOutput | None] = [None] * len(specs)

    def on_result(i: int, res: RunOutput) -> None:
        write_run(specs[i].results.dir, res.experiment, res.config_hash, res.tables)
        outputs[i] = res

    run_all(specs, ray, on_result, label)
    if specs and specs[0].results.summary:
        from .query import print_table, sweep_summary

        root = specs[0].results.dir
        hashes = sorted({s.config_hash for s in specs})
        print_table(sweep_summary(root, hashes), out=out,
                    title=f"{len(hashes)} run(s) under {root}/")
    failed = [o for o in outputs if o is None or o.status != "ok"]
    if failed:
        first = next((o for o in failed if o is not None), None)
        detail = ""
        if first is not None:
            err = first.tables["summary"].column("error")[0].as_py()
            detail = f"; first: {err}"
        raise SweepFailed(f"{len(failed)} of {len(specs)} run(s) failed "
                          f"(status/error columns){detail}")
    return outputs  # type: ignore[return-value]
