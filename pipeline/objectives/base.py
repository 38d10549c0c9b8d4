"""What an objective is: a pure function of a token block, an RNG and the special ids.

An objective turns one block of ``T`` corpus tokens into one :class:`Example` (model
inputs, aligned labels, attention kind). The trainer calls every objective the same
way, so it never asks which objective it is running. Randomness comes only from the
``np.random.Generator`` passed in, seeded per example by the caller, so a batch does not
depend on loader workers or on where a run was resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from pipeline import strict
from pipeline.errors import PipelineError
from pipeline.tokenization.special_tokens import SpecialIds

IGNORE = -100  # label of a position that carries no loss (torch cross_entropy's ignore_index)
Attention = Literal["causal", "bidirectional"]


@dataclass(frozen=True)
class Example:
    """One training example. ``labels[t]`` is the token position ``t`` must predict."""

    input_ids: np.ndarray  # (T,) int64
    labels: np.ndarray  # (T,) int64, IGNORE where no loss


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor  # (B, T) long
    labels: torch.Tensor  # (B, T) long, IGNORE where no loss
    attention: Attention

    @property
    def num_loss_positions(self) -> int:
        return int((self.labels != IGNORE).sum())


ObjectiveFn = Callable[[np.ndarray, np.random.Generator, SpecialIds, Any], Example]


@dataclass(frozen=True)
class Objective:
    """A registered objective bound to its parsed parameters."""

    kind: str
    attention: Attention
    params: Any
    fn: ObjectiveFn

    def example(self, block: np.ndarray, rng: np.random.Generator, special: SpecialIds) -> Example:
        return self.fn(block, rng, special, self.params)

    def batch(self, blocks: Sequence[np.ndarray], rngs: Sequence[np.random.Generator], special: SpecialIds) -> Batch:
        examples = [self.example(b, r, special) for b, r in zip(blocks, rngs)]
        return Batch(
            input_ids=torch.from_numpy(np.stack([e.input_ids for e in examples])),
            labels=torch.from_numpy(np.stack([e.labels for e in examples])),
            attention=self.attention,
        )


@dataclass(frozen=True)
class _Registered:
    params_type: type
    attention: Attention
    fn: ObjectiveFn


_REGISTRY: dict[str, _Registered] = {}


def register(kind: str, params_type: type, attention: Attention) -> Callable[[ObjectiveFn], ObjectiveFn]:
    """Decorator: make ``fn`` available as ``{kind: <kind>, ...params}`` in the config."""

    def decorate(fn: ObjectiveFn) -> ObjectiveFn:
        if kind in _REGISTRY:
            raise ValueError(f"objective {kind!r} registered twice")
        _REGISTRY[kind] = _Registered(params_type, attention, fn)
        return fn

    return decorate


def registered_kinds() -> list[str]:
    return sorted(_REGISTRY)


def parse_objective(spec: dict[str, Any], path: str = "objective") -> Objective:
    """``{kind: mlm, mask_ratio: 0.4}`` -> a bound :class:`Objective`, strictly checked."""
    if "kind" not in spec:
        raise PipelineError(f"{path}.kind: missing required key (registered: {', '.join(registered_kinds())})")
    kind = spec["kind"]
    if kind not in _REGISTRY:
        raise PipelineError(f"{path}.kind: unknown objective {kind!r} (registered: {', '.join(registered_kinds())})")
    entry = _REGISTRY[kind]
    params = strict.parse(entry.params_type, {k: v for k, v in spec.items() if k != "kind"}, path)
    return Objective(kind=kind, attention=entry.attention, params=params, fn=entry.fn)


def example_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The RNG of example ``index`` of optimizer step ``step``: independent of everything else."""
    return np.random.default_rng([seed, step, index])
