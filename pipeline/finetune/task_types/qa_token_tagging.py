"""Extractive QA as the study runs it (EncodEval's): every token tagged "in the answer" or not.

The input is ``"Question: {question}\\nContext: "`` followed by the context and eos, no special
tokens added (``tokenizer(prefix, context + eos, add_special_tokens=False,
truncation="only_second")``: the context, eos included, is cut from its end). A token classifier
with two labels is trained with label 1 on every context token of the *first* gold answer and 0
on every other token, question and eos included. The prediction is every position tagged 1,
scored against the gold positions by :mod:`pipeline.metrics.qa_token_position_f1`, where an
empty set on either side is "no answer". A context token belongs to the answer when its
character span overlaps the answer's: every token from the answer's first character to its last,
a token of spaces alone inside it included (Llama-3's " " before a number), and the token that
carries the space before the answer's first word. An answer the truncation cuts is tagged where
it remains; one cut whole is "no answer".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.batch import device_of, pad_batch, pad_sequences
from pipeline.example import IGNORE
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, labelled_positions, register
from pipeline.finetune.task_types.token_classification import TokenClassifier

PREFIX = "Question: {question}\nContext: "
IN_ANSWER, OUTSIDE_ANSWER = 1, 0


@dataclass(frozen=True)
class TaggedQAExample:
    input_ids: list[int]  # prefix tokens, context tokens, eos (cut from the end when too long)
    labels: list[int]  # per position: 1 on the first gold answer's tokens, 0 elsewhere
    gold: list[int]  # the positions labelled 1: [] for no answer, or an answer truncated away


def answer_positions(offsets: Sequence[tuple[int, int]], answer: tuple[int, int] | None, first: int) -> list[int]:
    """The positions (the context's tokens start at ``first``) of the tokens whose character
    spans overlap the answer's [a, b); [] without an answer."""
    if answer is None:
        return []
    a, b = answer
    return [first + index for index, (begin, end) in enumerate(offsets) if begin < b and a < end]


@register("qa_token_tagging")
class QATokenTagging(TaskType):
    def encode(self, rows: list[dict]) -> list[TaggedQAExample]:
        context = self.context
        tokenizer = context.tokenizer
        prefixes = tokenizer([PREFIX.format(question=row["question"]) for row in rows], add_special_tokens=False)["input_ids"]
        passages = tokenizer([row["context"] for row in rows], add_special_tokens=False, return_offsets_mapping=True)
        examples = []
        for index, row in enumerate(rows):
            prefix = prefixes[index]
            kept = max(0, context.task.max_length - len(prefix))  # "only_second": the context (+ eos) is cut, never the question
            second = [*passages["input_ids"][index], context.eos_id][:kept]
            offsets = passages["offset_mapping"][index][:kept]  # the context tokens kept (eos has none)
            answers = row["answers"]
            answer = None
            if answers["text"]:
                answer = (answers["answer_start"][0], answers["answer_start"][0] + len(answers["text"][0]))
            gold = answer_positions(offsets, answer, len(prefix))  # the kept tokens only: a cut answer is tagged where it remains
            labels = [OUTSIDE_ANSWER] * (len(prefix) + len(second))
            for position in gold:
                labels[position] = IN_ANSWER
            examples.append(TaggedQAExample([*prefix, *second], labels, gold))
        return examples

    def references(self, rows: list[dict]) -> list[list[str]]:
        return [list(row["answers"]["text"]) for row in rows]

    def build_model(self, pretrained: nn.Module) -> TokenClassifier:
        return TokenClassifier(pretrained, pretrained.config.hidden_size, 2)

    def loss_units(self, examples: Sequence) -> int:
        return labelled_positions(examples)

    def loss(self, model: TokenClassifier, examples: Sequence[TaggedQAExample]) -> torch.Tensor:
        logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model)))  # (B, T, 2)
        labels = pad_sequences([e.labels for e in examples], IGNORE, logits.device)  # (B, T), padding carries none
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)

    def predict(self, model: TokenClassifier, split: EncodedSplit, batch_size: int) -> list[list[int]]:
        def tagged(indices: list[int]) -> list[list[int]]:
            examples = [split.examples[i] for i in indices]
            best = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model))).argmax(-1).tolist()  # (B, T)
            return [[p for p in range(len(e.input_ids)) if row[p] == IN_ANSWER] for row, e in zip(best, examples)]

        return in_length_order(split.lengths, batch_size, tagged)

    def metric_inputs(self, metric, split: EncodedSplit, predictions: list[list[int]]) -> tuple[list, list]:
        """Predicted and gold token positions (the only metric this type's predictions serve)."""
        return predictions, [example.gold for example in split.examples]
