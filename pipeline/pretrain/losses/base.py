"""The loss interface and its registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import nn
from transformers import PreTrainedModel

from pipeline.batch import Batch
from pipeline.kernels import DEFAULT_KERNELS
from pipeline.model.backbone import BackboneSpec, LmHead
from pipeline.objectives import Objective
from pipeline.registry import Registry


class PretrainingLoss(nn.Module):
    """``loss(model, batch) -> scalar``; subclasses may hold extra trainable modules.

    Built from the backbone's spec, the objective (its parameters) and the run's seed,
    which fixes the initial weights of any extra module.
    """

    # Whether training with this loss trains the backbone's LM head, so that the
    # masked-token / next-token yardstick read through that head means something.
    # False for ELECTRA, whose exported backbone is a discriminator with an untrained LM head.
    measures_language_model: bool = True
    # What such a loss measures on held-out blocks instead, by name (own_evaluation computes it); None: nothing.
    own_yardstick_name: str | None = None
    # How the LM head and its loss compute (ComputeSpec.head: dense, or a sparse head); set by build_loss.
    head: LmHead = DEFAULT_KERNELS["lm_head"]

    def __init__(self, backbone: BackboneSpec, objective: Objective, seed: int):
        super().__init__()

    def forward(self, model: PreTrainedModel, batch: Batch) -> torch.Tensor:
        raise NotImplementedError

    def own_evaluation(self, model: PreTrainedModel, batches: Iterable[Batch]) -> tuple[float, float | None]:
        """In one pass over the held-out ``batches`` (of this loss's objective): the held-out loss, weighted as
        :func:`~pipeline.pretrain.evaluation.objective_loss` weighs it, and ``own_yardstick_name``'s value (None: not
        measurable). One pass, because a loss with a yardstick of its own computes both from the same forward passes."""
        raise NotImplementedError


LOSSES: Registry[type[PretrainingLoss]] = Registry("loss")


def register_loss(name: str) -> Callable[[type[PretrainingLoss]], type[PretrainingLoss]]:
    def decorate(cls: type[PretrainingLoss]) -> type[PretrainingLoss]:
        return LOSSES.add(name, cls, cls.__module__)

    return decorate


def build_loss(objective: Objective, backbone: BackboneSpec, seed: int, head: LmHead = DEFAULT_KERNELS["lm_head"]) -> PretrainingLoss:
    loss = LOSSES[objective.loss](backbone, objective, seed)  # an unknown name: one line listing the known ones
    loss.head = head
    return loss
