"""Downstream metrics, registered once with their direction.

Scores are reported in points (0-100), as in the study's tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.errors import PipelineError


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool
    compute: Callable[[Sequence, Sequence], float]


def accuracy(predictions: Sequence[int], references: Sequence[int]) -> float:
    if len(predictions) != len(references) or not references:
        raise ValueError(f"accuracy needs equal, non-empty inputs (got {len(predictions)} and {len(references)})")
    return 100.0 * sum(p == r for p, r in zip(predictions, references)) / len(references)


METRICS = {metric.name: metric for metric in [Metric("accuracy", True, accuracy)]}


def get_metric(name: str) -> Metric:
    if name not in METRICS:
        raise PipelineError(f"unknown metric {name!r} (registered: {', '.join(sorted(METRICS))})")
    return METRICS[name]
