"""BERT's masked language modelling plus next-sentence prediction (Devlin et al., 2019).

BERT packs two segments A and B into one input and trains, beside MLM, a binary
classifier for "B follows A in the corpus" (50% of examples) versus "B is a random
segment" (the rest). RoBERTa (Liu et al., 2019) found that dropping NSP matches or
improves downstream results; it is here so that finding can be checked on this backbone.

Layout, of exactly the block length ``T`` (the batch never needs padding)::

    block[: T//2 - 1]  </s>  source[T//2 :]
    \\____ segment A ____/     \\_ segment B _/

``source`` is the block itself (is_next = 1) or, with probability ``1 - next_probability``,
the partner block: another stretch of the corpus from the same batch (is_next = 0). The
``</s>`` separator replaces A's last token, so A and B are aligned with where they sat in
their blocks. BERT's masking then runs over the whole input; being special, the separator
is never selected. There is no ``[CLS]``: the loss pools the hidden states instead
(``pipeline.pretrain.losses.next_sentence``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pipeline.example import Example
from pipeline.objectives.base import MASKED_SECTION, register
from pipeline.objectives.mlm import MLMParams, select_and_corrupt
from pipeline.tokenization.special_tokens import SpecialIds


@dataclass(frozen=True)
class NSPParams(MLMParams):
    next_probability: float = 0.5  # share of examples whose segment B is the true continuation

    def expected_loss_fraction(self, block_length: int) -> float:
        # The separator takes one of the T positions and is never masked.
        return self.mask_ratio * (block_length - 1) / block_length

    def validate(self) -> None:
        super().validate()
        if not 0 <= self.next_probability <= 1:
            raise ValueError(f"next_probability {self.next_probability} must be in [0, 1]")


@register(
    "nsp", NSPParams, attention="bidirectional", label="MLM+NSP", section=MASKED_SECTION, loss="masked_lm_next_sentence", uses_partner=True
)
def nsp(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: NSPParams, partner: np.ndarray) -> Example:
    # Decide first, with one draw, so the masking draws that follow are the same either way.
    is_next = rng.random() < params.next_probability
    half = len(block) // 2
    pair = np.concatenate([block[:half], (block if is_next else partner)[half:]]).astype(np.int64)  # (T,)
    pair[half - 1] = special.eos
    example = select_and_corrupt(pair, rng, special, params)
    return replace(example, extras={"is_next": np.int64(is_next)})
