"""A judged retrieval task's validation and test (``TaskSpec.judgements``), as the study's IR
datasets are built (EncodEval's ``msmarco``, ``nq`` and ``mldr_en`` loaders): each split's
queries with the ids of their relevant documents, and one corpus of every document judged in
any split, which both splits rank against.

A judgement scored at least ``min_score`` makes a document relevant (graded qrels binarised,
TREC-DL's 0-3 at >= 1); a document judged below it still joins the corpus, as EncodEval's
does, and a query without a relevant document is left out, as EncodEval scores none for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.config import HubSpec, JudgementsSpec
from pipeline.data.sources.hub import load_rows
from pipeline.data.splits import uniform
from pipeline.data.templates import apply_templates
from pipeline.data.text import clean_text
from pipeline.errors import PipelineError

SPLITS = ("validation", "test")


@dataclass(frozen=True)
class JudgedSplits:
    queries: dict[str, list[dict[str, Any]]]  # split -> rows {id, query, relevant: [document ids]}, in judgement order
    documents: list[dict[str, Any]]  # {id, document}: every judged document, in corpus order


def read_judgements(spec: JudgementsSpec, split_seed: int, where: str, raw: bool = False) -> JudgedSplits:
    """Stream the judgements, then the queries and the corpus, keeping what is judged."""
    scores: dict[str, dict[str, dict[str, int]]] = {split: {} for split in SPLITS}  # split -> query -> document -> score
    texts: dict[str, str] = {}  # query id -> its text (from the judgements, or the queries below)
    for row in _rows(spec, spec.qrels, f"{where}.qrels"):
        query = row["query_id"]
        documents, score = scores[row["split"]].setdefault(query, {}), _score(row, where)
        for document in _document_ids(row, spec.document_key, f"{where}.qrels: row {row['id']!r}"):
            documents[document] = max(documents.get(document, score), score)
        if "query" in row:
            texts[query] = row["query"]
    if spec.validation_fraction is not None:
        carved = [query for query in scores["test"] if uniform(split_seed, query) < spec.validation_fraction]
        scores["validation"] = {query: scores["test"].pop(query) for query in carved}
    if spec.queries is not None:
        wanted = {query for split in SPLITS for query in scores[split]}
        texts.update((row["query_id"], row["query"]) for row in _rows(spec, spec.queries, f"{where}.queries") if row["query_id"] in wanted)
    judged = {document for split in SPLITS for documents in scores[split].values() for document in documents}
    documents = [
        {"id": row["document_id"], "document": row["document"] if raw else clean_text(row["document"])}
        for row in _rows(spec, spec.corpus, f"{where}.corpus")
        if row["document_id"] in judged
    ]
    seen: set[str] = set()
    for document in documents:
        if document["id"] in seen:  # which of the two a judgement means is undefined: ranking would need one
            raise PipelineError(f"{where}.corpus: document id {document['id']!r} is listed twice")
        seen.add(document["id"])
    missing = judged - seen
    if missing:
        raise PipelineError(f"{where}.corpus: {len(missing)} judged document(s) not in the corpus, e.g. {min(missing)!r}")
    rows = {split: _query_rows(scores[split], texts, spec.min_score, f"{where}.queries", raw) for split in SPLITS}
    return JudgedSplits(rows, documents)


def _rows(spec: JudgementsSpec, hub: HubSpec, where: str) -> Iterator[dict[str, Any]]:
    """The source's rows, ids as strings (qrels name them as the corpus does), with the
    templates of the fields it maps applied (the query's to the queries, the document's to
    the corpus)."""
    templates = {field: template for field, template in (spec.templates or {}).items() if field in hub.fields}
    for row in load_rows(hub, where):
        row = apply_templates(row, templates, f"{where}: row {row['id']!r}")
        yield {
            key: str(value) if key in ("query_id", "document_id") and not isinstance(value, list) else value for key, value in row.items()
        }


def _document_ids(row: dict[str, Any], document_key: str | None, where: str) -> list[str]:
    value = row["document_id"]
    if not isinstance(value, list):
        return [value]
    if document_key is None or not all(isinstance(item, dict) and document_key in item for item in value):
        raise PipelineError(f"{where} field 'document_id': a list, whose items need the key judgements.document_key ({document_key!r})")
    return [str(item[document_key]) for item in value]


def _score(row: dict[str, Any], where: str) -> int:
    try:
        return int(row.get("score", 1))
    except ValueError:
        raise PipelineError(f"{where}.qrels: row {row['id']!r} field 'score': {row['score']!r} is not an integer") from None


def _query_rows(scores: dict[str, dict[str, int]], texts: dict[str, str], min_score: int, where: str, raw: bool) -> list[dict[str, Any]]:
    rows = []
    for query, documents in scores.items():
        relevant = [document for document, score in documents.items() if score >= min_score]
        if not relevant:
            continue
        if query not in texts:
            raise PipelineError(f"{where}: judged query {query!r} has no text")
        rows.append({"id": query, "query": texts[query] if raw else clean_text(texts[query]), "relevant": relevant})
    return rows
