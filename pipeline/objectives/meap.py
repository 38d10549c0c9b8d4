"""MEAP: mask-enhanced autoregressive prediction (Zhuang et al. 2025, arXiv 2502.07490).

Next-token prediction in which ``mask_ratio`` of the input positions (non-special ones
only, each chosen independently) are replaced by ``<mask>``. The model stays causal and
every position still predicts the clean next token of the block, exactly as in CLM, so
MEAP costs nothing extra; the masks only make the context harder to read. Labels come
from the clean block: a masked position t+1 still gives position t its true target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.example import Example
from pipeline.objectives.base import CAUSAL_SECTION, register
from pipeline.objectives.clm import CLMParams, clm
from pipeline.objectives.mlm import MLMParams, select_and_corrupt
from pipeline.tokenization.special_tokens import SpecialIds


@dataclass(frozen=True)
class MEAPParams:
    mask_ratio: float = 0.15

    def validate(self) -> None:
        if not 0 < self.mask_ratio < 1:
            raise ValueError(f"mask_ratio {self.mask_ratio} must be in (0, 1)")

    def expected_loss_fraction(self, block_length: int) -> float:
        return CLMParams().expected_loss_fraction(block_length)  # every position but the last


@register("meap", MEAPParams, attention="causal", label="MEAP", section=CAUSAL_SECTION)
def meap(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: MEAPParams) -> Example:
    # block (T,) -> input_ids (T,) with <mask> at the selected positions, labels (T,) = CLM's on the clean block.
    # The input corruption is MLM's selection with every selected position set to <mask>.
    masking = MLMParams(mask_ratio=params.mask_ratio, mask_token_fraction=1.0, random_token_fraction=0.0)
    masked = select_and_corrupt(block, rng, special, masking)
    return Example(input_ids=masked.input_ids, labels=clm(block, rng, special, CLMParams()).labels)
