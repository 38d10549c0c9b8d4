"""Accuracy of class predictions: the sequence-classification metric."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs


def compute(predictions: Sequence[int], references: Sequence[int]) -> dict[str, float]:
    check_pairs("accuracy", predictions, references)
    return {"accuracy": 100.0 * sum(p == r for p, r in zip(predictions, references)) / len(references)}


register(Metric("accuracy", "accuracy", True, compute, ("id", "id")))
