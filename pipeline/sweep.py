"""Driver-side helpers of a run or a sweep: the experiment's name, the below-valid-scale
notice. (The driver itself is ``fanout.sweep``.)"""
from __future__ import annotations

from typing import Sequence

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
            "does not hold there (meta.min_scale in the experiment's config)")
