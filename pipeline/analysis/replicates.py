"""Pretraining replicates pooled into one estimate per arm (pipeline/config/replicates.py).

With one pretraining run per arm (``clm`` at ``tiny``), a score's interval is over
fine-tuning seeds and holds that run fixed: it says nothing about another pretraining seed.
With several (``clm``, ``clm_r1``, ``clm_r2``), the arm's estimate is the mean of its
replicates' seed means with a t-interval over replicates (df = replicates − 1). The
variance of replicate means contains both the pretraining-seed and the fine-tuning-seed
variance (each replicate mean carries its own fine-tuning noise), so this two-level
interval is the one a claim about the *objective* needs (MultiBERTs, Sellam et al. 2022).

A pooled row takes the arm's name as its run (``clm-tiny``, replicate 0's run), so every
table downstream reads it like a single run; ``pretraining_seeds`` says what its interval
is over.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd

from pipeline.analysis.stats import mean_interval
from pipeline.config.replicates import arm_of

PRETRAINING_SEEDS = "pretraining_seeds"


def arm_names(run_names: pd.Series) -> pd.Series:
    return run_names.map(lambda name: arm_of(name)[0])


def fine_tuned_arm(replicates: pd.DataFrame, confidence: float) -> dict[str, object]:
    """A fine-tuned arm's pooled columns: the mean of its replicates' ``test_mean`` with a
    t-interval over them, and the fewest fine-tuning seeds any of them has."""
    return {
        **mean_interval(replicates["test_mean"].to_numpy(), confidence).columns("test_"),
        **({"n_seeds": replicates["n_seeds"].min()} if "n_seeds" in replicates else {}),
    }


def pool_replicates(
    frame: pd.DataFrame, keys: Sequence[str], confidence: float, pooled: Callable[[pd.DataFrame, float], dict[str, object]] = fine_tuned_arm
) -> pd.DataFrame:
    """One row per (``keys``, size, arm): a run without replicates as it is, with
    ``pretraining_seeds`` 1; an arm with several, the columns ``pooled`` computes from them
    (by default :func:`fine_tuned_arm`), ``pretraining_seeds`` their number, and replicate
    0's other columns (a column that differs between replicates, such as the chosen learning
    rate, left blank)."""
    frame = frame.assign(**{PRETRAINING_SEEDS: 1})
    if frame.empty:
        return frame
    arms = arm_names(frame["run_name"])
    rows = []
    for _, replicates in frame.groupby([*keys, frame["size"], arms], sort=False, dropna=False):
        if len(replicates) == 1:
            rows.append(replicates.iloc[0].to_dict())
            continue
        first = replicates.iloc[0].to_dict()
        arm = arm_of(first["run_name"])[0]
        shared = {c: first[c] if replicates[c].nunique(dropna=False) == 1 else math.nan for c in replicates.columns}
        arm_columns = {"run": f"{arm}-{first['size']}", "run_name": arm, PRETRAINING_SEEDS: len(replicates)}
        rows.append({**shared, **arm_columns, **pooled(replicates, confidence)})
    return pd.DataFrame(rows, columns=frame.columns)
