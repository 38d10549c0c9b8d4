"""UL2: a mixture of denoisers on a decoder-only backbone (Tay et al. 2022, arXiv 2205.05131).

Each example is made by one denoiser drawn from seven (section 3.1.2), with probability
proportional to ``weights`` (uniform by default):

    R, regular spans   [NLU]  span corruption (mean span 3, rate 0.15), (8, 0.15)
    S, sequential      [S2S]  prefix LM
    X, extreme         [NLG]  span corruption (3, 0.5), (8, 0.5), (64, 0.15), (64, 0.5)

The denoisers are this package's ``span_corruption`` and ``prefix_lm``, unchanged; UL2
only prepends the mode token of the denoiser's family ("mode switching"), which lands in
the bidirectional prefix and carries no loss. Examples of different denoisers differ in
length (``T + 1`` for S, ``T + 2n + 3`` for n noise spans); the batch pads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.example import IGNORE, Example
from pipeline.objectives.base import DENOISING_SECTION, ObjectiveFn, register
from pipeline.objectives.prefix_lm import PrefixLMParams, prefix_lm
from pipeline.objectives.span_corruption import SpanCorruptionParams, require_sentinels, span_corruption
from pipeline.tokenization.special_tokens import NLG, NLU, S2S, SpecialIds


@dataclass(frozen=True)
class Denoiser:
    name: str
    mode: str  # the mode token prepended to its examples
    fn: ObjectiveFn
    params: SpanCorruptionParams | PrefixLMParams


DENOISERS = (
    Denoiser("R(3, 0.15)", NLU, span_corruption, SpanCorruptionParams(noise_density=0.15, mean_noise_span_length=3.0)),
    Denoiser("R(8, 0.15)", NLU, span_corruption, SpanCorruptionParams(noise_density=0.15, mean_noise_span_length=8.0)),
    Denoiser("S", S2S, prefix_lm, PrefixLMParams()),
    Denoiser("X(3, 0.5)", NLG, span_corruption, SpanCorruptionParams(noise_density=0.5, mean_noise_span_length=3.0)),
    Denoiser("X(8, 0.5)", NLG, span_corruption, SpanCorruptionParams(noise_density=0.5, mean_noise_span_length=8.0)),
    Denoiser("X(64, 0.15)", NLG, span_corruption, SpanCorruptionParams(noise_density=0.15, mean_noise_span_length=64.0)),
    Denoiser("X(64, 0.5)", NLG, span_corruption, SpanCorruptionParams(noise_density=0.5, mean_noise_span_length=64.0)),
)


def with_mode_token(example: Example, mode_id: int) -> Example:
    """Prepend ``mode_id`` to the example's prefix: (L,) -> (L+1,), no loss on it."""
    return Example(
        input_ids=np.concatenate([[mode_id], example.input_ids]).astype(np.int64),
        labels=np.concatenate([[IGNORE], example.labels]).astype(np.int64),
        prefix_length=example.prefix_length + 1,
    )


@dataclass(frozen=True)
class UL2Params:
    weights: tuple[float, ...] = (1.0,) * len(DENOISERS)  # sampling weights of DENOISERS, in that order

    def validate(self) -> None:
        if len(self.weights) != len(DENOISERS):
            raise ValueError(f"weights needs {len(DENOISERS)} values, for {', '.join(d.name for d in DENOISERS)}; got {len(self.weights)}")
        if min(self.weights) < 0 or sum(self.weights) <= 0:
            raise ValueError(f"weights {list(self.weights)} must be >= 0 with a positive sum")

    def probabilities(self) -> np.ndarray:
        weights = np.asarray(self.weights, dtype=np.float64)
        return weights / weights.sum()

    def sentinels_needed(self, block_length: int) -> int:
        """The most sentinels any denoiser that can be drawn needs for a block of this length."""
        return max(
            (
                d.params.sentinels_needed(block_length)
                for d, w in zip(DENOISERS, self.weights)
                if w > 0 and isinstance(d.params, SpanCorruptionParams)
            ),
            default=0,
        )

    def expected_loss_fraction(self, block_length: int) -> float:
        # E[labelled / example length] over the denoiser draw. Every denoiser's example length is
        # fixed by T (+1 for the mode token), so per denoiser it is E[labelled] / length.
        return float(
            sum(
                p * d.params.expected_loss_positions(block_length) / (d.params.example_length(block_length) + 1)
                for d, p in zip(DENOISERS, self.probabilities())
            )
        )


@register("ul2", UL2Params, attention="prefix", label="UL2", section=DENOISING_SECTION)
def ul2(block: np.ndarray, rng: np.random.Generator, special: SpecialIds, params: UL2Params) -> Example:
    # block (T,) -> [mode] + the drawn denoiser's example: (T + 1,) for S, (T + 2n + 3,) for span corruption.
    require_sentinels(params.sentinels_needed(len(block)), special, f"ul2 (weights={list(params.weights)}, T={len(block)})")
    denoiser = DENOISERS[int(rng.choice(len(DENOISERS), p=params.probabilities()))]
    mode_id = special.mode(denoiser.mode)
    return with_mode_token(denoiser.fn(block, rng, special, denoiser.params), mode_id)
