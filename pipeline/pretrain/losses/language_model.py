"""Token prediction through the backbone's LM head: CLM, MLM, MEAP, prefix LM, span corruption, UL2."""

from __future__ import annotations

import torch
from transformers import PreTrainedModel

from pipeline.batch import Batch
from pipeline.model.backbone import language_model_loss
from pipeline.pretrain.losses.base import PretrainingLoss, register_loss


@register_loss("language_model")
class LanguageModelLoss(PretrainingLoss):
    """Mean cross-entropy over labelled positions; no parameters beyond the backbone."""

    def forward(self, model: PreTrainedModel, batch: Batch) -> torch.Tensor:
        return language_model_loss(model, batch, self.head)
