"""What the aggregate stage read and validated (:mod:`pipeline.analysis.inputs`), from which every
result table is built (:mod:`.table_builds`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from pipeline.analysis.claims.spec import Claim


@dataclass(frozen=True)
class Sources:
    grid: pd.DataFrame  # final models' fine-tuning grid, one row per (task, run, LR, seed)
    outside_grid: pd.DataFrame  # the same for outside models
    curve_grid: pd.DataFrame  # the same for learning-curve checkpoints, with pretraining_step
    pretraining: pd.DataFrame  # one row per summary.json
    tasks: pd.DataFrame  # one row per task stats.json
    bag_of_words: pd.DataFrame  # the lexical reference per task
    pair_outcomes: pd.DataFrame  # one row per (model, method, minimal pair)
    confidence: float
    objective_params: Mapping[str, Mapping[str, Any]]  # each run's objective parameters, as summary.json records them
    claims: Sequence[Claim]
    measured_by: str = "this run"  # whose runs these are (Results.measured_by)
    # task -> how its grids were fine-tuned, as scores.json records it (study_protocol.PROTOCOL_KEYS)
    protocols: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
