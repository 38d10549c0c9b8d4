"""Token classification as EncodEval scores it (the study's TC numbers): per sentence,
``sklearn.metrics.f1_score(gold, predicted, average="macro")`` over its word tags, ``O``
included, then the mean over sentences.

Each sentence's macro average runs over the tags present in its gold or predicted tags; a tag
with no true positive scores 0 (sklearn's ``zero_division`` default), and a sentence tagged
all ``O`` and predicted all ``O`` scores 100. So the large ``O`` class counts as one tag among
the few of each sentence: not seqeval's entity-level F1 of :mod:`span_f1`, and not comparable
with it. In points.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs


def sentence_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """Macro F1 in [0, 1] over the tags of one sentence (present in either list)."""
    scores = []
    for tag in sorted(set(predicted) | set(gold)):
        true_positives = sum(p == g == tag for p, g in zip(predicted, gold))
        predicted_count, gold_count = list(predicted).count(tag), list(gold).count(tag)
        scores.append(2 * true_positives / (predicted_count + gold_count) if true_positives else 0.0)
    return sum(scores) / len(scores)


def compute(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Tag names per sentence -> {"macro_f1"}: the mean of the sentences' macro F1, in points."""
    check_pairs("sentence_macro_f1", predictions, references)
    scores = []
    for sentence, (predicted, gold) in enumerate(zip(predictions, references)):
        if len(predicted) != len(gold) or not gold:
            raise ValueError(f"sentence_macro_f1: sentence {sentence} has {len(predicted)} predicted and {len(gold)} gold tags")
        scores.append(sentence_f1(predicted, gold))
    return {"macro_f1": 100.0 * sum(scores) / len(scores)}


register(Metric("sentence_macro_f1", "macro_f1", True, compute, ("texts", "texts")))
