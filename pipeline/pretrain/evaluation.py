"""Held-out measurements taken during pretraining.

Two numbers per evaluation: the run's own objective on held-out blocks (its held-out
loss), and a yardstick shared by every run with the same attention pattern, so runs of
different objectives can be compared: next-token perplexity for causal models, and
masked-token accuracy under BERT's 15% masking for bidirectional ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from pipeline.batch import Batch, make_batch
from pipeline.example import IGNORE
from pipeline.model.backbone import encode, language_model_loss
from pipeline.objectives import Objective, parse_objective
from pipeline.tokenization.special_tokens import SpecialIds

# Held-out examples draw from their own RNG stream; training steps never reach this value.
HELDOUT_STREAM = 2**31


def heldout_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, HELDOUT_STREAM, index])


@dataclass(frozen=True)
class Yardstick:
    name: str
    objective: Objective


_NEXT_TOKEN = Yardstick("next_token_perplexity", parse_objective({"kind": "clm"}))
# A prefix-attention model is a causal model whose prefix may also look ahead, so it is
# measured like one (a zero-length prefix is plain causal attention).
YARDSTICKS = {
    "causal": _NEXT_TOKEN,
    "prefix": _NEXT_TOKEN,
    "bidirectional": Yardstick("masked_token_accuracy", parse_objective({"kind": "mlm", "mask_ratio": 0.15})),
}


@dataclass(frozen=True)
class HeldOut:
    """The held-out blocks and how every evaluation batches them: each block with its own fixed
    held-out RNG, ``batch_size`` blocks a batch, on ``device``."""

    blocks: list[np.ndarray]
    special: SpecialIds
    seed: int
    batch_size: int
    device: torch.device = torch.device("cpu")

    def batches(self, objective: Objective) -> Iterator[Batch]:
        for start in range(0, len(self.blocks), self.batch_size):
            chunk = self.blocks[start : start + self.batch_size]
            rngs = [heldout_rng(self.seed, start + i) for i in range(len(chunk))]
            yield make_batch(objective, chunk, rngs, self.special).to(self.device)


@torch.no_grad()
def objective_loss(loss_fn, model, objective: Objective, heldout: HeldOut) -> float:
    """Mean of ``loss_fn`` over held-out batches of ``objective``, weighted by their labelled positions."""
    total, count = 0.0, 0
    for batch in heldout.batches(objective):
        n = batch.num_loss_positions
        total += float(loss_fn(model, batch)) * n
        count += n
    return total / max(count, 1)


@torch.no_grad()
def yardstick(model, attention: str, heldout: HeldOut) -> tuple[str, float]:
    stick = YARDSTICKS[attention]
    if stick.name == "next_token_perplexity":
        return stick.name, math.exp(objective_loss(language_model_loss, model, stick.objective, heldout))
    correct, count = 0, 0
    for batch in heldout.batches(stick.objective):
        hidden = encode(model, batch)
        carries = batch.labels != IGNORE
        predicted = model.get_output_embeddings()(hidden[carries]).argmax(-1)
        correct += int((predicted == batch.labels[carries]).sum())
        count += int(carries.sum())
    return stick.name, 100.0 * correct / max(count, 1)
