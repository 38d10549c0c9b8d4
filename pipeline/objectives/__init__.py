"""Pretraining objectives, registered by name. Importing this package registers every
module in it, so a new objective is one new file. Objectives need numpy alone (their
examples become tensors in :mod:`pipeline.batch`), so the registry imports without torch."""

import importlib
import pkgutil

from pipeline.objectives.base import Kind, Objective, example_rng, kind_of, parse_objective, registered_kinds

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Kind", "Objective", "example_rng", "kind_of", "parse_objective", "registered_kinds"]
