"""Entity-level micro precision, recall and F1 over IOB tags, as seqeval scores them by default.

seqeval's default mode (the conlleval.pl behaviour CoNLL-2003 results are reported with)
reads an ``I-X`` that does not continue an ``X`` entity (at the start of a sentence, after
``O`` or after another type) as the start of a new entity; its strict mode would drop it.
That is also exactly how IOB1 marks spans (raw CoNLL-2003: ``I-X`` opens a span, ``B-X`` only
one right after another ``X`` span), so one reading scores IOB1 and IOB2 tags alike, unconverted.
A predicted entity counts only when its type and exact span match a gold one. With no
predicted entities precision is 0 and with no gold entities recall is 0, as seqeval
reports them (its default ``zero_division="warn"``), so F1 is then 0 too.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs


def _parse(tag: str) -> tuple[str, str]:
    """(prefix, type) of one IOB tag; anything else is a bug upstream, so it raises."""
    if tag == "O":
        return "O", ""
    if tag[:2] in ("B-", "I-") and len(tag) > 2:
        return tag[0], tag[2:]
    raise ValueError(f"span_f1: {tag!r} is not an IOB tag (O, B-TYPE or I-TYPE)")


def entities(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """(type, first, last) of each entity in one sentence, in order; ``last`` is inclusive, as in seqeval.get_entities."""
    found: list[tuple[str, int, int]] = []
    for position, tag in enumerate(tags):
        prefix, kind = _parse(tag)
        if prefix == "I" and found and found[-1][0] == kind and found[-1][2] == position - 1:
            found[-1] = (kind, found[-1][1], position)
        elif prefix != "O":
            found.append((kind, position, position))
    return found


def compute(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Tag names per sentence (``predictions[n][i]`` tags word ``i`` of sentence ``n``) -> scores in points."""
    check_pairs("span_f1", predictions, references)
    predicted, gold = set(), set()
    for sentence, (predicted_tags, gold_tags) in enumerate(zip(predictions, references)):
        if len(predicted_tags) != len(gold_tags):
            raise ValueError(f"span_f1: sentence {sentence} has {len(predicted_tags)} predicted tags and {len(gold_tags)} gold tags")
        predicted.update((sentence, *entity) for entity in entities(predicted_tags))
        gold.update((sentence, *entity) for entity in entities(gold_tags))
    correct = len(predicted & gold)
    precision = correct / len(predicted) if predicted else 0.0
    recall = correct / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": 100.0 * f1, "precision": 100.0 * precision, "recall": 100.0 * recall}


register(Metric("span_f1", "f1", True, compute, ("texts", "texts"), mean_of_examples=False))  # one sentence's IOB tags
