"""Sequence classification, single texts and sentence pairs (SST-2, MNLI, QQP and their proxies).

Input ``<s> text </s>`` or ``<s> text </s> text_pair </s>`` (longest segment truncated
first); head: mean pooling over real tokens, then linear; cross-entropy; prediction = argmax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.batch import device_of, pad_batch
from pipeline.finetune.framing import frame_truncated, tokenize
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, hidden_states, register
from pipeline.model.pooling import mean_pool


@dataclass(frozen=True)
class ClassificationExample:
    input_ids: list[int]
    label: int


class MeanPoolClassifier(nn.Module):
    def __init__(self, encoder: nn.Module, hidden_size: int, num_labels: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden_size, num_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """ids, mask (B, T) -> logits (B, num_labels)."""
        return self.head(mean_pool(hidden_states(self.encoder, input_ids, attention_mask), attention_mask))


@register("sequence_classification")
class SequenceClassification(TaskType):
    def encode(self, rows: list[dict]) -> list[ClassificationExample]:
        context = self.context
        texts = tokenize(context.tokenizer, [row["text"] for row in rows])
        pairs = [row.get("text_pair") for row in rows]
        second = iter(tokenize(context.tokenizer, [p for p in pairs if p is not None]))
        segments = [[text] if pair is None else [text, next(second)] for text, pair in zip(texts, pairs)]
        max_length = context.task.max_length
        return [
            ClassificationExample(frame_truncated(s, context.bos_id, context.eos_id, max_length), row["label"])
            for s, row in zip(segments, rows)
        ]

    def references(self, rows: list[dict]) -> list[int]:
        return [row["label"] for row in rows]

    def build_model(self, pretrained: nn.Module) -> MeanPoolClassifier:
        return MeanPoolClassifier(pretrained, pretrained.config.hidden_size, len(self.context.label_names))

    def loss(self, model: MeanPoolClassifier, examples: Sequence[ClassificationExample]) -> torch.Tensor:
        logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model)))
        return F.cross_entropy(logits.float(), torch.tensor([e.label for e in examples], device=logits.device))

    def predict(self, model: MeanPoolClassifier, split: EncodedSplit, batch_size: int) -> list[int]:
        def argmax(indices: list[int]) -> list[int]:
            ids, mask = pad_batch([split.examples[i].input_ids for i in indices], self.context.pad_id, device_of(model))
            return model(ids, mask).argmax(-1).tolist()

        return in_length_order(split.lengths, batch_size, argmax)
