"""The official SQuAD v2.0 evaluation (evaluate-v2.0.py), without its no-answer-probability threshold.

Answers are compared after ``normalize_answer``: lowercase, drop punctuation, drop the
articles a/an/the, collapse whitespace. A question's exact match and token F1 are the best
over its gold answers. Gold answers that normalise to nothing are dropped, and a question
left with none is scored as unanswerable: 1 only when the prediction normalises to nothing
(so "" and also "the." count as abstaining). The HasAns_/NoAns_ split follows the raw gold
list, as the official script does, and a subset with no questions has no keys.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs

ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    text = "".join(char for char in text.lower() if char not in PUNCTUATION)
    return " ".join(ARTICLES.sub(" ", text).split())


def exact(gold: str, prediction: str) -> float:
    return float(normalize_answer(gold) == normalize_answer(prediction))


def token_f1(gold: str, prediction: str) -> float:
    """Bag-of-tokens F1; when either side is empty (a no-answer), 1 if both are, else 0."""
    gold_tokens, predicted_tokens = normalize_answer(gold).split(), normalize_answer(prediction).split()
    if not gold_tokens or not predicted_tokens:
        return float(gold_tokens == predicted_tokens)
    common = sum((Counter(gold_tokens) & Counter(predicted_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def compute(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Predicted answer texts ("" = no answer) against each question's gold texts ([] = unanswerable), in points."""
    check_pairs("squad_v2", predictions, references)
    subsets: dict[str, list[tuple[float, float]]] = {"HasAns": [], "NoAns": []}
    for prediction, answers in zip(predictions, references):
        if isinstance(answers, str):
            raise ValueError(f"squad_v2: a reference is a list of gold answers, not the string {answers!r}")
        golds = [answer for answer in answers if normalize_answer(answer)] or [""]
        scores = max(exact(gold, prediction) for gold in golds), max(token_f1(gold, prediction) for gold in golds)
        subsets["HasAns" if answers else "NoAns"].append(scores)

    def points(rows: list[tuple[float, float]], prefix: str) -> dict[str, float]:
        return {f"{prefix}exact": 100.0 * sum(e for e, _ in rows) / len(rows), f"{prefix}f1": 100.0 * sum(f for _, f in rows) / len(rows)}

    result = points(subsets["HasAns"] + subsets["NoAns"], "")
    for name, rows in subsets.items():
        if rows:
            result.update(points(rows, f"{name}_"))
    return result


register(Metric("squad_v2", "f1", True, compute, ("text", "texts")))  # predicted span ("" = none), gold texts ([] = none)
