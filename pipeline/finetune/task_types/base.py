"""What a task type is, and the registry the fine-tuning sweep picks one from.

The sweep (:mod:`pipeline.finetune.sweep`) runs every task the same way: encode each split
once, then for every (LR, seed) point restore the pretrained weights, wrap them in a fresh
model, step on ``loss`` over length-grouped batches, and score ``predict``'s output with the
task's metric. What differs between task types is only what this class declares: how rows
become token ids, what sits on top of the backbone, the loss of a batch and how model
outputs become the predictions the metric compares with the references. A new task type
is one new module in this package.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from pipeline.config import InputFormat, TaskSpec
from pipeline.example import IGNORE, Attention
from pipeline.finetune.task_data import EncodedSplit
from pipeline.metrics import Metric
from pipeline.model.backbone import load_language_model
from pipeline.registry import Registry


@dataclass(frozen=True)
class TaskContext:
    """Everything fixed for a whole sweep besides the rows."""

    task: TaskSpec
    stats: dict  # the prepared task's stats.json ("labels": label or tag names for SC and TC)
    tokenizer: Any  # the checkpoint's fast tokenizer
    attention: Attention  # finetuning.attention: "bidirectional", or "causal" for the CLM-side ablation
    objective_kind: str  # the pretraining objective's kind, or "random" for the untrained baseline
    input_format: InputFormat = "bos_eos"  # finetuning.input_format: "eos" frames as the study, without <s>
    documents: tuple[dict, ...] = ()  # a judged retrieval task's corpus ({id, document}); empty for every other task

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id

    @property
    def bos_id(self) -> int | None:
        """The token before an input's first segment; None in the study's format (text + eos)."""
        return None if self.input_format == "eos" else self.tokenizer.bos_token_id

    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def label_names(self) -> list[str]:
        return self.stats["labels"]


class TaskType(ABC):
    """One task type; an instance serves one sweep (one model on one task)."""

    name: ClassVar[str]  # the TaskSpec.type it implements, set by @register

    def __init__(self, context: TaskContext):
        self.context = context

    @property
    def attention(self) -> Attention:
        """The attention pattern fine-tuning runs under (scores.json records it)."""
        return self.context.attention

    def load_pretrained(self, checkpoint: str) -> nn.Module:
        """The module whose pretrained weights every grid point starts from: by default the
        backbone without its LM head, under the fine-tuning attention."""
        return load_language_model(checkpoint, self.attention).base_model

    def encode_split(self, rows: list[dict]) -> EncodedSplit:
        examples = self.encode(rows)
        return EncodedSplit(rows, examples, [self.length(e) for e in examples], self.references(rows))

    @abstractmethod
    def encode(self, rows: list[dict]) -> list[Any]:
        """Token ids and targets of every row (called once per split per sweep)."""

    def length(self, example: Any) -> int:
        """Tokens of an example, for length-grouped batches."""
        return len(example.input_ids)

    @abstractmethod
    def references(self, rows: list[dict]) -> list[Any]:
        """What the task's metric compares the predictions with, one per row."""

    @abstractmethod
    def build_model(self, pretrained: nn.Module) -> nn.Module:
        """A fresh model around ``pretrained`` (new head weights drawn from the global seed)."""

    @abstractmethod
    def loss(self, model: nn.Module, examples: Sequence[Any]) -> torch.Tensor:
        """Mean training loss (scalar, float32) of one batch of encoded examples."""

    def loss_units(self, examples: Sequence[Any]) -> int:
        """How many terms :meth:`loss` averages over for ``examples``: one per example; a per-token
        loss's labelled tokens (weighting micro-batches by it makes their sum the batch's mean)."""
        return len(examples)

    def accumulate(
        self,
        model: nn.Module,
        examples: Sequence[Any],
        micro_batch_size: int,
        forward: Callable[[], AbstractContextManager],
        weighting: str = "per_unit",
    ) -> float:
        """Backpropagate the batch's mean loss a micro-batch at a time (gradients accumulate on the
        parameters), each pass under ``forward()`` (autocast); returns the batch's mean loss.
        ``weighting`` (FinetuningSpec.accumulated_loss): each micro-batch weighed by its labelled
        units ("per_unit", the exact mean), or equally ("per_micro_batch", transformers' Trainer).

        The micro-batches' losses are summed on the device (in float64, as a Python float would sum
        them) and read once: a read per micro-batch would make the host wait for each backward before
        it queues the next forward, where it could be padding and launching while the GPU works."""
        chunks = [examples[start : start + micro_batch_size] for start in range(0, len(examples), micro_batch_size)]
        units = [self.loss_units(chunk) for chunk in chunks]
        total = sum(units)
        value = None
        for chunk, chunk_units in zip(chunks, units, strict=True):
            if chunk_units == 0:  # nothing labelled here (a mean over nothing is NaN)
                continue
            weight = chunk_units / total if weighting == "per_unit" else 1 / len(chunks)
            with forward():
                loss = self.loss(model, chunk) * weight
            loss.backward()
            term = loss.detach().double()
            value = term if value is None else value + term
        return 0.0 if value is None else value.item()

    @abstractmethod
    def predict(self, model: nn.Module, split: EncodedSplit, batch_size: int) -> list[Any]:
        """One prediction per example of ``split``, in the form the metric takes; called
        under ``torch.no_grad()`` with the model in eval mode."""

    def metric_inputs(self, metric: Metric, split: EncodedSplit, predictions: list[Any]) -> tuple[list[Any], list[Any]]:
        """What ``metric`` compares, in the form its ``inputs`` name: by default the predictions
        and the split's references (a type whose predictions serve several metrics picks)."""
        return predictions, split.references

    def scores(self, metric: Metric, split: EncodedSplit, predictions: list[Any]) -> dict[str, float]:
        """The metric's whole result for a split; a type may add details (NIAH: per-cell accuracy)."""
        return metric.compute(*self.metric_inputs(metric, split, predictions))


def hidden_states(encoder: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Final hidden states (B, T, H) of the backbone for ids (B, T) and a 0/1 padding mask (B, T)."""
    return encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


TASK_TYPES: Registry[type[TaskType]] = Registry("task type")


def register(name: str) -> Callable[[type[TaskType]], type[TaskType]]:
    """Class decorator: make a TaskType subclass the implementation of ``TaskSpec.type == name``."""

    def decorate(cls: type[TaskType]) -> type[TaskType]:
        cls.name = name
        return TASK_TYPES.add(name, cls, cls.__module__)

    return decorate


def registered_task_types() -> list[str]:
    return sorted(TASK_TYPES)


def get_task_type(name: str) -> type[TaskType]:
    return TASK_TYPES[name]


def labelled_positions(examples: Sequence[Any]) -> int:
    """Positions of ``examples`` whose label is not IGNORE: the terms a per-token loss averages over."""
    return sum(sum(1 for label in example.labels if label != IGNORE) for example in examples)
