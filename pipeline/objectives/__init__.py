"""Pretraining objectives, registered by name. Importing this package registers them all."""

from pipeline.objectives import clm, mlm  # noqa: F401  (registration side effect)
from pipeline.objectives.base import (
    IGNORE,
    Batch,
    Example,
    Objective,
    example_rng,
    parse_objective,
    registered_kinds,
)

__all__ = ["IGNORE", "Batch", "Example", "Objective", "example_rng", "parse_objective", "registered_kinds"]
