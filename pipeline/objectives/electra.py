"""ELECTRA replaced-token detection (Clark et al., 2020): the generator's input.

ELECTRA trains two encoders together: a small generator, by MLM, and the discriminator
(the backbone that is kept), which sees the input with every masked position filled by
a token sampled from the generator and predicts, at every position, whether the token
was replaced. The example is therefore the generator's MLM example: ``mask_ratio`` of
the text positions become ``<mask>`` (all of them: the generator's input needs no
random or kept tokens), labelled with the original token. The sampling happens in the
loss (``pipeline.pretrain.losses.replaced_token_detection``), from the generator's
logits, with a seed drawn here so it is as reproducible and resumable as the mask.

The labelled share is the generator's (``mask_ratio``); the discriminator's loss covers
every non-padding position and does not show in the labels.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pipeline.example import Example
from pipeline.objectives.base import MASKED_SECTION, register
from pipeline.objectives.mlm import MLMParams, select_and_corrupt
from pipeline.tokenization.special_tokens import SpecialIds

SAMPLING_SEED_BOUND = 2**62  # exclusive upper bound of the per-example sampling seed (fits int64)


@dataclass(frozen=True)
class ElectraParams:
    mask_ratio: float = 0.15
    generator_width_fraction: float = 0.25  # generator hidden size / discriminator hidden size (paper: 1/4 to 1/3)
    discriminator_weight: float = 50.0  # lambda in  generator MLM loss + lambda * discriminator loss

    def expected_loss_fraction(self, block_length: int) -> float:
        return self.mask_ratio

    def validate(self) -> None:
        if not 0 < self.mask_ratio < 1:
            raise ValueError(f"mask_ratio {self.mask_ratio} must be in (0, 1)")
        if not 0 < self.generator_width_fraction <= 1:
            raise ValueError(f"generator_width_fraction {self.generator_width_fraction} must be in (0, 1]")
        if self.discriminator_weight <= 0:
            raise ValueError(f"discriminator_weight {self.discriminator_weight} must be > 0")

    @property
    def generator_masking(self) -> MLMParams:
        return MLMParams(mask_ratio=self.mask_ratio, mask_token_fraction=1.0, random_token_fraction=0.0)


@register("electra", ElectraParams, attention="bidirectional", label="ELECTRA", section=MASKED_SECTION, loss="replaced_token_detection")
def electra(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: ElectraParams) -> Example:
    example = select_and_corrupt(block, rng, special, params.generator_masking)
    return replace(example, extras={"sampling_seed": rng.integers(0, SAMPLING_SEED_BOUND)})
