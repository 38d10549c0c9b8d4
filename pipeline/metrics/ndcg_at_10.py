"""NDCG@10 and MRR@10 with binary relevance: the retrieval metrics (MS MARCO reports MRR@10, BEIR NDCG@10).

A query's ranking is the list of document ids the model put first; its references are
the ids that are relevant. Gains are 1 for a relevant document and 0 otherwise, discounted
by log2(rank + 1), and normalised by the best possible top 10 (all relevant ones first).
MRR@10 is 1/rank of the first relevant document within the top 10, else 0. Both are
averaged over queries. A query with no relevant document cannot be scored and a ranking
that repeats a document could beat the ideal one, so both raise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.metrics.base import Metric, register
from pipeline.metrics.checks import check_pairs

CUTOFF = 10


def compute(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Ranked document ids per query against the relevant ids per query -> {"ndcg@10", "mrr@10"} in points."""
    check_pairs("ndcg_at_10", predictions, references)
    ndcg = mrr = 0.0
    for query, (ranking, relevant) in enumerate(zip(predictions, references)):
        if isinstance(relevant, str) or not relevant:
            raise ValueError(f"ndcg_at_10: query {query} needs a non-empty list of relevant document ids (got {relevant!r})")
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"ndcg_at_10: query {query}'s ranking lists a document twice")
        relevant_ids = set(relevant)
        hits = [rank for rank, document in enumerate(ranking[:CUTOFF], start=1) if document in relevant_ids]
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(relevant_ids), CUTOFF) + 1))
        ndcg += sum(1 / math.log2(rank + 1) for rank in hits) / ideal
        mrr += 1 / hits[0] if hits else 0.0
    return {"ndcg@10": 100.0 * ndcg / len(references), "mrr@10": 100.0 * mrr / len(references)}


register(Metric("ndcg_at_10", "ndcg@10", True, compute, ("texts", "texts")))  # ranked document ids, relevant ids
