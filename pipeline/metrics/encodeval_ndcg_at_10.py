"""NDCG@10 as EncodEval computes it (the study's IR numbers): ``sklearn.metrics.ndcg_score`` on
the 10 documents retrieved first, and on them only.

Its ideal ranking is made of the relevant documents that were *retrieved*, not of every
relevant one, so a query with many relevant documents of which few made the top 10 scores as
if those few were all there are (2 relevant retrieved at ranks 1 and 2 out of 50 relevant
scores 100, where the standard NDCG@10 of :mod:`ndcg_at_10` gives 35.9). A query with no
relevant document in its top 10 scores 0. Relevance is binary (EncodEval binarises graded
qrels at >= 1). Averaged over queries, in points. Not comparable with :mod:`ndcg_at_10`.

A prediction is a ranking with its scores, ``{"ids": [...], "scores": [...]}`` best first
(a plain list of ids: no ties): documents tied on score share their gains as sklearn does
(``ndcg_score``'s default ``ignore_ties=False``: each tied group's mean gain at each of its
ranks), so the top two tied with the second relevant score 81.55, not 100 or 63.09.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs

CUTOFF = 10


def query_ndcg(ranking: Sequence[str], relevant: set[str], scores: Sequence[float] | None = None) -> float:
    """One query's score in [0, 1]: the top 10's DCG, tied scores sharing their gains, over
    the DCG of its own hits ranked first."""
    gains = [1.0 if document in relevant else 0.0 for document in ranking[:CUTOFF]]
    discounts = [1 / math.log2(rank + 2) for rank in range(len(gains))]
    scores = list(scores[:CUTOFF]) if scores is not None else list(range(len(gains), 0, -1))  # no scores: no ties
    dcg, start = 0.0, 0
    while start < len(gains):
        stop = start + 1
        while stop < len(gains) and scores[stop] == scores[start]:
            stop += 1
        dcg += sum(gains[start:stop]) / (stop - start) * sum(discounts[start:stop])  # (rank order: best first)
        start = stop
    ideal = sum(discounts[: int(sum(gains))])
    return dcg / ideal if ideal else 0.0


def ranking_of(prediction: Sequence[str] | Mapping[str, Sequence]) -> tuple[list[str], list[float] | None]:
    """(ids best first, their scores or None) of a plain ranking or a scored one."""
    if isinstance(prediction, Mapping):
        return list(prediction["ids"]), list(prediction["scores"])
    return list(prediction), None


def compute(predictions: Sequence, references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Rankings per query (scored, or plain ids) against the relevant ids per query -> {"ndcg@10"} in points."""
    check_pairs("encodeval_ndcg_at_10", predictions, references)
    scores = []
    for query, (prediction, relevant) in enumerate(zip(predictions, references)):
        ranking, ranked_scores = ranking_of(prediction)
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"encodeval_ndcg_at_10: query {query}'s ranking lists a document twice")
        if ranked_scores is not None and len(ranked_scores) != len(ranking):
            raise ValueError(f"encodeval_ndcg_at_10: query {query} has {len(ranking)} documents and {len(ranked_scores)} scores")
        scores.append(query_ndcg(ranking, set(relevant), ranked_scores))
    return {"ndcg@10": 100.0 * sum(scores) / len(scores)}


register(Metric("encodeval_ndcg_at_10", "ndcg@10", True, compute, ("scored", "texts")))  # ties as sklearn
