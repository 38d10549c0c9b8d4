"""Prefix language modelling on a decoder-only backbone.

Raffel et al. 2020 (T5, arXiv 1910.10683, section 3.2.1): a block is cut at a random
point; the part before the cut (the prefix) is read with bidirectional attention and the
rest is predicted left to right, attending to the whole prefix. Loss is on the suffix
only. The cut ``s`` is drawn uniformly from the integers ``lo..hi``, where
``lo = max(1, ceil(min_prefix_fraction * T))`` and ``hi = min(T - 1, floor(max_prefix_fraction * T))``;
the defaults give ``1..T-1``, so the prefix and the suffix are never empty.

:func:`prefix_example` is the decoder-only layout shared with span corruption and UL2:
a bidirectional prefix followed by teacher-forced targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.example import IGNORE, Example
from pipeline.objectives.base import DENOISING_SECTION, register
from pipeline.tokenization.special_tokens import SpecialIds


def prefix_example(prefix: np.ndarray, targets: np.ndarray) -> Example:
    """``concat(prefix, targets)`` with prefix attention over ``prefix`` and loss on ``targets``.

    prefix (P,), targets (Q,) -> input_ids, labels (P+Q,). The last prefix position
    predicts targets[0] and target position j predicts targets[j+1], so labels[P-1:-1] =
    targets: Q labelled positions; the final position has nothing left to predict.
    """
    input_ids = np.concatenate([prefix, targets]).astype(np.int64)
    labels = np.full_like(input_ids, IGNORE)
    labels[len(prefix) - 1 : -1] = targets
    return Example(input_ids=input_ids, labels=labels, prefix_length=len(prefix))


@dataclass(frozen=True)
class PrefixLMParams:
    min_prefix_fraction: float = 0.0  # of the block; the prefix always keeps at least one token
    max_prefix_fraction: float = 1.0  # of the block; the suffix always keeps at least one token

    def validate(self) -> None:
        if not 0 <= self.min_prefix_fraction <= self.max_prefix_fraction <= 1:
            raise ValueError(
                f"need 0 <= min_prefix_fraction <= max_prefix_fraction <= 1, got {self.min_prefix_fraction}, {self.max_prefix_fraction}"
            )

    def split_range(self, block_length: int) -> tuple[int, int]:
        """(lo, hi): the prefix length is uniform on lo..hi inclusive."""
        # round() first so that e.g. 0.3 * 10 = 3.0000000000000004 is 3, not 4.
        lo = max(1, math.ceil(round(self.min_prefix_fraction * block_length, 9)))
        hi = min(block_length - 1, math.floor(round(self.max_prefix_fraction * block_length, 9)))
        if lo > hi:
            raise ValueError(
                f"prefix_lm: no prefix length between {self.min_prefix_fraction} and {self.max_prefix_fraction} "
                f"of a {block_length}-token block leaves both prefix and suffix non-empty"
            )
        return lo, hi

    def expected_loss_positions(self, block_length: int) -> float:
        # The suffix of a cut at s has T - s tokens, all labelled; s is uniform on lo..hi.
        lo, hi = self.split_range(block_length)
        return block_length - (lo + hi) / 2

    def example_length(self, block_length: int) -> int:
        return block_length

    def expected_loss_fraction(self, block_length: int) -> float:
        return self.expected_loss_positions(block_length) / self.example_length(block_length)


@register("prefix_lm", PrefixLMParams, attention="prefix", label="prefix LM", section=DENOISING_SECTION)
def prefix_lm(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: PrefixLMParams) -> Example:
    # block (T,) -> one example of length T: prefix block[:s], targets block[s:].
    lo, hi = params.split_range(len(block))
    split = int(rng.integers(lo, hi + 1))
    return prefix_example(block[:split], block[split:])
