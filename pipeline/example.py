"""One training example and the attention patterns: the types the objectives make, the model
reads and the task types share. A leaf (it imports nothing of the package), so that code using
them (the backbone, the batch, fine-tuning's task types) depends on no objective: an edit to
one objective reruns neither the initial weights nor another objective's runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

IGNORE = -100  # label of a position that carries no loss (torch cross_entropy's ignore_index)
# causal: position t sees 0..t. bidirectional: every position sees every position.
# prefix: positions < prefix_length see the whole prefix; later ones are causal (prefix LM, T5-style
# span corruption on a decoder-only backbone, UL2).
Attention = Literal["causal", "bidirectional", "prefix"]


@dataclass(frozen=True)
class Example:
    """One training example. ``labels[t]`` is the token position ``t`` must predict.

    ``input_ids`` may be longer or shorter than the block (span corruption appends its
    targets); :func:`pipeline.batch.collate` right-pads a batch to its longest example.
    """

    input_ids: np.ndarray  # (L,) int64
    labels: np.ndarray  # (L,) int64, IGNORE where no loss
    prefix_length: int = 0  # used by prefix attention only
    extras: Mapping[str, Any] = field(default_factory=dict)  # per-example values a loss needs (e.g. NSP label)
    segment_start: int = 0  # > 0: a second sample starts here, attending only within itself (pipeline.pretrain.samples)

    def split_at(self, cut: int, attention: Attention) -> Example:
        """This example as two samples meeting at ``cut``: under causal attention the first
        sample's last position, whose target is the second sample's first token, carries no label."""
        labels = self.labels.copy()
        if attention == "causal":
            labels[cut - 1] = IGNORE
        return dataclasses.replace(self, labels=labels, segment_start=cut)
