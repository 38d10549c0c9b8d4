"""A batch of examples as tensors: what the backbone and every loss read.

Objectives (:mod:`pipeline.objectives`) make :class:`~pipeline.objectives.Example` s from
token blocks with numpy alone, so their registry imports without torch (the report and
the planner read it); this module stacks examples into a :class:`Batch` for the trainer,
the evaluation and fine-tuning, and pads lists of token ids (:func:`pad_batch`: fine-tuning's task
types and the zero-shot scores) on the device of the model that reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import nn

from pipeline.example import IGNORE, Attention, Example
from pipeline.tokenization.special_tokens import SpecialIds


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor  # (B, L) long, right-padded with <pad>
    labels: torch.Tensor  # (B, L) long, IGNORE where no loss (always on padding)
    attention: Attention
    padding_mask: torch.Tensor | None = None  # (B, L) long, 1 = real token; None when nothing is padded
    prefix_lengths: torch.Tensor | None = None  # (B,) long, for prefix attention
    segment_starts: torch.Tensor | None = None  # (B,) long: where each row's second sample starts (0: none); None: whole rows
    extras: Mapping[str, torch.Tensor] = field(default_factory=dict)  # each (B, ...) stacked from the examples

    def to(self, device: torch.device) -> "Batch":
        """This batch with every tensor on ``device`` (itself on the CPU).

        A batch is built on the CPU (:func:`collate`); copies go through pinned memory
        without blocking, so building the next batch overlaps the GPU's work on this one.
        """
        if device.type == "cpu":
            return self

        def move(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor.pin_memory().to(device, non_blocking=True)

        return dataclasses.replace(
            self,
            input_ids=move(self.input_ids),
            labels=move(self.labels),
            padding_mask=move(self.padding_mask),
            prefix_lengths=move(self.prefix_lengths),
            segment_starts=move(self.segment_starts),
            extras={key: move(value) for key, value in self.extras.items()},
        )

    @property
    def num_loss_positions(self) -> int:
        return int((self.labels != IGNORE).sum())

    @property
    def num_tokens(self) -> int:
        """Real (non-padding) input positions."""
        return self.input_ids.numel() if self.padding_mask is None else int(self.padding_mask.sum())


def collate(examples: Sequence[Example], attention: Attention, pad_id: int) -> Batch:
    """The examples right-padded into one batch, on the CPU; :meth:`Batch.to` moves it."""
    lengths = [len(e.input_ids) for e in examples]
    width = max(lengths)
    input_ids = np.full((len(examples), width), pad_id, dtype=np.int64)
    labels = np.full((len(examples), width), IGNORE, dtype=np.int64)
    for row, example in enumerate(examples):
        input_ids[row, : lengths[row]] = example.input_ids
        labels[row, : lengths[row]] = example.labels
    padding_mask = None
    if min(lengths) < width:
        padding_mask = torch.from_numpy((np.arange(width)[None, :] < np.array(lengths)[:, None]).astype(np.int64))
    prefix_lengths = torch.tensor([e.prefix_length for e in examples], dtype=torch.long, device="cpu") if attention == "prefix" else None
    extras = {key: torch.as_tensor(np.stack([np.asarray(e.extras[key]) for e in examples]), device="cpu") for key in examples[0].extras}
    starts = [e.segment_start for e in examples]
    segment_starts = torch.tensor(starts, dtype=torch.long, device="cpu") if any(starts) else None
    return Batch(torch.from_numpy(input_ids), torch.from_numpy(labels), attention, padding_mask, prefix_lengths, segment_starts, extras)


class MakesExamples(Protocol):
    """What :func:`make_batch` asks of an objective (:class:`pipeline.objectives.Objective`), named
    here so that the batch, and the model that reads it, depend on no objective's code."""

    attention: Attention

    def example(self, block: np.ndarray, rng: np.random.Generator, special: SpecialIds, partner: np.ndarray | None = None) -> Example: ...


def make_batch(
    objective: MakesExamples,
    blocks: Sequence[np.ndarray],
    rngs: Sequence[np.random.Generator],
    special: SpecialIds,
    rows: Sequence[int] | None = None,
    cuts: Sequence[int] | None = None,
) -> Batch:
    """Examples ``rows`` of ``blocks`` (every block by default), right-padded into a batch, row
    ``rows[k]`` drawing from ``rngs[k]``. Example i's partner is block i+1 of ``blocks``, whichever
    rows are taken: a different stretch of the corpus, fixed by the step, so a row is the same
    example in whichever process or micro-batch it lands (a pure function of blocks and rngs).
    ``cuts[k]``: row ``rows[k]`` is two samples meeting there (:mod:`pipeline.pretrain.samples`)."""
    rows = range(len(blocks)) if rows is None else rows
    examples = [objective.example(blocks[i], rng, special, blocks[(i + 1) % len(blocks)]) for i, rng in zip(rows, rngs)]
    if cuts is not None:
        examples = [example.split_at(cut, objective.attention) for example, cut in zip(examples, cuts)]
    return collate(examples, objective.attention, special.pad)


def pad_sequences(sequences: Sequence[Sequence[int]], value: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """Right-pad int sequences with ``value`` to the longest: (B, T) long on ``device``, filled in numpy
    on the CPU and copied there once (a GPU waits while the host pads)."""
    out = np.full((len(sequences), max(len(s) for s in sequences)), value, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        out[row, : len(sequence)] = sequence
    return torch.from_numpy(out).to(device)


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad to the longest sequence: ids (B, T) and attention mask (B, T) of 0/1, on ``device``.
    A scoring batch of 128 rows of 500-1,000 tokens pads in 1.8 ms, 6.9x faster than the row-by-row
    torch fill before it (bench/records/finetune-host-overhead.md)."""
    ids = pad_sequences(sequences, pad_id, device)
    lengths = np.array([len(s) for s in sequences])
    mask = np.arange(ids.shape[1])[None, :] < lengths[:, None]  # (B, T): True on each row's own tokens
    return ids, torch.from_numpy(mask.astype(np.int64)).to(device)


def device_of(model: nn.Module) -> torch.device:
    """Where ``model`` computes (its parameters' device): where the task types make its batches and labels."""
    return next(model.parameters()).device
