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

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from pipeline import strict
from pipeline.errors import PipelineError
from pipeline.tokenization.special_tokens import SpecialIds

IGNORE = -100  # label of a position that carries no loss (torch cross_entropy's ignore_index)
# causal: position t sees 0..t. bidirectional: every position sees every position.
# prefix: positions < prefix_length see the whole prefix; later ones are causal (prefix LM, T5-style
# span corruption on a decoder-only backbone, UL2).
Attention = Literal["causal", "bidirectional", "prefix"]


@dataclass(frozen=True)
class Example:
    """One training example. ``labels[t]`` is the token position ``t`` must predict.

    ``input_ids`` may be longer or shorter than the block (span corruption appends its
    targets); :meth:`Objective.batch` right-pads a batch to its longest example.
    """

    input_ids: np.ndarray  # (L,) int64
    labels: np.ndarray  # (L,) int64, IGNORE where no loss
    prefix_length: int = 0  # used by prefix attention only
    extras: Mapping[str, Any] = field(default_factory=dict)  # per-example values a loss needs (e.g. NSP label)


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor  # (B, L) long, right-padded with <pad>
    labels: torch.Tensor  # (B, L) long, IGNORE where no loss (always on padding)
    attention: Attention
    padding_mask: torch.Tensor | None = None  # (B, L) long, 1 = real token; None when nothing is padded
    prefix_lengths: torch.Tensor | None = None  # (B,) long, for prefix attention
    extras: Mapping[str, torch.Tensor] = field(default_factory=dict)  # each (B, ...) stacked from the examples

    def to(self, device: torch.device) -> "Batch":
        """This batch with every tensor on ``device`` (itself on the CPU).

        A batch is built on the CPU (:func:`collate`); copies go through pinned memory
        without blocking, so building the next batch overlaps the GPU's work on this one.
        """
        if device.type == "cpu":
            return self

        def move(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor.pin_memory().to(device, non_blocking=True)

        return dataclasses.replace(
            self,
            input_ids=move(self.input_ids),
            labels=move(self.labels),
            padding_mask=move(self.padding_mask),
            prefix_lengths=move(self.prefix_lengths),
            extras={key: move(value) for key, value in self.extras.items()},
        )

    @property
    def num_loss_positions(self) -> int:
        return int((self.labels != IGNORE).sum())

    @property
    def num_tokens(self) -> int:
        """Real (non-padding) input positions."""
        return self.input_ids.numel() if self.padding_mask is None else int(self.padding_mask.sum())


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

    def batch(self, blocks: Sequence[np.ndarray], rngs: Sequence[np.random.Generator], special: SpecialIds) -> Batch:
        # Example i's partner is block i+1 of the same batch: a different stretch of the corpus,
        # fixed by the step, so the batch stays a pure function of (blocks, rngs).
        examples = [self.example(b, r, special, blocks[(i + 1) % len(blocks)]) for i, (b, r) in enumerate(zip(blocks, rngs))]
        return collate(examples, self.attention, special.pad)


def collate(examples: Sequence[Example], attention: Attention, pad_id: int) -> Batch:
    """The examples right-padded into one batch, on the CPU whatever the default device
    (a GPU fine-tuning job sets one); :meth:`Batch.to` moves it."""
    lengths = [len(e.input_ids) for e in examples]
    width = max(lengths)
    input_ids = np.full((len(examples), width), pad_id, dtype=np.int64)
    labels = np.full((len(examples), width), IGNORE, dtype=np.int64)
    for row, example in enumerate(examples):
        input_ids[row, : lengths[row]] = example.input_ids
        labels[row, : lengths[row]] = example.labels
    padding_mask = None
    if min(lengths) < width:
        padding_mask = torch.from_numpy((np.arange(width)[None, :] < np.array(lengths)[:, None]).astype(np.int64))
    prefix_lengths = torch.tensor([e.prefix_length for e in examples], dtype=torch.long, device="cpu") if attention == "prefix" else None
    extras = {key: torch.as_tensor(np.stack([np.asarray(e.extras[key]) for e in examples]), device="cpu") for key in examples[0].extras}
    return Batch(torch.from_numpy(input_ids), torch.from_numpy(labels), attention, padding_mask, prefix_lengths, extras)


@dataclass(frozen=True)
class _Registered:
    params_type: type
    attention: Attention
    loss: str
    uses_partner: bool
    fn: ObjectiveFn


_REGISTRY: dict[str, _Registered] = {}


def register(
    kind: str, params_type: type, attention: Attention, loss: str = "language_model", uses_partner: bool = False
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
        if kind in _REGISTRY:
            raise ValueError(f"objective {kind!r} registered twice")
        _REGISTRY[kind] = _Registered(params_type, attention, loss, uses_partner, fn)
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
    return Objective(kind, entry.attention, entry.loss, params, entry.fn, entry.uses_partner)


def example_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The RNG of example ``index`` of optimizer step ``step``: independent of everything else."""
    return np.random.default_rng([seed, step, index])
