"""T5 span corruption on a decoder-only backbone.

Raffel et al. 2020 (T5, arXiv 1910.10683, section 3.3): ``noise_density`` of a block's
tokens, grouped in spans of mean length ``mean_noise_span_length``, are dropped from the
input; each dropped span leaves one sentinel (``<extra_id_0>``, ``<extra_id_1>``, ... in
order, i.e. counting down in id as in T5). The target lists, per span, its sentinel and
the dropped tokens. Both end with ``</s>``. For a block ``N1 X1 N2 X2 ... Nn Xn`` (noise
spans ``X``; T5 always starts with non-noise and ends with noise)::

    inputs  = N1 S0 N2 S1 ... Nn S(n-1) </s>        length T - noise + n + 1
    targets = S0 X1 S1 X2 ... S(n-1) Xn </s>         length noise + n + 1

On a decoder-only backbone the example is ``inputs + targets`` with prefix attention over
the inputs and loss on the targets (:func:`pipeline.objectives.prefix_lm.prefix_example`).
The number of noise tokens and spans depends only on ``T``, so every example of a run has
the same length, ``T + 2n + 2``, and the same number of labelled positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.example import Example
from pipeline.objectives.base import DENOISING_SECTION, register
from pipeline.objectives.prefix_lm import prefix_example
from pipeline.tokenization.special_tokens import SpecialIds


def t5_input_and_target_lengths(inputs_length: int, noise_density: float, mean_noise_span_length: float) -> tuple[int, int]:
    """(raw tokens to corrupt, targets length) giving exactly ``inputs_length`` corrupted inputs.

    transformers' ``compute_input_and_target_lengths`` (examples/flax/language-modeling/
    run_t5_mlm_flax.py), itself T5's ``random_spans_helper``: e.g. 128 -> (141, 29) and
    512 -> (568, 114) at density 0.15, mean span 3. Like them it counts noise tokens and
    spans without the degeneracy clips of :func:`noise_span_counts`; the two agree whenever
    round(length * density) is between 1 and length - 1 and makes at least one span.
    """

    def corrupted_lengths(tokens_length: int) -> tuple[int, int]:
        num_noise_tokens = int(round(tokens_length * noise_density))
        num_noise_spans = int(round(num_noise_tokens / mean_noise_span_length))
        # inputs: the non-noise tokens, a sentinel per span, </s>; targets: the noise tokens, a sentinel per span, </s>
        return tokens_length - num_noise_tokens + num_noise_spans + 1, num_noise_tokens + num_noise_spans + 1

    tokens_length = inputs_length
    while corrupted_lengths(tokens_length + 1)[0] <= inputs_length:
        tokens_length += 1
    _, targets_length = corrupted_lengths(tokens_length)
    # T5's own adjustment: at density 0.5 keep the targets no longer than the (round) input length.
    if noise_density == 0.5 and targets_length > inputs_length:
        tokens_length -= 1
        targets_length -= 1
    return tokens_length, targets_length


def noise_span_counts(length: int, noise_density: float, mean_noise_span_length: float) -> tuple[int, int]:
    """(noise tokens, noise spans) of T5's ``random_spans_noise_mask`` over ``length`` tokens.

    round(length * density) clipped to [1, length - 1], and max(1, round(noise / mean span))
    spans (numpy rounds half to even, as T5 does). Raises ValueError when there are more
    spans than non-noise tokens to separate them.
    """
    num_noise_tokens = min(max(int(np.round(length * noise_density)), 1), length - 1)
    num_noise_spans = max(int(np.round(num_noise_tokens / mean_noise_span_length)), 1)
    if num_noise_spans > length - num_noise_tokens:
        raise ValueError(
            f"noise_density={noise_density}, mean_noise_span_length={mean_noise_span_length} make {num_noise_spans} noise spans "
            f"in {length} tokens but leave only {length - num_noise_tokens} non-noise tokens to separate them"
        )
    return num_noise_tokens, num_noise_spans


def _random_segmentation(num_items: int, num_segments: int, rng: np.random.Generator) -> np.ndarray:
    """Lengths (num_segments,) of a uniformly random split of num_items into non-empty segments."""
    # T5 shuffles "segment starts after item i" flags, num_segments - 1 of the num_items - 1 gaps set;
    # comparing a random permutation with num_segments - 1 sets a uniformly random subset of them.
    first_in_segment = np.concatenate([[False], rng.permutation(num_items - 1) < num_segments - 1])
    return np.bincount(np.cumsum(first_in_segment), minlength=num_segments)


def random_spans_noise_mask(length: int, noise_density: float, mean_noise_span_length: float, rng: np.random.Generator) -> np.ndarray:
    """(length,) bool, True on noise: T5's ``random_spans_noise_mask`` drawn from ``rng``.

    n noise spans and n non-noise spans alternate, non-noise first; the noise and the
    non-noise tokens are each split into n non-empty spans uniformly at random.
    """
    num_noise_tokens, num_noise_spans = noise_span_counts(length, noise_density, mean_noise_span_length)
    noise_lengths = _random_segmentation(num_noise_tokens, num_noise_spans, rng)
    nonnoise_lengths = _random_segmentation(length - num_noise_tokens, num_noise_spans, rng)
    span_starts = np.cumsum(np.stack([nonnoise_lengths, noise_lengths], axis=1).reshape(-1))[:-1]
    span_start_indicator = np.zeros(length, dtype=np.int64)
    span_start_indicator[span_starts] = 1
    return np.cumsum(span_start_indicator) % 2 == 1  # spans 1, 3, 5, ... are noise


def replace_spans_with_sentinels(tokens: np.ndarray, drop: np.ndarray, sentinels: np.ndarray) -> np.ndarray:
    """Each maximal run of ``drop`` becomes one token, sentinels[k] for the k-th run; the rest is kept.

    tokens (T,), drop (T,) bool -> (T - drop.sum() + number of runs,).
    """
    run_start = drop & ~np.concatenate([[False], drop[:-1]])
    replaced = tokens.copy()
    replaced[run_start] = sentinels[: int(run_start.sum())]
    return replaced[~drop | run_start]


def require_sentinels(needed: int, special: SpecialIds, setting: str) -> None:
    """A clear error, before any example is made, when the tokenizer has too few sentinels."""
    if needed > len(special.sentinels):
        raise ValueError(
            f"{setting} needs {needed} sentinel tokens but the tokenizer has {len(special.sentinels)}: "
            f"raise tokenizer.num_sentinel_tokens to at least {needed}"
        )


def corrupt_spans(
    block: np.ndarray, rng: np.random.Generator, special: SpecialIds, noise_density: float, mean_noise_span_length: float
) -> tuple[np.ndarray, np.ndarray]:
    """block (T,) -> (corrupted inputs, targets), both ending with </s> (see the module docstring)."""
    noise = random_spans_noise_mask(len(block), noise_density, mean_noise_span_length, rng)
    sentinels = np.asarray(special.sentinels, dtype=np.int64)
    eos = np.array([special.eos], dtype=np.int64)
    block = block.astype(np.int64)
    inputs = np.concatenate([replace_spans_with_sentinels(block, noise, sentinels), eos])
    # The targets drop the non-noise spans instead; non-noise span k precedes noise span k, so it takes sentinel k too.
    targets = np.concatenate([replace_spans_with_sentinels(block, ~noise, sentinels), eos])
    return inputs, targets


@dataclass(frozen=True)
class SpanCorruptionParams:
    noise_density: float = 0.15
    mean_noise_span_length: float = 3.0

    def validate(self) -> None:
        if not 0 < self.noise_density < 1:
            raise ValueError(f"noise_density {self.noise_density} must be in (0, 1)")
        if self.mean_noise_span_length < 1:
            raise ValueError(f"mean_noise_span_length {self.mean_noise_span_length} must be >= 1")

    def sentinels_needed(self, block_length: int) -> int:
        return noise_span_counts(block_length, self.noise_density, self.mean_noise_span_length)[1]

    def example_length(self, block_length: int) -> int:
        # inputs (T - noise + n + 1) + targets (noise + n + 1)
        return block_length + 2 * self.sentinels_needed(block_length) + 2

    def expected_loss_positions(self, block_length: int) -> float:
        # Every target token is labelled, and their number does not depend on the draw.
        num_noise_tokens, num_noise_spans = noise_span_counts(block_length, self.noise_density, self.mean_noise_span_length)
        return num_noise_tokens + num_noise_spans + 1

    def expected_loss_fraction(self, block_length: int) -> float:
        return self.expected_loss_positions(block_length) / self.example_length(block_length)


@register("span_corruption", SpanCorruptionParams, attention="prefix", label="span corruption", section=DENOISING_SECTION)
def span_corruption(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: SpanCorruptionParams) -> Example:
    # block (T,) -> example (P + Q,) = (T + 2n + 2,), prefix_length P.
    setting = (
        f"span_corruption (noise_density={params.noise_density}, mean_noise_span_length={params.mean_noise_span_length}, T={len(block)})"
    )
    require_sentinels(params.sentinels_needed(len(block)), special, setting)
    return prefix_example(*corrupt_spans(block, rng, special, params.noise_density, params.mean_noise_span_length))
