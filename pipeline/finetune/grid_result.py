"""One fine-tuning grid point's result: what scores.json lists under ``grid``, and what a
killed job's resume state keeps of each point it finished (:mod:`.resume`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GridResult:
    learning_rate: float
    seed: int
    validation: float  # the metric's headline value, in points
    test: float
    num_steps: int
    seconds: float
    validation_scores: dict[str, float]  # the metric's whole result (NIAH: and per-cell accuracies)
    test_scores: dict[str, float]
    # The headline of each test example in split order, for paired comparisons with another
    # model's on the same examples (the study's released results); None: not a mean over examples.
    test_examples: list[float] | None


Point = tuple[GridResult, dict[str, GridResult]]  # a grid point's result, and those of the tasks scored on its model
