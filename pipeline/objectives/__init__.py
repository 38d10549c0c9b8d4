"""Pretraining objectives, registered by name (:mod:`pipeline.registry`): importing this
package registers every module in it, so a new objective is one new file. Objectives need numpy
alone (their examples become tensors in :mod:`pipeline.batch`), so the registry imports without torch."""

from pipeline.objectives.base import (
    LOSSES_WITH_PARAMETERS,
    OBJECTIVES,
    Kind,
    Objective,
    example_rng,
    kind_of,
    parse_objective,
    registered_kinds,
)
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["LOSSES_WITH_PARAMETERS", "OBJECTIVES", "Kind", "Objective", "example_rng", "kind_of", "parse_objective", "registered_kinds"]
