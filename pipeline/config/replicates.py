"""Pretraining seeds as names: replicate ``i`` of a run is the same objective, size and
budget trained from the initial weights of seed ``config.seed + i``, reading the blocks in
that seed's order (MultiBERTs' unit of variation: a CLM-vs-MLM claim generalises over
pretraining seeds, not over fine-tuning seeds of one pretrained model).

Replicate 0 keeps the plain name (``clm``, ``random``), so a one-seed configuration names
its runs as before; replicate ``i > 0`` is ``{name}_r{i}`` (``clm_r1``, ``random_r2``).
Every stage treats a replicate as a run of its own; the report pools the replicates of one
*arm* (``clm`` at ``tiny``) into one estimate whose interval is over pretraining seeds.
"""

from __future__ import annotations

import re

RANDOM_INIT = "random"  # the objective name of the untrained baseline (fine-tuned from the initial weights)

_REPLICATE = re.compile(r"^(?P<arm>.+)_r(?P<index>[1-9][0-9]*)$")


def replicate_name(name: str, index: int) -> str:
    """The run name of replicate ``index`` of ``name``."""
    return name if index == 0 else f"{name}_r{index}"


def arm_of(name: str) -> tuple[str, int]:
    """(arm, replicate index) of a run name: ``clm_r2`` -> (``clm``, 2), ``clm`` -> (``clm``, 0)."""
    match = _REPLICATE.match(name)
    return (match["arm"], int(match["index"])) if match else (name, 0)


def is_replicate_name(name: str) -> bool:
    """Whether ``name`` reads as a replicate (so a config may not give it to an objective)."""
    return _REPLICATE.match(name) is not None


def is_random_init(name: str) -> bool:
    """Whether a run name is the untrained baseline, of any replicate."""
    return arm_of(name)[0] == RANDOM_INIT
