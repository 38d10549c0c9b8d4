"""Causal language modelling: every position predicts the next token of the block."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.example import IGNORE, Example
from pipeline.objectives.base import CAUSAL_SECTION, register
from pipeline.tokenization.special_tokens import SpecialIds


@dataclass(frozen=True)
class CLMParams:
    """Next-token prediction has no parameters."""

    def expected_loss_fraction(self, block_length: int) -> float:
        return (block_length - 1) / block_length


@register("clm", CLMParams, attention="causal", label="CLM", section=CAUSAL_SECTION)
def clm(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: CLMParams) -> Example:
    # block (T,) -> labels (T,): labels[t] = block[t+1]; the last position has no target,
    # so CLM carries loss on (T-1)/T of positions over exactly the tokens MLM sees.
    input_ids = block.astype(np.int64)
    labels = np.full_like(input_ids, IGNORE)
    labels[:-1] = input_ids[1:]
    return Example(input_ids=input_ids, labels=labels)
