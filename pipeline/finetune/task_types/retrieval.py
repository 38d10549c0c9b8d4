"""Dense retrieval (MS MARCO and its proxy): one shared encoder for queries and documents.

A text's embedding is the mean of its final hidden states over real tokens, L2-normalised,
so a query-document score is their cosine. Training is contrastive with in-batch
negatives: each query's document is the positive, the batch's other documents the
negatives; cross-entropy over cosines / ``TEMPERATURE``. Evaluation ranks every document
of the split for every query (document ids = row ids) and keeps the top ``RANK_DEPTH``; a
judged split (rows ``{query, relevant}``, the study's IR datasets) ranks the task's judged
documents instead (``TaskContext.documents``), the same corpus for validation and test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.batch import device_of, pad_batch
from pipeline.finetune.framing import frame_truncated, tokenize
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, hidden_states, register
from pipeline.metrics import Metric
from pipeline.model.pooling import mean_pool

TEMPERATURE = 0.05
RANK_DEPTH = 10  # what ndcg@10 / mrr@10 read
SENTENCE_TRANSFORMERS_CAP = 2048  # the study's evaluation inputs: SentenceTransformer.encode's max_seq_length


@dataclass(frozen=True)
class RetrievalExample:
    query_ids: list[int]  # [<s>] query </s> (a judged query: as it is ranked, ``Retrieval.evaluated``)
    document_ids: list[int]  # [<s>] document </s>; empty for a judged query (its documents are the corpus's)


class MeanPoolEmbedder(nn.Module):
    """The encoder as a text embedder: no parameters of its own."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """ids, mask (B, T) -> unit-length embeddings (B, H), float32."""
        return F.normalize(mean_pool(hidden_states(self.encoder, input_ids, attention_mask).float(), attention_mask), dim=-1)


def in_batch_negatives_loss(queries: torch.Tensor, documents: torch.Tensor) -> torch.Tensor:
    """queries, documents (B, H), unit length, row i of each a positive pair -> mean InfoNCE loss."""
    logits = queries @ documents.T / TEMPERATURE  # (B, B): query i against every document of the batch
    return F.cross_entropy(logits, torch.arange(len(queries), device=queries.device))


def rank_documents(queries: torch.Tensor, documents: torch.Tensor, document_ids: Sequence[str], depth: int = RANK_DEPTH) -> list[dict]:
    """queries (Q, H), documents (D, H) -> per query its top ``depth`` documents by dot product,
    best first: ``{"ids": [...], "scores": [...]}`` (the scores tell ties apart for the study's nDCG)."""
    top = (queries @ documents.T).topk(min(depth, len(document_ids)), dim=-1)  # values, indices (Q, depth)
    return [{"ids": [document_ids[j] for j in row], "scores": scores} for row, scores in zip(top.indices.tolist(), top.values.tolist())]


@register("retrieval")
class Retrieval(TaskType):
    def encode(self, rows: list[dict]) -> list[RetrievalExample]:
        if is_judged(rows):
            return [RetrievalExample(query, []) for query in self.evaluated([row["query"] for row in rows])]
        queries = self.framed([row["query"] for row in rows])
        return [RetrievalExample(query, document) for query, document in zip(queries, self.framed([row["document"] for row in rows]))]

    def framed(self, texts: list[str]) -> list[list[int]]:
        """Training inputs, framed as every task's (``<s> text </s>``, or the study's ``text </s>``,
        no BOS: REFERENCE.md section 7's "text + eos"). A fork of EncodEval (``Theodb/EncodEval`` at
        320bad0, ``encodeval/eval_tasks/retrieval_eval.py``, ``get_tokenization_fn``) tokenizes
        ``seq + eos`` with the default special tokens, a BOS first, only where
        ``self.model.__class__.__name__.startswith("EuroBert")``: not the study's ``SLModel``
        checkpoints, and that branch came after the version that wrote the study's results."""
        context = self.context
        return [
            frame_truncated([ids], context.bos_id, context.eos_id, context.task.max_length) for ids in tokenize(context.tokenizer, texts)
        ]

    def evaluated(self, texts: list[str]) -> list[list[int]]:
        """A judged split's queries and documents as they are ranked. In the study's format, as
        EncodEval ranks them, through ``SentenceTransformer.encode``: the tokenizer's own special
        tokens, for Llama-3's ``<|begin_of_text|>`` before the text and nothing after it (no eos,
        though training saw one), cut at 2,048 tokens; otherwise framed as in training."""
        if self.context.input_format != "eos":
            return self.framed(texts)
        bos = self.context.tokenizer.bos_token_id
        return [[bos, *ids][:SENTENCE_TRANSFORMERS_CAP] for ids in tokenize(self.context.tokenizer, texts)]

    def length(self, example: RetrievalExample) -> int:
        return max(len(example.query_ids), len(example.document_ids))

    def references(self, rows: list[dict]) -> list[list[str]]:
        return [row["relevant"] for row in rows] if is_judged(rows) else [[row["id"]] for row in rows]

    def build_model(self, pretrained: nn.Module) -> MeanPoolEmbedder:
        return MeanPoolEmbedder(pretrained)

    def loss(self, model: MeanPoolEmbedder, examples: Sequence[RetrievalExample]) -> torch.Tensor:
        device = device_of(model)
        queries = model(*pad_batch([e.query_ids for e in examples], self.context.pad_id, device))
        documents = model(*pad_batch([e.document_ids for e in examples], self.context.pad_id, device))
        return in_batch_negatives_loss(queries, documents)

    def accumulate(
        self,
        model: MeanPoolEmbedder,
        examples: Sequence[RetrievalExample],
        micro_batch_size: int,
        forward: Callable[[], AbstractContextManager],
        weighting: str = "per_unit",
    ) -> float:
        """The whole batch's in-batch-negatives loss a micro-batch at a time, as sentence-transformers'
        CachedMultipleNegativesRankingLoss (EncodEval's) computes it: every embedding first without
        gradients, the loss and its gradient with respect to the embeddings on the whole batch, then
        each micro-batch embedded again and backpropagated from its cached embedding gradients. The
        negatives stay the whole batch's, so the gradients equal one pass's (up to float rounding)
        whatever the ``weighting``: the loss is the batch's, not a micro-batch's."""
        if micro_batch_size >= len(examples):
            return super().accumulate(model, examples, micro_batch_size, forward)
        chunks = [examples[start : start + micro_batch_size] for start in range(0, len(examples), micro_batch_size)]

        def embedded(texts: list[list[int]]) -> torch.Tensor:
            """Framed texts of one micro-batch -> embeddings (C, H)."""
            with forward():
                return model(*pad_batch(texts, self.context.pad_id, device_of(model)))

        sides = ([[e.query_ids for e in chunk] for chunk in chunks], [[e.document_ids for e in chunk] for chunk in chunks])
        with torch.no_grad():
            queries, documents = (torch.cat([embedded(texts) for texts in side]).requires_grad_() for side in sides)  # (B, H) each
        loss = in_batch_negatives_loss(queries, documents)
        loss.backward()  # gradients with respect to the embeddings only: they are leaves here
        # Each micro-batch of queries, then of documents, embedded again and backpropagated on its own:
        # one micro-batch of texts holds activations at a time.
        for side, cached in zip(sides, (queries, documents), strict=True):
            start = 0
            for texts in side:
                torch.autograd.backward(embedded(texts), cached.grad[start : start + len(texts)])
                start += len(texts)
        return loss.item()

    def predict(self, model: MeanPoolEmbedder, split: EncodedSplit, batch_size: int) -> list[dict]:
        def embed(texts: list[list[int]]) -> torch.Tensor:
            """Framed texts -> embeddings (N, H) in text order."""

            def batch(indices: list[int]) -> list[torch.Tensor]:
                return list(model(*pad_batch([texts[i] for i in indices], self.context.pad_id, device_of(model))))

            return torch.stack(in_length_order([len(t) for t in texts], batch_size, batch))

        queries = embed([e.query_ids for e in split.examples])
        if is_judged(split.rows):
            corpus = self.context.documents
            return rank_documents(queries, embed(self.evaluated([d["document"] for d in corpus])), [d["id"] for d in corpus])
        documents = embed([e.document_ids for e in split.examples])
        return rank_documents(queries, documents, [row["id"] for row in split.rows])

    def metric_inputs(self, metric: Metric, split: EncodedSplit, predictions: list[dict]) -> tuple[list, list]:
        """Scored rankings for a metric that reads ties (the study's nDCG), the ids alone otherwise."""
        ranked = predictions if metric.inputs[0] == "scored" else [prediction["ids"] for prediction in predictions]
        return ranked, split.references


def is_judged(rows: list[dict]) -> bool:
    """Whether a split's queries rank against the task's judged documents (rows ``{query, relevant}``)."""
    return bool(rows) and "relevant" in rows[0]
