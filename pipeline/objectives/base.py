"""What an objective is: a pure function of a token block, an RNG and the special ids.

An objective turns one block of ``T`` corpus tokens into one :class:`Example` (model
inputs, aligned labels, and for prefix attention the prefix length). The trainer calls
every objective the same way, so it never asks which objective it is running: what
differs between objectives is data (the example), the attention kind, and the name of
the loss that consumes the batch (``pipeline.pretrain.losses``). Randomness comes only
from the ``np.random.Generator`` passed in, seeded per example by the caller, so a batch
does not depend on loader workers, process count or where a run was resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline import strict
from pipeline.errors import PipelineError
from pipeline.example import Attention, Example
from pipeline.registry import Registry
from pipeline.tokenization.special_tokens import SpecialIds

ObjectiveFn = Callable[..., Example]  # (block, rng, special, params[, partner=...]) -> Example


@dataclass(frozen=True)
class Objective:
    """A registered objective bound to its parsed parameters."""

    kind: str
    attention: Attention
    loss: str  # name in pipeline.pretrain.losses.LOSSES
    params: Any
    fn: ObjectiveFn
    uses_partner: bool = False  # the example also reads another block of the same batch (NSP negatives)

    def example(self, block: np.ndarray, rng: np.random.Generator, special: SpecialIds, partner: np.ndarray | None = None) -> Example:
        if self.uses_partner:
            return self.fn(block, rng, special, self.params, partner=block if partner is None else partner)
        return self.fn(block, rng, special, self.params)


# The report sections objectives are shown in (pipeline/analysis/runs.py orders them).
CAUSAL_SECTION, MASKED_SECTION, DENOISING_SECTION = "Causal LM", "Masked LM", "Prefix LM and span denoisers"


@dataclass(frozen=True)
class Kind:
    """A registered objective kind: what the config, the trainer and the report know of it."""

    kind: str
    params_type: type  # its parameters' frozen dataclass, every field defaulted to the canonical setting
    attention: Attention
    loss: str  # name in pipeline.pretrain.losses.LOSSES
    uses_partner: bool
    fn: ObjectiveFn
    label: str  # how tables and verdicts name it, e.g. "MLM+NSP"
    section: str  # the report section its from-scratch runs are shown in


OBJECTIVES: Registry[Kind] = Registry("objective")
# The losses (pipeline.pretrain.losses) that own trainable parameters besides the backbone's: what
# the plan needs to know of them without importing torch (tests/test_objectives.py builds each).
LOSSES_WITH_PARAMETERS = frozenset({"masked_lm_next_sentence", "replaced_token_detection"})


def register(
    kind: str,
    params_type: type,
    attention: Attention,
    label: str,
    section: str,
    loss: str = "language_model",
    uses_partner: bool = False,
) -> Callable[[ObjectiveFn], ObjectiveFn]:
    """Decorator: make ``fn`` available as ``{kind: <kind>, ...params}`` in the config.

    ``params_type`` is a frozen dataclass whose fields all have defaults (the canonical
    setting of ``REFERENCE.md`` section 2) and which defines
    ``expected_loss_fraction(block_length) -> float``: the share of input positions that
    should carry loss, which the trainer's measured fraction is checked against.
    """
    if not callable(getattr(params_type, "expected_loss_fraction", None)):
        raise ValueError(f"objective {kind!r}: {params_type.__name__} must define expected_loss_fraction(block_length)")

    def decorate(fn: ObjectiveFn) -> ObjectiveFn:
        OBJECTIVES.add(kind, Kind(kind, params_type, attention, loss, uses_partner, fn, label, section), fn.__module__)
        return fn

    return decorate


def registered_kinds() -> list[str]:
    return sorted(OBJECTIVES)


def kind_of(kind: str) -> Kind:
    """A registered kind; PipelineError naming the registered ones for any other."""
    return OBJECTIVES[kind]


def parse_objective(spec: dict[str, Any], path: str = "objective") -> Objective:
    """``{kind: mlm, mask_ratio: 0.4}`` -> a bound :class:`Objective`, strictly checked."""
    if "kind" not in spec:
        raise PipelineError(f"{path}.kind: missing required key (registered: {', '.join(registered_kinds())})")
    kind = spec["kind"]
    if kind not in OBJECTIVES:
        raise PipelineError(f"{path}.kind: unknown objective {kind!r} (registered: {', '.join(registered_kinds())})")
    entry = OBJECTIVES[kind]
    params = strict.parse(entry.params_type, {k: v for k, v in spec.items() if k != "kind"}, path)
    return Objective(kind, entry.attention, entry.loss, params, entry.fn, entry.uses_partner)


def example_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The RNG of example ``index`` of optimizer step ``step``: independent of everything else."""
    return np.random.default_rng([seed, step, index])
