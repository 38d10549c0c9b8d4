"""Downstream metrics, registered once with their headline score and direction.

A task file names its metric (``metric: squad_v2``); ``compute(predictions, references)``
returns every score the metric defines, in points (0-100) as in the study's tables, and
``headline`` names the one the fine-tuning sweep selects on and the report tables show.
Each metric lives in its own module, which documents its exact definition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.errors import PipelineError
from pipeline.metrics import accuracy, exact_match, ndcg_at_10, span_f1, squad_v2


@dataclass(frozen=True)
class Metric:
    name: str  # registry key used in task files, e.g. "squad_v2"
    headline: str  # the key of compute()'s result that tables report, e.g. "f1"
    higher_is_better: bool
    compute: Callable[[Sequence, Sequence], dict[str, float]]  # (predictions, references) -> scores in points 0-100
    # Whether the headline is the mean over examples of its value on each one (accuracy, SQuAD F1,
    # NDCG per query), so that two models can be compared example by example; entity-level
    # F1 pools its counts over the corpus and is not.
    mean_of_examples: bool = True

    def per_example(self, predictions: Sequence, references: Sequence) -> list[float] | None:
        """The headline of each example alone, in points (their mean is the headline); None
        where the metric is not a mean over examples."""
        if not self.mean_of_examples:
            return None
        return [self.compute([prediction], [reference])[self.headline] for prediction, reference in zip(predictions, references)]


METRICS = {
    metric.name: metric
    for metric in [
        Metric("accuracy", "accuracy", True, accuracy.compute),
        Metric("span_f1", "f1", True, span_f1.compute, mean_of_examples=False),
        Metric("squad_v2", "f1", True, squad_v2.compute),
        Metric("ndcg_at_10", "ndcg@10", True, ndcg_at_10.compute),
        Metric("exact_match", "exact_match", True, exact_match.compute),
    ]
}


def get_metric(name: str) -> Metric:
    if name not in METRICS:
        raise PipelineError(f"unknown metric {name!r} (registered: {', '.join(sorted(METRICS))})")
    return METRICS[name]
