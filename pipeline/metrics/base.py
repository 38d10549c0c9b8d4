"""What a downstream metric is, and the registry of them (:mod:`pipeline.registry`).

A task file names its metric (``metric: squad_v2``); ``compute(predictions, references)``
returns every score the metric defines, in points (0-100) as in the study's tables, and
``headline`` names the one the fine-tuning sweep selects on and the report tables show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pipeline.registry import Registry

InputKind = Literal["id", "text", "texts", "positions", "scored"]


@dataclass(frozen=True)
class Metric:
    name: str  # registry key used in task files, e.g. "squad_v2"
    headline: str  # the key of compute()'s result that tables report, e.g. "f1"
    higher_is_better: bool
    compute: Callable[[Sequence, Sequence], dict[str, float]]  # (predictions, references) -> scores in points 0-100
    # What one prediction and one reference are: "id" (a class id), "text", or "texts" (a list of
    # strings: tags, ids, gold answers), or "positions" (a list of token positions), or "scored" (a
    # ranking with its scores, {"ids": [...], "scores": [...]}, best first); the evaluate module
    # (pipeline/harness_metric.py) types its inputs so.
    inputs: tuple[InputKind, InputKind]
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


METRICS: Registry[Metric] = Registry("metric")


def register(metric: Metric) -> Metric:
    return METRICS.add(metric.name, metric)


def get_metric(name: str) -> Metric:
    return METRICS[name]  # an unknown name: one line listing the registered ones
