"""Downstream metrics, registered once with their headline score and direction.

A task file names its metric (``metric: squad_v2``); ``compute(predictions, references)``
returns every score the metric defines, in points (0-100) as in the study's tables, and
``headline`` names the one the fine-tuning sweep selects on and the report tables show.
Each metric lives in its own module, which documents its exact definition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pipeline.errors import PipelineError
from pipeline.metrics import (
    accuracy,
    encodeval_ndcg_at_10,
    exact_match,
    ndcg_at_10,
    qa_token_position_f1,
    sentence_macro_f1,
    span_f1,
    squad_v2,
)

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
    # (harness_metric.py) types its inputs so.
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


METRICS = {
    metric.name: metric
    for metric in [
        Metric("accuracy", "accuracy", True, accuracy.compute, ("id", "id")),
        Metric("span_f1", "f1", True, span_f1.compute, ("texts", "texts"), mean_of_examples=False),  # one sentence's IOB2 tags
        Metric("squad_v2", "f1", True, squad_v2.compute, ("text", "texts")),  # predicted span ("" = none), gold texts ([] = none)
        Metric("ndcg_at_10", "ndcg@10", True, ndcg_at_10.compute, ("texts", "texts")),  # ranked document ids, relevant ids
        Metric("exact_match", "exact_match", True, exact_match.compute, ("text", "text")),  # generated answer, gold answer
        # The study's own variants (EncodEval's code, ../shared/REFERENCE.md section 7): what a number
        # set beside the study's must be measured with; each module says how it departs from the standard.
        Metric("encodeval_ndcg_at_10", "ndcg@10", True, encodeval_ndcg_at_10.compute, ("scored", "texts")),  # ties as sklearn
        Metric("sentence_macro_f1", "macro_f1", True, sentence_macro_f1.compute, ("texts", "texts")),
        Metric("qa_token_position_f1", "f1", True, qa_token_position_f1.compute, ("positions", "positions")),  # answer token positions
    ]
}


def get_metric(name: str) -> Metric:
    if name not in METRICS:
        raise PipelineError(f"unknown metric {name!r} (registered: {', '.join(sorted(METRICS))})")
    return METRICS[name]
