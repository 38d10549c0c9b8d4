"""Exact match of generated answers: the needle-in-a-haystack metric.

Only surrounding whitespace is forgiven (a decoder may emit a leading space or a trailing
newline); case and punctuation count, because the needle's answer is a fixed string the
model has to reproduce.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs


def compute(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    check_pairs("exact_match", predictions, references)
    hits = sum(p.strip() == r.strip() for p, r in zip(predictions, references))
    return {"exact_match": 100.0 * hits / len(references)}


register(Metric("exact_match", "exact_match", True, compute, ("text", "text")))  # generated answer, gold answer
