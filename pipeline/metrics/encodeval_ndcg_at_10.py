"""NDCG@10 as EncodEval computes it (the study's IR numbers): ``sklearn.metrics.ndcg_score`` on
the 10 documents retrieved first, and on them only.

Its ideal ranking is made of the relevant documents that were *retrieved*, not of every
relevant one, so a query with many relevant documents of which few made the top 10 scores as
if those few were all there are (2 relevant retrieved at ranks 1 and 2 out of 50 relevant
scores 100, where the standard NDCG@10 of :mod:`ndcg_at_10` gives 35.9). A query with no
relevant document in its top 10 scores 0. Relevance is binary (EncodEval binarises graded
qrels at >= 1). Averaged over queries, in points. Not comparable with :mod:`ndcg_at_10`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.metrics.checks import check_pairs

CUTOFF = 10


def query_ndcg(ranking: Sequence[str], relevant: set[str]) -> float:
    """One query's score in [0, 1]: the top 10's DCG over the DCG of its own hits ranked first."""
    gains = [1.0 if document in relevant else 0.0 for document in ranking[:CUTOFF]]
    dcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains))
    ideal = sum(1 / math.log2(rank + 2) for rank in range(int(sum(gains))))
    return dcg / ideal if ideal else 0.0


def compute(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Ranked document ids per query against the relevant ids per query -> {"ndcg@10"} in points."""
    check_pairs("encodeval_ndcg_at_10", predictions, references)
    for query, ranking in enumerate(predictions):
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"encodeval_ndcg_at_10: query {query}'s ranking lists a document twice")
    scores = [query_ndcg(ranking, set(relevant)) for ranking, relevant in zip(predictions, references)]
    return {"ndcg@10": 100.0 * sum(scores) / len(scores)}
