"""BERT's pretraining loss: masked LM + next-sentence prediction (Devlin et al., 2019).

``loss = MLM cross-entropy + NSP cross-entropy``, both means, as in BERT. The NSP
classifier is a linear layer (hidden -> 2) owned by this module; BERT feeds it the
``[CLS]`` state through a tanh pooler, but these inputs have no ``[CLS]`` (see
``pipeline.objectives.nsp``), so it reads the mean of the final hidden states over the
real tokens instead. The encoder runs once; the MLM head and the NSP head share its output.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel

from pipeline.batch import Batch
from pipeline.model.backbone import BackboneSpec, encode, labelled_loss
from pipeline.model.pooling import mean_pool
from pipeline.objectives import Objective
from pipeline.pretrain.losses.base import PretrainingLoss, register_loss


@register_loss("masked_lm_next_sentence")
class MaskedLMNextSentenceLoss(PretrainingLoss):
    def __init__(self, backbone: BackboneSpec, objective: Objective, seed: int):
        super().__init__(backbone, objective, seed)
        torch.manual_seed(seed)  # the head's initial weights, like the backbone's, are fixed by the seed
        self.next_sentence_head = nn.Linear(backbone.size.hidden_size, 2)

    def parts(self, model: PreTrainedModel, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(MLM loss, NSP loss), from one pass of the encoder."""
        hidden = encode(model, batch)  # (B, L, H)
        masked_lm = labelled_loss(model, hidden, batch.labels, self.head)
        scores = self.next_sentence_head(mean_pool(hidden, batch.padding_mask)).float()  # (B, 2)
        next_sentence = F.cross_entropy(scores, batch.extras["is_next"])
        return masked_lm, next_sentence

    def forward(self, model: PreTrainedModel, batch: Batch) -> torch.Tensor:
        masked_lm, next_sentence = self.parts(model, batch)
        return masked_lm + next_sentence
