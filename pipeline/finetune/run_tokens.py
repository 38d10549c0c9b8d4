"""What one fine-tuning grid point of a task computes, in tokens: the cost estimate's unit
(:mod:`pipeline.workflow.cost`), measured on prepared rows (:mod:`pipeline.finetune.lengths`) or
taken from the dataset's published record (:mod:`pipeline.workflow.record_lengths`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RunTokens:
    """Tokens one grid point of a task computes: trained (forward and backward) and scored (forward)."""

    task: str
    train_rows: int | None  # None: a record that publishes no count (MS MARCO's pairs: a full budget's at least)
    steps: int
    mean_tokens: float  # per training example, unpadded (a retrieval pair: query + document)
    train_tokens: float  # every step's padded tokens
    scored_tokens: float  # validation and test (and documents) of the task and those scored on its models
    source: Literal["measured", "record"] = "measured"  # its prepared rows, or its dataset's record
