"""Extractive QA as EncodEval scores it (the study's QA numbers): per question, the F1 of
the predicted answer's token positions against the token positions of the *first* gold
answer, then the mean over questions.

Positions are those of the model's input (``<s> question </s> context </s>``). "No answer"
is position 0 (``<s>``), on both sides: an empty prediction is ``{0}``, and so is a gold
answer the question has none of or that the truncation cut off. So "no answer" predicted for
an unanswerable question scores 100, "no answer" against a real span 0, and a span against
"no answer" 0. Not the official word-level SQuAD F1 of :mod:`squad_v2`: a span one token
off loses that token's share here whatever the words, and only the first gold answer counts.
In points.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs

NO_ANSWER = 0  # the position of <s>, which "no answer" points at


def position_f1(predicted: Sequence[int], gold: Sequence[int]) -> float:
    """F1 in [0, 1] of two sets of token positions, each empty one standing for "no answer"."""
    predicted_set, gold_set = set(predicted) or {NO_ANSWER}, set(gold) or {NO_ANSWER}
    overlap = len(predicted_set & gold_set)
    return 2 * overlap / (len(predicted_set) + len(gold_set))


def compute(predictions: Sequence[Sequence[int]], references: Sequence[Sequence[int]]) -> dict[str, float]:
    """Predicted and first-gold-answer token positions per question -> {"f1"}, in points."""
    check_pairs("qa_token_position_f1", predictions, references)
    return {"f1": 100.0 * sum(position_f1(p, g) for p, g in zip(predictions, references)) / len(predictions)}


register(Metric("qa_token_position_f1", "f1", True, compute, ("positions", "positions")))  # answer token positions
