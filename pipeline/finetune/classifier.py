"""Sequence classification head of the study: mean pooling over tokens, then linear + CE."""

from __future__ import annotations

import torch
from torch import nn


class MeanPoolClassifier(nn.Module):
    def __init__(self, encoder: nn.Module, hidden_size: int, num_labels: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden_size, num_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1): padding gets no weight
        pooled = (hidden * weights).sum(1) / weights.sum(1)  # (B, H)
        return self.head(pooled)  # (B, num_labels)
