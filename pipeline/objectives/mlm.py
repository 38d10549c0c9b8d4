"""Masked language modelling (BERT), with the study's higher masking ratios.

Each non-special position is selected with probability ``mask_ratio``; of the selected,
``mask_token_fraction`` become ``<mask>``, ``random_token_fraction`` a random text token,
and the rest stay unchanged (BERT's 80/10/10 by default; 1/0/0 is Optimus' 100% mask).
Loss is on selected positions only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.example import IGNORE, Example
from pipeline.objectives.base import MASKED_SECTION, register
from pipeline.tokenization.special_tokens import SpecialIds


@dataclass(frozen=True)
class MLMParams:
    mask_ratio: float = 0.15
    mask_token_fraction: float = 0.8
    random_token_fraction: float = 0.1

    def expected_loss_fraction(self, block_length: int) -> float:
        return self.mask_ratio

    def validate(self) -> None:
        if not 0 < self.mask_ratio < 1:
            raise ValueError(f"mask_ratio {self.mask_ratio} must be in (0, 1)")
        if self.mask_token_fraction < 0 or self.random_token_fraction < 0:
            raise ValueError("mask_token_fraction and random_token_fraction must be >= 0")
        if self.mask_token_fraction + self.random_token_fraction > 1:
            raise ValueError(
                f"mask_token_fraction + random_token_fraction = {self.mask_token_fraction + self.random_token_fraction} exceeds 1"
            )


def select_and_corrupt(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: MLMParams) -> Example:
    """The BERT corruption, shared by every objective that masks i.i.d. positions."""
    input_ids = block.astype(np.int64)
    # Draw all uniforms up front (fixed count per block) so the RNG stream, and thus
    # the mask, depends only on the block length, never on its contents.
    select_u, action_u = rng.random(input_ids.shape), rng.random(input_ids.shape)
    text = special.text_ids
    random_tokens = rng.integers(text.start, text.stop, size=input_ids.shape)
    selected = (select_u < params.mask_ratio) & (input_ids >= text.start) & (input_ids < text.stop)
    labels = np.where(selected, input_ids, IGNORE)
    to_mask = selected & (action_u < params.mask_token_fraction)
    to_random = selected & ~to_mask & (action_u < params.mask_token_fraction + params.random_token_fraction)
    corrupted = np.where(to_mask, special.mask, np.where(to_random, random_tokens, input_ids))
    return Example(input_ids=corrupted, labels=labels)


register("mlm", MLMParams, attention="bidirectional", label="MLM", section=MASKED_SECTION)(select_and_corrupt)
