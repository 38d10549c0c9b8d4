"""Extractive QA with unanswerable questions (SQuAD v2, ReCoRD and their proxy).

Input ``<s> question </s> context </s>``, the context truncated to fit ``max_length``.
Head: a linear layer giving a start and an end logit per token. Position 0 (``<s>``) is
"no answer": unanswerable questions, and answers the truncation cut off, train towards
start = end = 0. A prediction is the best valid span (start <= end, at most
``MAX_ANSWER_TOKENS``, inside the context) when it scores above the null span (0, 0),
else "" (no answer); its text is cut from the context by the tokens' character offsets.
A prediction keeps its token positions too: the official SQuAD F1 (``squad_v2``) compares
texts, EncodEval's (``qa_token_position_f1``, the study's) the positions of the span.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.batch import device_of, pad_batch
from pipeline.finetune.framing import frame, leading
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, hidden_states, register
from pipeline.metrics import Metric

MAX_ANSWER_TOKENS = 30  # the usual SQuAD post-processing limit
NULL = 0  # the position of <s>: start = end = NULL means "no answer"


@dataclass(frozen=True)
class QAExample:
    input_ids: list[int]  # <s> question </s> context </s>
    context_start: int  # position of the first context token
    offsets: list[tuple[int, int]]  # character span in the context of each kept context token
    context: str
    start: int  # target positions; NULL for no answer (unanswerable, or truncated away)
    end: int

    @property
    def context_end(self) -> int:
        """Position of the last kept context token."""
        return self.context_start + len(self.offsets) - 1


def encode_qa(
    question: list[int],
    context: list[int],
    offsets: list[tuple[int, int]],
    text: str,
    answer: tuple[int, int] | None,
    special: tuple[int | None, int],
    max_length: int,
) -> QAExample:
    """Frame one question + context and place the answer's character span [a, b) on tokens.

    question/context: ids without specials; offsets: the context tokens' character spans;
    special: (bos or None, eos). The question keeps at most half of ``max_length``, the context
    what is left. The answer starts on the first token ending after ``a`` and ends on the
    last token starting before ``b``; if the truncated context does not hold it all, the
    target is the null span.
    """
    question = question[: max_length // 2]
    lead = len(leading(special[0]))
    kept = max(0, max_length - len(question) - 2 - lead)
    context, offsets = context[:kept], [tuple(o) for o in offsets[:kept]]
    context_start = lead + len(question) + 1
    start = end = NULL
    if answer is not None and offsets and answer[1] <= offsets[-1][1]:
        a, b = answer
        start = context_start + next(i for i, (_, stop) in enumerate(offsets) if stop > a)
        end = context_start + max(i for i, (begin, _) in enumerate(offsets) if begin < b)
    return QAExample(frame([question, context], *special), context_start, offsets, text, start, end)


def best_span(start_logits: torch.Tensor, end_logits: torch.Tensor, first: int, last: int) -> tuple[int, int] | None:
    """The answer positions (s, e) or None (no answer).

    start_logits, end_logits (T,): one example's logits; the span must satisfy
    first <= s <= e <= last and e - s < MAX_ANSWER_TOKENS, and its score start[s] + end[e]
    must beat the null score start[NULL] + end[NULL].
    """
    if last < first:
        return None
    scores = start_logits[first : last + 1, None] + end_logits[None, first : last + 1]  # (n, n): [s, e]
    n = scores.shape[0]
    valid = torch.ones(n, n, dtype=torch.bool, device=scores.device).triu().tril(MAX_ANSWER_TOKENS - 1)  # s <= e < s + MAX
    scores = scores.masked_fill(~valid, float("-inf"))
    best = int(scores.argmax())
    if scores.flatten()[best] <= start_logits[NULL] + end_logits[NULL]:
        return None
    return first + best // n, first + best % n


@dataclass(frozen=True)
class Answer:
    text: str  # "" for no answer
    positions: tuple[int, ...]  # the span's token positions in the input; () for no answer


def gold_positions(example: QAExample) -> list[int]:
    """The first gold answer's token positions; [] where there is none or truncation cut it."""
    return [] if example.start == NULL else list(range(example.start, example.end + 1))


def answer_text(example: QAExample, span: tuple[int, int] | None) -> str:
    """The context's characters under the span ("" for no answer), outer spaces stripped."""
    if span is None:
        return ""
    begin = example.offsets[span[0] - example.context_start][0]
    stop = example.offsets[span[1] - example.context_start][1]
    return example.context[begin:stop].strip()


class SpanExtractor(nn.Module):
    def __init__(self, encoder: nn.Module, hidden_size: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden_size, 2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """ids, mask (B, T) -> start and end logits (B, T) each, float32, padding at -inf."""
        logits = self.head(hidden_states(self.encoder, input_ids, attention_mask)).float()  # (B, T, 2)
        logits = logits.masked_fill(attention_mask.unsqueeze(-1) == 0, float("-inf"))
        return logits[..., 0], logits[..., 1]


@register("extractive_qa")
class ExtractiveQA(TaskType):
    def encode(self, rows: list[dict]) -> list[QAExample]:
        tokenizer = self.context.tokenizer
        questions = tokenizer([row["question"] for row in rows], add_special_tokens=False)["input_ids"]
        contexts = tokenizer([row["context"] for row in rows], add_special_tokens=False, return_offsets_mapping=True)
        special = (self.context.bos_id, self.context.eos_id)
        examples = []
        for index, row in enumerate(rows):
            answers = row["answers"]
            answer = None
            if answers["text"]:
                answer = (answers["answer_start"][0], answers["answer_start"][0] + len(answers["text"][0]))
            examples.append(
                encode_qa(
                    questions[index],
                    contexts["input_ids"][index],
                    contexts["offset_mapping"][index],
                    row["context"],
                    answer,
                    special,
                    self.context.task.max_length,
                )
            )
        return examples

    def references(self, rows: list[dict]) -> list[list[str]]:
        return [list(row["answers"]["text"]) for row in rows]

    def build_model(self, pretrained: nn.Module) -> SpanExtractor:
        return SpanExtractor(pretrained, pretrained.config.hidden_size)

    def loss(self, model: SpanExtractor, examples: Sequence[QAExample]) -> torch.Tensor:
        start_logits, end_logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model)))
        starts = torch.tensor([e.start for e in examples], device=start_logits.device)
        ends = torch.tensor([e.end for e in examples], device=start_logits.device)
        return (F.cross_entropy(start_logits, starts) + F.cross_entropy(end_logits, ends)) / 2

    def predict(self, model: SpanExtractor, split: EncodedSplit, batch_size: int) -> list[Answer]:
        def answers(indices: list[int]) -> list[Answer]:
            examples = [split.examples[i] for i in indices]
            start_logits, end_logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model)))
            spans = [best_span(start, end, e.context_start, e.context_end) for e, start, end in zip(examples, start_logits, end_logits)]
            return [
                Answer(answer_text(e, span), () if span is None else tuple(range(span[0], span[1] + 1))) for e, span in zip(examples, spans)
            ]

        return in_length_order(split.lengths, batch_size, answers)

    def metric_inputs(self, metric: Metric, split: EncodedSplit, predictions: list[Answer]) -> tuple[list[Any], list[Any]]:
        """Token positions for a metric of positions (EncodEval's), else texts (SQuAD's)."""
        if metric.inputs[0] == "positions":
            return [list(answer.positions) for answer in predictions], [gold_positions(example) for example in split.examples]
        return [answer.text for answer in predictions], split.references
